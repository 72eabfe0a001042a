"""A SegFormer forward (Xie et al., 2021): the Mix Transformer MiT-B1 encoder, whose efficient
self-attention attends to a spatially reduced key / value grid, and the all-MLP decoder, the
per-pixel class logits of a semantic segmentation (forty-third hold-out): 4 images of 3 x 512 x 512,
19 classes (Cityscapes' count), bf16 on a GPU, eval mode (no dropout, no drop path), no gradients;
the decoder's BatchNorm in eval mode with running statistics set at build. Encoder, 4 stages of dims
64, 128, 320, 512 at 128 x 128, 64 x 64, 32 x 32 and 16 x 16 tokens, 2 blocks each, heads 1, 2, 5, 8
(head dim 64), spatial-reduction ratios 8, 4, 2, 1. Each stage begins with an overlapping patch
embedding, ``Conv2d(cin, dim, 7, stride 4, padding 3)`` (stage 1) or ``Conv2d(cin, dim, 3, stride 2,
padding 1)``, flattened to tokens, + LayerNorm. Each block, pre-norm: x + attention(LayerNorm(x)),
the shared ``_blocks.PreNormAttention``'s LayerNorm and attention in its cross-attention form, the
queries ``Linear(dim, dim)`` of every normalized token and the keys and values ``Linear(dim, 2
dim)`` of the reduced grid, ``Conv2d(dim, dim, r, stride r)`` on the normalized token grid +
LayerNorm (at ratio 1 the normalized tokens themselves): stage 1's 16,384 queries per image attend
to 256 keys, stage 2's 4,096 to 256, stage 3's 1,024 to 256, stage 4's 256 to 256, in
``F.scaled_dot_product_attention``; then x + Mix-FFN(LayerNorm(x)): ``Linear(dim, 4 dim)``, a
depthwise 3 x 3 ``Conv2d(4 dim, 4 dim, groups 4 dim)`` on the token grid, GELU, ``Linear(4 dim,
dim)``. A LayerNorm ends each stage, its tokens reshaped to a (4, dim, h, w) feature map for the
next stage and the decoder. Decoder: each stage's map through ``Linear(dim, 256)`` (a 1 x 1
projection on the tokens), bilinearly upsampled to 128 x 128 (``F.interpolate``,
align_corners=False), the four concatenated (4, 1024, 128, 128); the shared ``_blocks.conv_bn_relu``
fusion, a 1 x 1 ``Conv2d(1024, 256)`` + BatchNorm + ReLU; the classifier, a 1 x 1 ``Conv2d(256,
19)``. Input: the images (4, 3, 512, 512). Returns the logits (4, 19, 128, 128) at a quarter of the
input's resolution (bf16 on a GPU).

    traceinspect profile segformer_mit_b1_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import PreNormAttention, conv_bn_relu
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

DIMS, HEADS, RATIOS, DEPTH = (64, 128, 320, 512), (1, 2, 5, 8), (8, 4, 2, 1), 2
DECODER, CLASSES = 256, 19


class SpatialReduction(nn.Module):
    """The keys' and values' grid: a stride-r conv + LayerNorm, or the tokens at ratio 1."""

    def __init__(self, dim: int, ratio: int) -> None:
        super().__init__()
        self.ratio = ratio
        if ratio > 1:
            self.conv, self.norm = nn.Conv2d(dim, dim, ratio, ratio), nn.LayerNorm(dim)

    def forward(self, x: Tensor, h: int, w: int) -> Tensor:  # x: normalized tokens (b, n, c)
        if self.ratio == 1:
            return x
        b, _, c = x.shape
        grid = self.conv(x.transpose(1, 2).reshape(b, c, h, w))
        return self.norm(grid.flatten(2).transpose(1, 2))


class MixFFN(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.dwconv = nn.Conv2d(4 * dim, 4 * dim, 3, padding=1, groups=4 * dim)

    def forward(self, x: Tensor, h: int, w: int) -> Tensor:
        b, n, _ = x.shape
        y = self.fc1(self.norm(x))
        y = self.dwconv(y.transpose(1, 2).reshape(b, -1, h, w)).flatten(2).transpose(1, 2)
        return x + self.fc2(F.gelu(y))


class MiTBlock(nn.Module):
    def __init__(self, dim: int, heads: int, ratio: int) -> None:
        super().__init__()
        self.attn = PreNormAttention(dim, heads, cross=True)
        self.reduce = SpatialReduction(dim, ratio)
        self.ffn = MixFFN(dim)

    def forward(self, x: Tensor, h: int, w: int) -> Tensor:
        normed = self.attn.norm(x)  # the block's pre-norm, shared by queries and the reduction
        x = x + self.attn.attn(normed, self.reduce(normed, h, w))
        return self.ffn(x, h, w)


class MiTStage(nn.Module):
    def __init__(self, cin: int, dim: int, heads: int, ratio: int, first: bool) -> None:
        super().__init__()
        kernel, stride = (7, 4) if first else (3, 2)
        self.embed = nn.Conv2d(cin, dim, kernel, stride, kernel // 2)
        self.embed_norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(MiTBlock(dim, heads, ratio) for _ in range(DEPTH))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: Tensor) -> Tensor:  # (b, cin, H, W) -> (b, dim, h, w)
        x = self.embed(x)
        b, c, h, w = x.shape
        x = self.embed_norm(x.flatten(2).transpose(1, 2))
        for block in self.blocks:
            x = block(x, h, w)
        return self.norm(x).transpose(1, 2).reshape(b, c, h, w)


class SegFormer(nn.Module):
    def __init__(self, dims: tuple[int, ...], decoder: int) -> None:
        super().__init__()
        self.stages = nn.ModuleList(
            MiTStage(cin, dim, heads, ratio, i == 0)
            for i, (cin, dim, heads, ratio) in enumerate(
                zip((3, *dims[:-1]), dims, HEADS, RATIOS, strict=True)
            )
        )
        self.project = nn.ModuleList(nn.Linear(dim, decoder) for dim in dims)
        self.fuse = conv_bn_relu(len(dims) * decoder, decoder, kernel=1)
        self.classify = nn.Conv2d(decoder, CLASSES, 1)

    def forward(self, images: Tensor) -> Tensor:
        feats, x = [], images
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        size = feats[0].shape[-2:]
        ups = []
        for feat, proj in zip(feats, self.project, strict=True):
            b, _, h, w = feat.shape
            y = proj(feat.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, h, w)
            ups.append(F.interpolate(y, size=size, mode="bilinear", align_corners=False))
        return self.classify(self.fuse(torch.cat(ups, dim=1)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, dims, decoder = (1, 64, (8, 16, 40, 64), 16) if smoke else (4, 512, DIMS, DECODER)
    dtype = low_precision(device)
    model = SegFormer(dims, decoder)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"SegFormer MiT-B1: 4 stages dims {'-'.join(map(str, dims))} x {DEPTH} blocks, "
        f"efficient attention (reduction {'/'.join(map(str, RATIOS))}), Mix-FFN, all-MLP decoder "
        f"{decoder} -> {CLASSES} classes, b{batch} x {size}^2",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
