"""The first stage of Swin-T (Liu et al., 2021) on 8 images' 56 x 56 patch tokens of dim 96, 3
heads, window 7, as the official ``models/swin_transformer.py`` lays it out (fifty-second hold-out:
one stream of about 50 kernels, the window partitions and reverses, rolls, LayerNorms, bias gathers,
mask adds and softmaxes over 25,088 tokens and 512 windows of 49 tokens, memory-bound copies and
elementwise kernels beside small GEMMs): two ``SwinTransformerBlock`` s, the first over regular
windows, the second over windows shifted by 3 (``torch.roll`` by -3 on both spatial axes before and
+3 after, with the official attention mask: -100 between tokens of different regions of the rolled
map, 64 x 49 x 49, made at build and kept as a buffer), then ``PatchMerging`` (the stage's
down-sample). Each block: LayerNorm; the tokens viewed as (8, 56, 56, 96); ``window_partition``
(view, permute, contiguous) to 512 windows of 7 x 7; ``WindowAttention``: the qkv ``Linear(96,
288)``, reshaped and permuted to 3 heads of 32, q scaled by 32^-0.5, q @ k^T (512 x 3 x 49 x 49),
plus the relative position bias gathered every step from the learned (13 x 13) x 3 table by the
precomputed ``relative_position_index`` buffer (49 x 49) and made contiguous as 3 x 49 x 49, plus
the mask in the shifted block, softmax, @ v, the heads merged and ``proj`` (``Linear(96, 96)``);
``window_reverse``; the roll back; the residual; LayerNorm, the MLP ``Linear(96, 384)``, GELU,
``Linear(384, 96)``, and the residual. ``PatchMerging``: the four 2 x 2-strided sub-grids
concatenated to 384 channels (28 x 28 tokens), LayerNorm, ``Linear(384, 192, bias=False)``. Plain
matmul and softmax attention as the reference (no SDPA). bf16 on a GPU (the mask buffer cast with
the model), eval mode, no gradients, one stream. Input: the patch embeddings (8, 3136, 96). Returns
the stage's output (8, 784, 192).

    traceinspect profile swin_window_attention_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

WINDOW, HEADS, MLP_RATIO = 7, 3, 4


def window_partition(x: Tensor, ws: int) -> Tensor:
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows: Tensor, ws: int, h: int, w: int) -> Tensor:
    b = windows.shape[0] // ((h // ws) * (w // ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


def relative_position_index(ws: int) -> Tensor:
    coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij"))
    flat = torch.flatten(coords, 1)
    rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += ws - 1
    rel[:, :, 1] += ws - 1
    rel[:, :, 0] *= 2 * ws - 1
    return rel.sum(-1)  # (ws*ws, ws*ws) into a (2ws-1)^2 table


def shifted_window_mask(h: int, w: int, ws: int, shift: int) -> Tensor:
    img_mask = torch.zeros((1, h, w, 1))
    slices = (slice(0, -ws), slice(-ws, -shift), slice(-shift, None))
    for cnt, (hs, wsl) in enumerate((a, b) for a in slices for b in slices):
        img_mask[:, hs, wsl, :] = cnt
    mask_windows = window_partition(img_mask, ws).view(-1, ws * ws)
    attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
    return attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)


class WindowAttention(nn.Module):
    def __init__(self, dim: int, ws: int, heads: int) -> None:
        super().__init__()
        self.ws, self.heads = ws, heads
        self.scale = (dim // heads) ** -0.5
        self.relative_position_bias_table = nn.Parameter(
            0.02 * torch.randn((2 * ws - 1) ** 2, heads)
        )
        self.register_buffer("relative_position_index", relative_position_index(ws))
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: Tensor, mask: Tensor | None) -> Tensor:  # x: (windows B, N, C)
        bw, n, c = x.shape
        qkv = self.qkv(x).reshape(bw, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)]
        attn = attn + bias.view(n, n, -1).permute(2, 0, 1).contiguous().unsqueeze(0)
        if mask is not None:
            windows = mask.shape[0]
            attn = attn.view(bw // windows, windows, self.heads, n, n) + mask[None, :, None]
            attn = attn.view(-1, self.heads, n, n)
        attn = torch.softmax(attn, dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(bw, n, c))


class SwinTransformerBlock(nn.Module):
    attn_mask: Tensor | None

    def __init__(self, dim: int, size: int, heads: int, ws: int, shift: int) -> None:
        super().__init__()
        self.size, self.ws, self.shift = size, ws, shift
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, ws, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, MLP_RATIO * dim), nn.GELU(), nn.Linear(MLP_RATIO * dim, dim)
        )
        mask = shifted_window_mask(size, size, ws, shift) if shift else None
        self.register_buffer("attn_mask", mask)

    def forward(self, x: Tensor) -> Tensor:  # x: (B, H W, C)
        h = w = self.size
        b, _, c = x.shape
        shortcut = x
        x = self.norm1(x).view(b, h, w, c)
        if self.shift:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        windows = window_partition(x, self.ws).view(-1, self.ws * self.ws, c)
        windows = self.attn(windows, self.attn_mask).view(-1, self.ws, self.ws, c)
        x = window_reverse(windows, self.ws, h, w)
        if self.shift:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = shortcut + x.view(b, h * w, c)
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    def __init__(self, dim: int, size: int) -> None:
        super().__init__()
        self.size = size
        self.norm = nn.LayerNorm(4 * dim)
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x: Tensor) -> Tensor:  # x: (B, H W, C) -> (B, H W / 4, 2 C)
        b, _, c = x.shape
        x = x.view(b, self.size, self.size, c)
        x0, x1 = x[:, 0::2, 0::2, :], x[:, 1::2, 0::2, :]
        x2, x3 = x[:, 0::2, 1::2, :], x[:, 1::2, 1::2, :]
        x = torch.cat([x0, x1, x2, x3], -1).view(b, -1, 4 * c)
        return self.reduction(self.norm(x))


class SwinStage(nn.Module):
    def __init__(self, dim: int, size: int, heads: int, ws: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            SwinTransformerBlock(dim, size, heads, ws, 0),
            SwinTransformerBlock(dim, size, heads, ws, ws // 2),
        )
        self.downsample = PatchMerging(dim, size)

    def forward(self, x: Tensor) -> Tensor:
        return self.downsample(self.blocks(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, dim = (1, 14, 24) if smoke else (8, 56, 96)
    dtype = low_precision(device)
    model = SwinStage(dim, size, HEADS, WINDOW).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, size * size, dim, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Swin stage: regular + shifted {WINDOW}x{WINDOW} window blocks, dim {dim} {HEADS} heads, "
        f"relative position bias gathered per step, patch merging, b{batch} x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
