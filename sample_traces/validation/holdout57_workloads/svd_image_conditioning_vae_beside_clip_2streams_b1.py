"""Stable Video Diffusion's image conditioning (Blattmann et al., 2023) for one conditioning frame,
its two encoders side by side: the VAE encoder on one side stream and the CLIP ViT-H/14 image
encoder on the other (fifty-seventh hold-out: two concurrent chains of unequal kind under fp16, on
one side 27 cuDNN convolutions of a 256 x 448 frame, mostly 3 x 3 at 128 to 512 channels, the
largest some 34 GFLOP (some 460 GFLOP in all), GroupNorms and SiLUs over fp16 maps of up to 29 MB
and one single-head attention over 1792 tokens of 512; on the other a ViT-H of 32 layers over 257
tokens, 13 to 14 kernels a layer, GEMMs of 0.8 to 3.4 GFLOP (some 330 GFLOP in all): convolution-
and memory-bound work beside launch- and GEMM-bound work). Laid out as diffusers'
``StableVideoDiffusionPipeline`` (``stabilityai/stable-video-diffusion-img2vid-xt``) at a reduced
256 x 448 frame (its 576 x 1024 at some 0.44 of the size): side stream 1, ``_encode_vae_image``: the
frame in [-1, 1] plus the noise augmentation (``noise_aug_strength`` 0.02 times a given Gaussian),
through ``AutoencoderKLTemporalDecoder``'s ``Encoder`` (the SD VAE encoder: ``conv_in`` 3 -> 128,
four ``DownEncoderBlock2D`` of two ``ResnetBlock2D`` each (GroupNorm 32, eps 1e-6, SiLU, 3 x 3
convolution, twice, a 1 x 1 shortcut where the width changes) at widths 128, 256, 512, 512, the
first three followed by ``Downsample2D`` (pad right and bottom by one, 3 x 3 convolution stride 2);
the mid block, a ResNet block, the single-head ``Attention`` (GroupNorm, q / k / v ``Linear(512,
512)``, ``F.scaled_dot_product_attention``, the output projection, the residual) and a ResNet block;
GroupNorm, SiLU, ``conv_out`` 512 -> 8), ``quant_conv`` absent (the temporal VAE has none), the
latent distribution's mode (its mean, 4 channels), repeated over the 14 frames of the video as the
pipeline does (1, 14, 4, 32, 56). Side stream 2, ``_encode_image``: the frame mapped to [0, 1],
resized to 224 x 224 (bicubic with antialiasing, the pipeline's ``_resize_with_antialiasing`` as
torch's), normalized with CLIP's mean and std, through ``CLIPVisionModelWithProjection`` (ViT-H/14:
``Conv2d(3, 1280, 14, stride 14, bias=False)``, the class token and 257 learned positions,
``pre_layrnorm``, 32 pre-norm layers of d 1280, 16 heads, MLP 5120 with GELU, q / k / v / out
``Linear(1280, 1280)``, ``post_layernorm`` on the class token, ``visual_projection`` ``Linear(1280,
1024, bias=False)``), the image embeddings (1, 1, 1024). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture). fp16
on a GPU, weights included (``torch_dtype=torch.float16``, ``variant="fp16"``; fp32 on a CPU), eval,
no gradients, random weights (torch's defaults). Inputs (two input sets): the frame (1, 3, 256, 448)
uniform in [-1, 1] and the noise (1, 3, 256, 448), Gaussian. Returns the image latents (1, 14, 4,
32, 56) and the image embeddings (1, 1, 1024).

    traceinspect profile svd_image_conditioning_vae_beside_clip_2streams_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

NOISE_AUG, FRAMES, LATENT = 0.02, 14, 4
CLIP_MEAN, CLIP_STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)


class ResnetBlock2D(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(groups, cin, 1e-6), nn.GroupNorm(groups, cout, 1e-6)
        self.conv1, self.conv2 = nn.Conv2d(cin, cout, 3, padding=1), nn.Conv2d(cout, cout, 3, 1, 1)
        self.shortcut = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return self.shortcut(x) + h


class Downsample2D(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, stride=2)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(F.pad(x, (0, 1, 0, 1)))


class VAEAttention(nn.Module):
    def __init__(self, c: int, groups: int) -> None:
        super().__init__()
        self.group_norm = nn.GroupNorm(groups, c, 1e-6)
        self.to_q, self.to_k, self.to_v = nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)
        self.to_out = nn.Linear(c, c)

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        hs = self.group_norm(x).view(b, c, h * w).transpose(1, 2)
        q, k, v = (p(hs)[:, None] for p in (self.to_q, self.to_k, self.to_v))
        out = self.to_out(F.scaled_dot_product_attention(q, k, v)[:, 0])
        return x + out.transpose(1, 2).reshape(b, c, h, w)


class VAEEncoder(nn.Module):
    def __init__(self, widths: tuple[int, ...], groups: int) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(3, widths[0], 3, padding=1)
        layers: list[nn.Module] = []
        cin = widths[0]
        for i, w in enumerate(widths):
            layers += [ResnetBlock2D(cin, w, groups), ResnetBlock2D(w, w, groups)]
            if i < len(widths) - 1:
                layers.append(Downsample2D(w))
            cin = w
        self.down = nn.Sequential(*layers)
        self.mid = nn.Sequential(
            ResnetBlock2D(cin, cin, groups),
            VAEAttention(cin, groups),
            ResnetBlock2D(cin, cin, groups),
        )
        self.norm_out = nn.GroupNorm(groups, cin, 1e-6)
        self.conv_out = nn.Conv2d(cin, 2 * LATENT, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.mid(self.down(self.conv_in(x)))
        moments = self.conv_out(F.silu(self.norm_out(h)))
        return moments[:, :LATENT]  # DiagonalGaussianDistribution.mode(): the mean


class CLIPVisionLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.layer_norm1, self.layer_norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        h = self.layer_norm1(x)
        q, k, v = (
            p(h).view(b, n, self.heads, -1).transpose(1, 2)
            for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        attn = F.scaled_dot_product_attention(q, k, v)
        x = x + self.out_proj(attn.transpose(1, 2).reshape(b, n, d))
        return x + self.fc2(F.gelu(self.fc1(self.layer_norm2(x))))


class CLIPVisionModelWithProjection(nn.Module):
    def __init__(self, d: int, heads: int, layers: int, patch: int, image: int, proj: int) -> None:
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, d, patch, stride=patch, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(d))
        self.position_embedding = nn.Embedding((image // patch) ** 2 + 1, d)
        self.register_buffer("position_ids", torch.arange((image // patch) ** 2 + 1)[None])
        self.pre_layrnorm, self.post_layernorm = nn.LayerNorm(d), nn.LayerNorm(d)
        self.layers = nn.ModuleList(CLIPVisionLayer(d, heads) for _ in range(layers))
        self.visual_projection = nn.Linear(d, proj, bias=False)

    def forward(self, pixels: Tensor) -> Tensor:
        x = self.patch_embedding(pixels).flatten(2).transpose(1, 2)
        cls = self.class_embedding.expand(x.shape[0], 1, -1)
        x = torch.cat([cls, x], dim=1) + self.position_embedding(self.position_ids)
        x = self.pre_layrnorm(x)
        for layer in self.layers:
            x = layer(x)
        return self.visual_projection(self.post_layernorm(x[:, 0]))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, widths, groups, vit, clip_image = 1, (32, 48), (8, 16, 16, 16), 4, 2, 28
        vit_cfg = (32, 2, vit, 14, clip_image, 16)
    else:
        batch, size, widths, groups, clip_image = 1, (256, 448), (128, 256, 512, 512), 32, 224
        vit_cfg = (1280, 16, 32, 14, clip_image, 1024)
    dtype = low_precision(device)
    vae = VAEEncoder(widths, groups).to(device=device, dtype=dtype).eval()
    clip = CLIPVisionModelWithProjection(*vit_cfg).to(device=device, dtype=dtype).eval()
    mean = torch.tensor(CLIP_MEAN, device=device, dtype=dtype).view(1, 3, 1, 1)
    std = torch.tensor(CLIP_STD, device=device, dtype=dtype).view(1, 3, 1, 1)
    streams = side_streams(device, 2)

    def encode_vae_image(frame: Tensor, noise: Tensor) -> Tensor:
        latents = vae(frame + NOISE_AUG * noise)
        return latents.unsqueeze(1).repeat(1, FRAMES, 1, 1, 1)

    def encode_image(frame: Tensor) -> Tensor:
        pixels = (frame + 1.0) / 2.0
        pixels = F.interpolate(
            pixels, (clip_image, clip_image), mode="bicubic", align_corners=True, antialias=True
        )
        return clip((pixels - mean) / std).unsqueeze(1)

    @torch.no_grad()
    def step(frame: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
        latents, embeds = fork_join(
            device,
            streams,
            [lambda: encode_vae_image(frame, noise), lambda: encode_image(frame)],
        )
        return latents, embeds

    def make() -> tuple[Tensor, Tensor]:
        frame = torch.rand(batch, 3, *size, device=device, dtype=dtype) * 2 - 1
        return frame, torch.randn(batch, 3, *size, device=device, dtype=dtype)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SVD image conditioning: SD VAE encoder (widths {'/'.join(map(str, widths))}) on a "
        f"{size[0]}x{size[1]} frame beside CLIP ViT ({vit_cfg[2]} layers d{vit_cfg[0]}, "
        f"{clip_image}px) on 2 side streams, b{batch}, {precision}"
    )
    return Built(step, inputs, description, [vae, clip, mean, std])


if __name__ == "__main__":
    main(build, __doc__)
