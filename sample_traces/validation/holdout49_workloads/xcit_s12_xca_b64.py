"""XCiT-S12/16 (El-Nouby et al., 2021) classifying 64 images of 224 x 224, as timm lays it out
(forty-ninth hold-out: cross-covariance attention, softmax over a head's channels rather than
its tokens, with a local patch-interaction block between attention and MLP, GEMM-bound at this
batch): d 384, 8 heads of 48, 12 XCiT layers and 2 class-attention layers, some 4.8 GMAC an
image, 307 GMAC the batch. The patch embedding: ``Conv2d(3, 48, 3, stride 2, padding 1)``, 48 ->
96, 96 -> 192 and 192 -> 384 likewise (each + BatchNorm, all but the last + GELU), 14 x 14 = 196
tokens; plus the Fourier positional encoding (sines and cosines of the normalized grid, 64
channels, through a 1 x 1 ``Conv2d(64, 384)``; it depends only on the grid and is computed once
at build). An XCiT layer, each branch scaled by its LayerScale vector (``eta`` 1.0) and added:
cross-covariance attention on LayerNorm(x) (``Linear(384, 1152)`` to q, k, v viewed as (b, 8,
48, 196), q and k L2-normalized along the tokens, the (48 x 48) attention q k^T times a learned
per-head temperature, ``softmax``, times v, ``Linear(384, 384)``); the local patch interaction
on LayerNorm(x) (the tokens as a 14 x 14 map, depthwise ``Conv2d(384, 384, 3, padding 1, groups
384)``, GELU, BatchNorm, another depthwise 3 x 3); an MLP on LayerNorm(x) (``Linear(384,
1536)``, GELU, ``Linear(1536, 384)``). The class-attention layers: a learned class token, the
LayerNorm of [class token, tokens], the class token alone attending over all 197 (the project's
``_blocks.Attention`` in cross mode: ``Linear(384, 384)`` to q from the class token,
``Linear(384, 768)`` to k, v, SDPA, ``Linear(384, 384)``), then an MLP on the LayerNorm of the
class token, both LayerScaled residuals of the class token only. Then a LayerNorm and
``Linear(384, 1000)`` on the class token. bf16 on a GPU, channels-last for the convolutions,
eval mode (BatchNorm running statistics set at build), no gradients, one stream. Input: (64, 3,
224, 224). Returns (64, 1000) logits.

    traceinspect profile xcit_s12_xca_b64.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import MLP, Attention
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

CLASSES, FOURIER, PATCH = 1000, 32, 16


def fourier_positions(h: int, w: int) -> Tensor:
    """XCiT's PositionalEncodingFourier features before its 1x1 conv: (1, 2 FOURIER, h, w)."""
    y = torch.arange(1, h + 1, dtype=torch.float32)[:, None].expand(h, w)
    x = torch.arange(1, w + 1, dtype=torch.float32)[None, :].expand(h, w)
    eps, scale = 1e-6, 2 * math.pi
    y, x = y / (h + eps) * scale, x / (w + eps) * scale
    dim_t = 10000 ** (2 * (torch.arange(FOURIER) // 2) / FOURIER)
    pos_x, pos_y = x[..., None] / dim_t, y[..., None] / dim_t
    pos_x = torch.stack([pos_x[..., 0::2].sin(), pos_x[..., 1::2].cos()], dim=3).flatten(2)
    pos_y = torch.stack([pos_y[..., 0::2].sin(), pos_y[..., 1::2].cos()], dim=3).flatten(2)
    return torch.cat([pos_y, pos_x], dim=2).permute(2, 0, 1)[None]


class XCA(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.temperature = nn.Parameter(torch.ones(heads, 1, 1))
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 4, 1)
        q, k, v = qkv.unbind(0)  # (b, heads, head_dim, tokens)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        attn = ((q @ k.transpose(-2, -1)) * self.temperature).softmax(dim=-1)
        return self.proj((attn @ v).permute(0, 3, 1, 2).reshape(b, n, d))


class LPI(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(d, d, 3, padding=1, groups=d)
        self.bn = nn.BatchNorm2d(d)
        self.conv2 = nn.Conv2d(d, d, 3, padding=1, groups=d)

    def forward(self, x: Tensor, side: int) -> Tensor:
        b, n, d = x.shape
        grid = x.transpose(1, 2).reshape(b, d, side, side)
        grid = self.conv2(self.bn(F.gelu(self.conv1(grid))))
        return grid.reshape(b, d, n).transpose(1, 2)


class XCiTLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.lpi, self.mlp = XCA(d, heads), LPI(d), MLP(d, 4 * d)
        self.gamma1, self.gamma2, self.gamma3 = (nn.Parameter(torch.ones(d)) for _ in range(3))

    def forward(self, x: Tensor, side: int) -> Tensor:
        x = x + self.gamma1 * self.attn(self.norm1(x))
        x = x + self.gamma3 * self.lpi(self.norm3(x), side)
        return x + self.gamma2 * self.mlp(self.norm2(x))


class ClassAttentionLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn, self.mlp = Attention(d, heads, cross=True), MLP(d, 4 * d)
        self.gamma1, self.gamma2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))

    def forward(self, cls: Tensor, tokens: Tensor) -> Tensor:
        y = self.norm1(torch.cat([cls, tokens], dim=1))
        cls = cls + self.gamma1 * self.attn(y[:, :1], y)
        return cls + self.gamma2 * self.mlp(self.norm2(cls))


class XCiT(nn.Module):
    def __init__(self, image: int, d: int, heads: int, depth: int, ca_depth: int) -> None:
        super().__init__()
        chans = [3, d // 8, d // 4, d // 2, d]
        stem: list[nn.Module] = []
        for i in range(4):
            stem += [nn.Conv2d(chans[i], chans[i + 1], 3, 2, 1), nn.BatchNorm2d(chans[i + 1])]
            if i < 3:
                stem.append(nn.GELU())
        self.stem = nn.Sequential(*stem)
        self.side = image // PATCH
        self.pos_proj = nn.Conv2d(2 * FOURIER, d, 1)
        self.register_buffer("fourier", fourier_positions(self.side, self.side))
        self.layers = nn.ModuleList(XCiTLayer(d, heads) for _ in range(depth))
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.ca_layers = nn.ModuleList(ClassAttentionLayer(d, heads) for _ in range(ca_depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def positions(self) -> Tensor:
        return self.pos_proj(self.fourier).flatten(2).transpose(1, 2)

    def forward(self, images: Tensor, pos: Tensor) -> Tensor:
        x = self.stem(images).flatten(2).transpose(1, 2) + pos
        for layer in self.layers:
            x = layer(x, self.side)
        cls = self.cls.expand(x.shape[0], -1, -1)
        for layer in self.ca_layers:
            cls = layer(cls, x)
        return self.head(self.norm(cls[:, 0]))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, d, heads, depth, ca_depth = 2, 64, 32, 4, 2, 1
    else:
        batch, image, d, heads, depth, ca_depth = 64, 224, 384, 8, 12, 2
    dtype = low_precision(device)
    fmt = torch.channels_last
    net = XCiT(image, d, heads, depth, ca_depth)
    random_batch_norm_stats(net)
    net = net.to(device=device, dtype=dtype, memory_format=fmt).eval()
    with torch.no_grad():
        pos = net.positions()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return net(images, pos)

    inputs = [
        (torch.randn(batch, 3, image, image, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    description = (
        f"XCiT-S12/16: {depth} XCA layers + {ca_depth} class-attention layers, d{d} "
        f"{heads} heads, {image}x{image}, b{batch}"
    )
    return Built(step, inputs, description, [net, pos])


if __name__ == "__main__":
    main(build, __doc__)
