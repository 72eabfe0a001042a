"""Swin-style window attention: 4 blocks over 2 x 56 x 56 x 96 tokens, alternating plain and
shifted windows (``torch.roll`` by 3 with the shifted-window mask), 7x7 window partition and
reverse by view/permute/contiguous, 3-head attention inside each window written out (matmul,
relative position bias from a precomputed index, softmax, matmul), MLP 96->384->96 with GELU,
LayerNorm, bf16 (fifth hold-out).

    traceinspect profile swin_window_attn_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def partition(x: Tensor, w: int) -> Tensor:
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5)
    return x.contiguous().view(-1, w * w, c)


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


class SwinBlock(nn.Module):
    def __init__(self, c: int, heads: int, w: int, shift: int, h: int, wd: int) -> None:
        super().__init__()
        self.heads, self.w, self.shift = heads, w, shift
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.mlp = nn.Sequential(nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c))
        table = torch.randn((2 * w - 1) ** 2, heads) * 0.02
        bias = table[relative_index(w).flatten()].view(w * w, w * w, heads).permute(2, 0, 1)
        if shift:  # (windows, heads, N, N): the bias plus the shifted-window mask
            bias = bias[None] + shift_mask(h, wd, w, shift)[:, None]
        self.register_buffer("bias", bias)

    def attention(self, x: Tensor) -> Tensor:  # x: (B * windows, N, C)
        bw, n, c = x.shape
        q, k, v = self.qkv(x).view(bw, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = (q * (q.shape[-1] ** -0.5)) @ k.transpose(-2, -1)
        if self.shift:
            windows = self.bias.shape[0]
            att = (att.view(-1, windows, self.heads, n, n) + self.bias).view(bw, self.heads, n, n)
        else:
            att = att + self.bias
        out = F.softmax(att, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(bw, n, c))

    def forward(self, x: Tensor) -> Tensor:  # x: (B, H, W, C)
        b, h, wd, _ = x.shape
        y = self.ln1(x)
        if self.shift:
            y = torch.roll(y, (-self.shift, -self.shift), (1, 2))
        y = reverse(self.attention(partition(y, self.w)), self.w, b, h, wd)
        if self.shift:
            y = torch.roll(y, (self.shift, self.shift), (1, 2))
        x = x + y
        return x + self.mlp(self.ln2(x))


def build(device: torch.device, smoke: bool) -> Built:
    size, c, heads, depth, batch = (14, 24, 3, 2, 1) if smoke else (56, 96, 3, 4, 2)
    window, shift = 7, 3
    dtype = low_precision(device)
    blocks = [SwinBlock(c, heads, window, shift * (i % 2), size, size) for i in range(depth)]
    model = nn.Sequential(*blocks).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    shape = (batch, size, size, c)
    inputs = [(torch.randn(*shape, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"Swin {depth} x C{c}, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
