"""Stable Diffusion 3 Medium's MM-DiT (Esser et al., 2024) denoising one 512 x 512 latent for a
classifier-free-guidance pair (conditional and unconditional, batch 2) through the first 4 of its 24
joint transformer blocks and the output layer, each block's image stream and text stream on their
own side streams around the joint attention (fifty-seventh hold-out: eight fork / join rounds of two
concurrent chains of unequal weight, bf16 GEMMs over 2048 image-token rows beside 666 text-token
rows, d 1536, the largest the MLPs' 1536 -> 6144 and 6144 -> 1536 at some 39 GFLOP each on the image
rows and 13 GFLOP each on the text rows, adaLN-Zero modulations and LayerNorms over 6 MB bf16
tensors; the joint attention, one SDPA over 1357 tokens of 24 heads, on the current stream between
them: GEMM-bound chains beside each other, between short serial stretches). Laid out as diffusers'
``SD3Transformer2DModel`` (``stabilityai/stable-diffusion-3-medium-diffusers``: d 1536, 24 heads of
64, patch 2, 16 latent channels, ``joint_attention_dim`` 4096, ``pooled_projection_dim`` 2048,
``pos_embed_max_size`` 192): ``PatchEmbed`` (``Conv2d(16, 1536, 2, stride 2)``, flattened, plus the
fixed 2-D sin-cos position embedding cropped from its 192 x 192 table at each call);
``CombinedTimestepTextProjEmbeddings`` (the sinusoidal timestep projection of 256, flipped to cos
first, ``Linear(256, 1536)``, SiLU, ``Linear(1536, 1536)``, plus the pooled text embedding through
``Linear(2048, 1536)``, SiLU, ``Linear(1536, 1536)``); ``context_embedder`` ``Linear(4096, 1536)``
on the 333 text tokens (77 CLIP + 256 T5). Per ``JointTransformerBlock``: side stream 1, the image
stream's ``AdaLayerNormZero`` (SiLU of the conditioning, ``Linear(1536, 9216)``, six chunks; a
LayerNorm without affine, eps 1e-6, scaled and shifted) and its ``to_q`` / ``to_k`` / ``to_v``; side
stream 2, the text stream's ``norm1_context`` and ``add_q_proj`` / ``add_k_proj`` / ``add_v_proj``;
after the join, ``JointAttnProcessor2_0``'s attention on the concatenated tokens (image then text)
with ``F.scaled_dot_product_attention``, split back; fork again: side stream 1, ``to_out``, the
gated residual, ``norm2`` modulated and the ``FeedForward`` (``Linear(1536, 6144)``, tanh GELU,
``Linear(6144, 1536)``) with its gated residual; side stream 2, the same with ``to_add_out``,
``norm2_context`` and ``ff_context``. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Then, on the current
stream, ``AdaLayerNormContinuous`` (scale, shift), ``proj_out`` ``Linear(1536, 64)`` and the
unpatchify to (2, 16, 64, 64). bf16 on a GPU, weights included (``torch_dtype=torch.bfloat16``; fp32
on a CPU), eval, no gradients, random weights (torch's defaults). Inputs (two input sets): the noisy
latents (2, 16, 64, 64), Gaussian; the prompt embeddings (2, 333, 4096), Gaussian; the pooled prompt
embeddings (2, 2048), Gaussian; the timesteps (2,), one value in [0, 1000) repeated as the CFG batch
does. Returns the noise prediction (2, 16, 64, 64).

    traceinspect profile sd3_mmdit_joint_blocks_2streams_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CHANNELS, PATCH, TIME_PROJ = 16, 2, 256


def sincos_2d(d: int, size: int) -> Tensor:
    """diffusers' get_2d_sincos_pos_embed (base size 64 / 2, interpolation scale 1): (size^2, d)."""
    grid = torch.arange(size, dtype=torch.float64) / (size / (64 // PATCH))
    gy, gx = torch.meshgrid(grid, grid, indexing="ij")
    omega = 1.0 / 10000 ** (torch.arange(d // 4, dtype=torch.float64) / (d / 4))
    parts = []
    for g in (gx, gy):
        out = g.reshape(-1)[:, None] * omega[None]
        parts += [torch.sin(out), torch.cos(out)]
    return torch.cat(parts, dim=1).float()


def timestep_proj(t: Tensor, dim: int) -> Tensor:
    """get_timestep_embedding(t, 256, flip_sin_to_cos=True, downscale_freq_shift=0)."""
    half = dim // 2
    exponent = -math.log(10000) * torch.arange(half, dtype=torch.float32, device=t.device) / half
    emb = t[:, None].float() * torch.exp(exponent)[None]
    return torch.cat([torch.cos(emb), torch.sin(emb)], dim=-1)


def mlp2(d_in: int, d: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d), nn.SiLU(), nn.Linear(d, d))


class StreamHalf(nn.Module):
    """One modality's weights in a JointTransformerBlock: adaLN-Zero, q/k/v, out, norm2, FF."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ada = nn.Linear(d, 6 * d)
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU("tanh"), nn.Linear(4 * d, d))

    def pre(self, x: Tensor, temb: Tensor) -> tuple[Tensor, ...]:
        shift, scale, gate, shift2, scale2, gate2 = self.ada(F.silu(temb)).chunk(6, dim=1)
        h = self.norm1(x) * (1 + scale[:, None]) + shift[:, None]
        b, n, _ = h.shape
        q, k, v = (
            p(h).view(b, n, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v)
        )
        return q, k, v, gate, shift2, scale2, gate2

    def post(
        self, x: Tensor, attn: Tensor, gate: Tensor, shift2: Tensor, scale2: Tensor, gate2: Tensor
    ) -> Tensor:
        x = x + gate[:, None] * self.out(attn)
        h = self.norm2(x) * (1 + scale2[:, None]) + shift2[:, None]
        return x + gate2[:, None] * self.ff(h)


class SD3Transformer(nn.Module):
    def __init__(self, d: int, heads: int, blocks: int, text_dim: int, pooled: int, max_pos: int):
        super().__init__()
        self.max_pos = max_pos
        self.proj = nn.Conv2d(CHANNELS, d, PATCH, stride=PATCH)
        self.register_buffer("pos_embed", sincos_2d(d, max_pos)[None], persistent=False)
        self.timestep_embedder = mlp2(TIME_PROJ, d)
        self.text_embedder = mlp2(pooled, d)
        self.context_embedder = nn.Linear(text_dim, d)
        self.image = nn.ModuleList(StreamHalf(d, heads) for _ in range(blocks))
        self.context = nn.ModuleList(StreamHalf(d, heads) for _ in range(blocks))
        self.norm_out_linear = nn.Linear(d, 2 * d)
        self.norm_out = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.proj_out = nn.Linear(d, PATCH * PATCH * CHANNELS)

    def embed(self, latents: Tensor) -> Tensor:
        h, w = latents.shape[-2] // PATCH, latents.shape[-1] // PATCH
        x = self.proj(latents).flatten(2).transpose(1, 2)
        top, left = (self.max_pos - h) // 2, (self.max_pos - w) // 2
        table = self.pos_embed.reshape(1, self.max_pos, self.max_pos, -1)
        pos = table[:, top : top + h, left : left + w, :].reshape(1, h * w, -1)
        return x + pos

    def conditioning(self, timestep: Tensor, pooled: Tensor) -> Tensor:
        t = timestep_proj(timestep, TIME_PROJ).to(pooled.dtype)
        return self.timestep_embedder(t) + self.text_embedder(pooled)

    def unpatchify(self, x: Tensor, temb: Tensor, size: tuple[int, int]) -> Tensor:
        scale, shift = self.norm_out_linear(F.silu(temb)).chunk(2, dim=1)
        x = self.norm_out(x) * (1 + scale[:, None]) + shift[:, None]
        x = self.proj_out(x)
        b, (h, w) = x.shape[0], (size[0] // PATCH, size[1] // PATCH)
        x = x.reshape(b, h, w, PATCH, PATCH, CHANNELS)
        return torch.einsum("nhwpqc->nchpwq", x).reshape(b, CHANNELS, h * PATCH, w * PATCH)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, d, heads, blocks, latent, text_tokens, text_dim, pooled, max_pos = (
            2, 32, 2, 2, 8, 5, 16, 8, 8,
        )  # fmt: skip
    else:
        batch, d, heads, blocks, latent, text_tokens, text_dim, pooled, max_pos = (
            2, 1536, 24, 4, 64, 333, 4096, 2048, 192,
        )  # fmt: skip
    dtype = low_precision(device)
    model = SD3Transformer(d, heads, blocks, text_dim, pooled, max_pos)
    model = model.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(latents: Tensor, prompt: Tensor, pooled_prompt: Tensor, timestep: Tensor) -> Tensor:
        x = model.embed(latents)
        c = model.context_embedder(prompt)
        temb = model.conditioning(timestep, pooled_prompt)
        n_img = x.shape[1]
        for img, ctx in zip(model.image, model.context, strict=True):
            pre_x, pre_c = fork_join(
                device,
                streams,
                [lambda: img.pre(x, temb), lambda: ctx.pre(c, temb)],  # noqa: B023
            )
            q, k, v = (torch.cat((a, b), dim=2) for a, b in zip(pre_x[:3], pre_c[:3], strict=True))
            attn = F.scaled_dot_product_attention(q, k, v)
            attn = attn.transpose(1, 2).reshape(x.shape[0], -1, x.shape[2])
            a_x, a_c = attn[:, :n_img], attn[:, n_img:]
            x, c = fork_join(
                device,
                streams,
                [
                    lambda: img.post(x, a_x, *pre_x[3:]),  # noqa: B023
                    lambda: ctx.post(c, a_c, *pre_c[3:]),  # noqa: B023
                ],
            )
        return model.unpatchify(x, temb, latents.shape[-2:])

    def make() -> tuple[Tensor, Tensor, Tensor, Tensor]:
        t = torch.randint(0, 1000, (1,), device=device).float().repeat(batch)
        return (
            torch.randn(batch, CHANNELS, latent, latent, device=device, dtype=dtype),
            torch.randn(batch, text_tokens, text_dim, device=device, dtype=dtype),
            torch.randn(batch, pooled, device=device, dtype=dtype),
            t,
        )

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SD3 MM-DiT: {blocks} joint blocks d{d}, image stream ({(latent // PATCH) ** 2} tokens) "
        f"beside text stream ({text_tokens} tokens) on 2 side streams around the joint SDPA, "
        f"{2 * blocks} fork/join rounds, CFG batch {batch}, {precision}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
