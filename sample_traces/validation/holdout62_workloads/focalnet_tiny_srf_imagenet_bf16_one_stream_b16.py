"""FocalNet-T (Yang, Li, Dai and Gao, NeurIPS 2022: focal modulation networks, self-attention
replaced by a hierarchy of depthwise convolutions whose gated contexts modulate a query) classifying
16 ImageNet images at 224 x 224 (sixty-second hold-out: one stream, bf16: the 4 x 4 patch embedding,
then 2, 2, 6 and 2 focal modulation blocks at 96, 192, 384 and 768 channels with a 2 x 2
convolutional downsampling between stages, each block a LayerNorm, the ``Linear(C, 2C + 3)``
projection to the query, the context and the 3 gates, two depthwise convolutions (3 x 3 and 5 x 5)
with GELU, the gated sum with the global context, the 1 x 1 modulator convolution, the product with
the query and the output projection, then a LayerNorm and the MLP; some 350 to 450 kernels, a mix
of memory-bound elementwise and depthwise kernels and mid-sized GEMMs; some 1 to 2.5 ms of GPU
time). Laid out as microsoft/FocalNet's ``classification/focalnet.py`` with its
``focalnet_tiny_srf`` configuration (``embed_dim 96``, ``depths [2, 2, 6, 2]``, ``focal_levels
[2, 2, 2, 2]``, ``focal_windows [3, 3, 3, 3]``, so kernels 3 and 5; ``mlp_ratio 4``; no layerscale,
no post-norm, no modulator normalisation; stochastic depth off in eval; ``PatchEmbed`` a strided
convolution and a LayerNorm, also for the downsampling; the head a LayerNorm, the average pool and
``Linear(768, 1000)``), its blocks taking tokens (B, H x W, C) and the modulation channels last, as
there. bf16 weights and activations on a GPU (fp32 on a CPU), eval, no gradients, random weights
(torch's defaults). Input (two input sets): the images (16, 3, 224, 224) bf16, Gaussian. Returns
the logits (16, 1000).

    traceinspect profile focalnet_tiny_srf_imagenet_bf16_one_stream_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

EMBED_DIM, DEPTHS, FOCAL_LEVEL, FOCAL_WINDOW, FOCAL_FACTOR, MLP_RATIO = 96, (2, 2, 6, 2), 2, 3, 2, 4


class FocalModulation(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.focal_level = FOCAL_LEVEL
        self.f = nn.Linear(dim, 2 * dim + FOCAL_LEVEL + 1)
        self.h = nn.Conv2d(dim, dim, 1)
        self.proj = nn.Linear(dim, dim)
        self.focal_layers = nn.ModuleList()
        for k in range(FOCAL_LEVEL):
            size = FOCAL_FACTOR * k + FOCAL_WINDOW
            self.focal_layers.append(
                nn.Sequential(
                    nn.Conv2d(dim, dim, size, groups=dim, padding=size // 2, bias=False),
                    nn.GELU(),
                )
            )

    def forward(self, x: Tensor) -> Tensor:  # (b, h, w, c)
        c = x.shape[-1]
        x = self.f(x).permute(0, 3, 1, 2).contiguous()
        q, ctx, gates = torch.split(x, (c, c, self.focal_level + 1), 1)
        ctx_all = 0
        for level in range(self.focal_level):
            ctx = self.focal_layers[level](ctx)
            ctx_all = ctx_all + ctx * gates[:, level : level + 1]
        ctx_global = F.gelu(ctx.mean(2, keepdim=True).mean(3, keepdim=True))
        ctx_all = ctx_all + ctx_global * gates[:, self.focal_level :]
        x_out = q * self.h(ctx_all)
        return self.proj(x_out.permute(0, 2, 3, 1).contiguous())


class FocalNetBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.modulation = FocalModulation(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, MLP_RATIO * dim), nn.GELU(), nn.Linear(MLP_RATIO * dim, dim)
        )

    def forward(self, x: Tensor, h: int, w: int) -> Tensor:  # (b, h w, c)
        b, _, c = x.shape
        shortcut = x
        x = self.modulation(self.norm1(x).view(b, h, w, c)).view(b, h * w, c)
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, cin: int, cout: int, patch: int) -> None:
        super().__init__()
        self.proj = nn.Conv2d(cin, cout, patch, stride=patch)
        self.norm = nn.LayerNorm(cout)

    def forward(self, x: Tensor) -> tuple[Tensor, int, int]:
        x = self.proj(x)
        h, w = x.shape[2:]
        return self.norm(x.flatten(2).transpose(1, 2)), h, w


class FocalNet(nn.Module):
    def __init__(self, embed_dim: int, depths: tuple[int, ...], classes: int) -> None:
        super().__init__()
        dims = [embed_dim * 2**i for i in range(len(depths))]
        self.patch_embed = PatchEmbed(3, dims[0], 4)
        self.stages = nn.ModuleList(
            nn.ModuleList(FocalNetBlock(d) for _ in range(n))
            for d, n in zip(dims, depths, strict=True)
        )
        self.downsamples = nn.ModuleList(
            PatchEmbed(dims[i], dims[i + 1], 2) for i in range(len(dims) - 1)
        )
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, images: Tensor) -> Tensor:
        x, h, w = self.patch_embed(images)
        for i, blocks in enumerate(self.stages):
            for block in blocks:
                x = block(x, h, w)
            if i < len(self.downsamples):
                b, _, c = x.shape
                x, h, w = self.downsamples[i](x.transpose(1, 2).reshape(b, c, h, w))
        x = self.norm(x).mean(dim=1)
        return self.head(x)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, embed_dim, depths, classes = 2, 32, 8, (1, 1, 2, 1), 10
    else:
        batch, image, embed_dim, depths, classes = 16, 224, EMBED_DIM, DEPTHS, 1000
    dtype = low_precision(device)
    model = FocalNet(embed_dim, depths, classes).to(device, dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"FocalNet-T (srf): depths {depths}, dim {embed_dim}, focal levels {FOCAL_LEVEL} "
        f"(kernels 3, 5), {image} px, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
