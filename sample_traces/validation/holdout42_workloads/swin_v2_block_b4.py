"""Two Swin Transformer V2 blocks (Liu et al., 2022: scaled cosine attention, a log-spaced
continuous position bias from a small MLP, res-post-norm) at Swin-V2-B's stage-1 width on a 224
x 224 image's tokens, one with regular and one with shifted 7 x 7 windows (forty-second
hold-out): 4 images of 56 x 56 tokens, dim 128, 4 heads of 32, bf16 on a GPU, eval mode, no
gradients. Each block, on the (4, 56, 56, 128) token grid: the second block first rolls the grid
by (-3, -3) (``torch.roll``); window partition into 64 windows of 7 x 7 per image, (256, 49,
128); ``Linear(128, 384)`` to q, k, v of 4 heads; scaled cosine attention, ``F.normalize``-d q
and k, their (256, 4, 49, 49) similarities times exp(min(logit_scale, log 100)), a learnable
per-head logit scale (initialized to log 10); the continuous relative position bias: the (2 x 7
- 1)^2 = 13 x 13 table of relative (dy, dx) coordinates, normalized to [-8, 8] and log-spaced
(sign(x) log2(1 + |x|) / log2(8)), fixed at build, through a 2-layer MLP ``Linear(2, 512)`` +
ReLU + ``Linear(512, 4, bias=False)`` every step, indexed by the (49, 49) relative position
index (built at build) into a (4, 49, 49) bias, 16 x sigmoid, added; in the shifted block the
(64, 49, 49) attention mask built at build time (-100 between tokens from different regions of
the rolled grid) added per window; softmax, times v, ``Linear(128, 128)``; window merge and the
reverse roll. Res-post-norm: x + LayerNorm(attention(x)), then x + LayerNorm(MLP(x)), the MLP
``Linear(128, 512)`` + GELU + ``Linear(512, 128)``. Input: the tokens (4, 3136, 128). Returns
the tokens after both blocks (4, 3136, 128) (bf16 on a GPU).

    traceinspect profile swin_v2_block_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

CPB_HIDDEN, MASK_VALUE = 512, -100.0


def relative_coords_table(window: int) -> Tensor:
    r = torch.arange(-(window - 1), window, dtype=torch.float32)
    table = torch.stack(torch.meshgrid(r, r, indexing="ij"), dim=-1) / (window - 1) * 8
    table = torch.sign(table) * torch.log2(table.abs() + 1) / math.log2(8)
    return table.view(-1, 2)  # ((2 w - 1)^2, 2)


def relative_position_index(window: int) -> Tensor:
    coords = torch.stack(
        torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")
    ).flatten(1)  # (2, w w)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
    return (rel[..., 0] * (2 * window - 1) + rel[..., 1]).view(-1)  # (w^4,)


def partition(x: Tensor, window: int) -> Tensor:  # (b, h, w, c) -> (b nW, window^2, c)
    b, h, w, c = x.shape
    x = x.view(b, h // window, window, w // window, window, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, window * window, c)


def merge(windows: Tensor, window: int, b: int, h: int, w: int) -> Tensor:
    c = windows.shape[-1]
    x = windows.view(b, h // window, w // window, window, window, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h, w, c)


def shift_mask(size: int, window: int, shift: int) -> Tensor:
    regions = torch.zeros(1, size, size, 1)
    bounds = (slice(0, -window), slice(-window, -shift), slice(-shift, None))
    for i, (hs, ws) in enumerate((hs, ws) for hs in bounds for ws in bounds):
        regions[:, hs, ws, :] = i
    ids = partition(regions, window)[..., 0]  # (nW, window^2)
    diff = ids[:, None, :] - ids[:, :, None]
    return torch.where(diff != 0, MASK_VALUE, 0.0)  # (nW, window^2, window^2)


class SwinV2Block(nn.Module):
    def __init__(self, dim: int, heads: int, window: int, shift: int, size: int) -> None:
        super().__init__()
        self.heads, self.window, self.shift = heads, window, shift
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.logit_scale = nn.Parameter(torch.full((heads, 1, 1), math.log(10.0)))
        self.cpb = nn.Sequential(
            nn.Linear(2, CPB_HIDDEN), nn.ReLU(), nn.Linear(CPB_HIDDEN, heads, bias=False)
        )
        self.register_buffer("table", relative_coords_table(window))
        self.register_buffer("index", relative_position_index(window))
        self.register_buffer("mask", shift_mask(size, window, shift) if shift else None)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attention(self, x: Tensor) -> Tensor:  # (b nW, n, c)
        bw, n, c = x.shape
        q, k, v = self.qkv(x).view(bw, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * torch.clamp(self.logit_scale, max=math.log(100.0)).exp()
        bias = self.cpb(self.table)[self.index].view(n, n, self.heads).permute(2, 0, 1)
        attn = attn + 16 * torch.sigmoid(bias)
        if self.mask is not None:
            windows = self.mask.shape[0]
            attn = attn.view(bw // windows, windows, self.heads, n, n) + self.mask[None, :, None]
            attn = attn.view(bw, self.heads, n, n)
        out = (attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(bw, n, c)
        return self.proj(out)

    def forward(self, x: Tensor) -> Tensor:  # (b, h, w, c)
        b, h, w, _ = x.shape
        y = torch.roll(x, (-self.shift, -self.shift), (1, 2)) if self.shift else x
        y = merge(self.attention(partition(y, self.window)), self.window, b, h, w)
        if self.shift:
            y = torch.roll(y, (self.shift, self.shift), (1, 2))
        x = x + self.norm1(y)  # res-post-norm
        return x + self.norm2(self.mlp(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, dim, heads = (1, 14, 16, 2) if smoke else (4, 56, 128, 4)
    window = 7
    dtype = low_precision(device)
    blocks = nn.Sequential(
        SwinV2Block(dim, heads, window, 0, size), SwinV2Block(dim, heads, window, window // 2, size)
    )
    blocks = blocks.to(device, dtype).eval()

    @torch.no_grad()
    def step(tokens: Tensor) -> Tensor:
        return blocks(tokens.view(batch, size, size, dim)).view(batch, size * size, dim)

    inputs = [(torch.randn(batch, size * size, dim, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"2 Swin V2 blocks (scaled cosine attention, continuous position bias MLP, res-post-norm, "
        f"{window} x {window} windows, regular + shifted), {size} x {size} tokens, dim {dim}, "
        f"{heads} heads, b{batch}",
        [blocks],
    )


if __name__ == "__main__":
    main(build, __doc__)
