"""One shifted-window Swin Transformer block (Liu et al., 2021) on 4 feature maps of 56 x 56 x
96, bf16 (eighteenth hold-out), inference. LayerNorm; the map shifted by ``torch.roll`` of
-3 along both spatial axes; partitioned into 7 x 7 windows by view/permute/contiguous (4 x
64 = 256 windows of 49 tokens); the QKV projection (Linear 96->288); 3 heads of 32, Q scaled
by 1/sqrt(32), Q K^T (256 x 3 x 49 x 49); plus the relative position bias gathered in the
step from a learned 169 x 3 table by a fixed index buffer (49 x 49 indices, made at build,
the gather and a permute/contiguous to 3 x 49 x 49), plus the shifted-window mask (-100
between tokens from different regions of the rolled map, 64 x 49 x 49, made at build);
softmax; times V; the heads merged and projected (Linear 96->96); the windows reversed to
the 56 x 56 map; rolled back by +3; the residual; then LayerNorm, MLP 96->384->96 with GELU
and the residual. About 25 kernels (two LayerNorms, two rolls, the partition's and the
reverse's copies, four GEMMs with their bias, the scaling, the copies the strided K and V
need, two batched matmuls, the gather and its copy, the two bias adds, the softmax, the
merge's copy, the GELU, two residual adds), the largest over 4 x 56 x 56 x 384 values (9.6
MB) or the 256 x 3 x 49 x 49 scores: launch-bound, with medium kernels. Input: the feature
map (4 x 56 x 56 x 96, channels last). Returns the block's output (4 x 56 x 56 x 96, bf16).

    traceinspect profile swin_window_attn_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

WINDOW, SHIFT, HEADS = 7, 3, 3


def partition(x: Tensor, w: int) -> Tensor:
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5)
    return x.contiguous().view(-1, w * w, c)  # (B * windows, w * w, C)


def reverse(x: Tensor, w: int, b: int, h: int, wd: int) -> Tensor:
    x = x.view(b, h // w, wd // w, w, w, -1).permute(0, 1, 3, 2, 4, 5)
    return x.contiguous().view(b, h, wd, -1)


def relative_index(w: int) -> Tensor:
    coords = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij"))
    rel = (coords.flatten(1)[:, :, None] - coords.flatten(1)[:, None, :]).permute(1, 2, 0) + w - 1
    return rel[..., 0] * (2 * w - 1) + rel[..., 1]  # (w*w, w*w) into a (2w-1)^2 table


def shift_mask(h: int, wd: int, w: int, shift: int) -> Tensor:
    region = torch.zeros(1, h, wd, 1)
    cuts = (slice(0, -w), slice(-w, -shift), slice(-shift, None))
    for n, (a, b) in enumerate((a, b) for a in cuts for b in cuts):
        region[:, a, b, :] = n
    ids = partition(region, w).squeeze(-1)
    return (ids[:, None, :] != ids[:, :, None]).float() * -100.0  # (windows, w*w, w*w)


class ShiftedWindowBlock(nn.Module):
    def __init__(self, c: int, h: int, wd: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))
        self.table = nn.Parameter(0.02 * torch.randn((2 * WINDOW - 1) ** 2, HEADS))
        self.register_buffer("index", relative_index(WINDOW).flatten())
        self.register_buffer("mask", shift_mask(h, wd, WINDOW, SHIFT)[:, None])  # (nW, 1, N, N)

    def attention(self, x: Tensor) -> Tensor:  # x: (B * windows, N, C)
        bw, n, c = x.shape
        q, k, v = self.qkv(x).view(bw, n, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
        att = (q * (q.shape[-1] ** -0.5)) @ k.transpose(-2, -1)  # (B * windows, heads, N, N)
        bias = self.table[self.index].view(n, n, HEADS).permute(2, 0, 1).contiguous()
        windows = self.mask.shape[0]
        att = (att.view(-1, windows, HEADS, n, n) + bias + self.mask).view(bw, HEADS, n, n)
        out = torch.softmax(att, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(bw, n, c))

    def forward(self, x: Tensor) -> Tensor:  # x: (B, H, W, C)
        b, h, wd, _ = x.shape
        y = torch.roll(self.norm1(x), (-SHIFT, -SHIFT), (1, 2))
        y = reverse(self.attention(partition(y, WINDOW)), WINDOW, b, h, wd)
        x = x + torch.roll(y, (SHIFT, SHIFT), (1, 2))
        return x + self.mlp(self.norm2(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, c = (1, 14, 24) if smoke else (4, 56, 96)
    dtype = low_precision(device)
    model = ShiftedWindowBlock(c, size, size).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, size, size, c, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Swin shifted-window block, C{c} {HEADS} heads, {WINDOW}x{WINDOW} windows, roll "
        f"{SHIFT}, relative position bias gathered per step, MLP {c}-{4 * c}-{c}, batch {batch} "
        f"x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
