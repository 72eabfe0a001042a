"""A TimeSformer-style video classifier forward with divided space-time attention at batch 2
(thirty-fourth hold-out): 2 clips of 8 frames of 3 x 224 x 224, each frame cut into 196
patches by ``Conv2d(3, 768, 16, stride=16)`` (the frames folded into the batch, 16 images),
a learned spatial position embedding (196 x 768) and a learned temporal one (8 x 768) added,
then 4 divided-attention layers (d 768, 12 heads of 64). Each layer: a pre-LayerNorm
temporal attention, where the tokens are permuted to (2 * 196, 8, 768) so each patch
position attends over its 8 frames, a residual add; a pre-LayerNorm spatial attention, the
tokens viewed as (2 * 8, 196, 768) so each frame's patches attend over each other (no class
token), a residual add; a pre-LayerNorm MLP (``Linear(768, 3072)``, GELU,
``Linear(3072, 768)``), a residual add. Each attention is a fused QKV ``Linear(768, 2304)``,
``F.scaled_dot_product_attention`` and an output ``Linear(768, 768)``. A final LayerNorm,
a mean over all 8 x 196 tokens and the ``Linear(768, 400)`` head. bf16 on a GPU, eval mode,
no gradients. Input: video (2, 8, 3, 224, 224). Returns the logits (2, 400).

    traceinspect profile timesformer_divided_attn_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class Attention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v)  # (b, heads, n, dh)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))


class DividedBlock(nn.Module):
    def __init__(self, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.norm_t, self.attn_t = nn.LayerNorm(d), Attention(d, heads)
        self.norm_s, self.attn_s = nn.LayerNorm(d), Attention(d, heads)
        self.norm_m = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x: Tensor) -> Tensor:
        b, t, n, d = x.shape
        xt = x.permute(0, 2, 1, 3).reshape(b * n, t, d)  # each patch position over its frames
        att = self.attn_t(self.norm_t(xt)).view(b, n, t, d).permute(0, 2, 1, 3)
        x = x + att
        xs = x.reshape(b * t, n, d)  # each frame's patches over each other
        x = x + self.attn_s(self.norm_s(xs)).view(b, t, n, d)
        return x + self.mlp(self.norm_m(x))


class TimeSformer(nn.Module):
    def __init__(
        self,
        frames: int,
        image: int,
        patch: int,
        d: int,
        heads: int,
        ff: int,
        layers: int,
        classes: int,
    ) -> None:
        super().__init__()
        patches = (image // patch) ** 2
        self.patchify = nn.Conv2d(3, d, patch, stride=patch)
        self.pos_space = nn.Parameter(torch.randn(1, 1, patches, d) * 0.02)
        self.pos_time = nn.Parameter(torch.randn(1, frames, 1, d) * 0.02)
        self.blocks = nn.ModuleList(DividedBlock(d, heads, ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, video: Tensor) -> Tensor:
        b, t = video.shape[:2]
        x = self.patchify(video.flatten(0, 1))  # (b * t, d, h', w')
        x = x.flatten(2).transpose(1, 2).reshape(b, t, -1, x.shape[1])  # (b, t, n, d)
        x = x + self.pos_space + self.pos_time
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=(1, 2)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, image, patch, d, heads, ff, layers, classes = (
        (2, 2, 32, 8, 32, 2, 64, 2, 10) if smoke else (2, 8, 224, 16, 768, 12, 3072, 4, 400)
    )
    dtype = low_precision(device)
    model = TimeSformer(frames, image, patch, d, heads, ff, layers, classes)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(video: Tensor) -> Tensor:
        return model(video)

    inputs = [
        (torch.randn(batch, frames, 3, image, image, device=device, dtype=dtype),) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"TimeSformer divided space-time attention, {layers} x d{d}, {frames} frames x "
        f"{(image // patch) ** 2} patches, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
