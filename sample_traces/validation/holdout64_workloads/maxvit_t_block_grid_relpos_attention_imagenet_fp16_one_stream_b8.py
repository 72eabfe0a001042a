"""MaxViT-T (Tu, Talebi, Zhang, Yang, Milanfar, Bovik and Li, ECCV 2022, "MaxViT: Multi-Axis Vision
Transformer": each block an MBConv, then self-attention within non-overlapping 7 x 7 windows, then
self-attention over a sparse 7 x 7 grid spanning the whole map, both with a learned relative
position bias) classifying 8 ImageNet images at 224 x 224 (sixty-fourth hold-out: one stream, fp16:
the stem's two 3 x 3 convolutions to 64 channels at 112 x 112; 2, 2, 5 and 2 MaxViT blocks of 64,
128, 256 and 512 channels at 56, 28, 14 and 7 pixels; each block's MBConv (a pre-norm BatchNorm, the
1 x 1 expansion to 4 x the width, BatchNorm and GELU, the 3 x 3 depthwise convolution, at stride 2
in each stage's first block, BatchNorm and GELU, a squeeze-excitation to a quarter of the input
width, the 1 x 1 projection and the residual add, the shortcut an average pool where the block
downsamples and a 1 x 1 convolution where the width changes); then the block attention and the grid
attention in channels-last, each a LayerNorm, the partition into 49-token groups (a permute copy),
the QKV ``Linear``, the relative position bias of the 13 x 13 offsets gathered per head (heads of 32
channels: 2 to 16 heads) and given to ``F.scaled_dot_product_attention`` as its float mask, the
output projection, the reverse of the partition (a second permute copy) and the residual add, then a
LayerNorm, the MLP of 4 x the width with GELU and the residual add; the average pool, a LayerNorm,
the ``Linear(512, 512)`` pre-logits with tanh and the ``Linear(512, 1000)``; some 500 kernels, small
GEMMs, cuDNN convolutions, attention over 8 x 64 to 8 x 1 groups of 49 tokens and many memory-bound
norms, permutes and elementwise kernels over 1 to 13 MB (the first MBConv's expansion before its
strided depthwise convolution, (8, 256, 112, 112), 51 MB), some 86 GFLOP; some 2 to 5 ms of GPU
time). Laid out after timm's ``maxvit_tiny_tf_224`` (``embed_dim (64, 128, 256, 512)``, ``depths (2,
2, 5, 2)``, ``stem_width 64`` with biases, ``head_hidden_size 512``; its ``MbConvBlock`` with
``expand_output``, pre-norm and an average-pool ``Downsample2d`` shortcut; ``PartitionAttentionCl``
for the window and the grid partitions, ``dim_head 32``, window and grid 7 x 7; the
tanh-approximated GELU and BatchNorm eps 1e-3 of its TF-ported weights; the
``NormMlpClassifierHead``), its relative position bias written as Swin's table of (2 x 7 - 1)^2
offsets per head and an index gather, rather than timm's TF-style tables, and the SE's activation
SiLU; drop path off in eval. fp16 weights and activations on a GPU (fp32 on a CPU), eval (the
BatchNorms on random running statistics), no gradients, random weights (torch's defaults; the bias
tables 0.02 x Gaussian). Input (two input sets): the images (8, 3, 224, 224) fp16, Gaussian. Returns
the logits (8, 1000).

    traceinspect profile maxvit_t_block_grid_relpos_attention_imagenet_fp16_one_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

DEPTHS, DIMS, PARTITION, DIM_HEAD, EXPAND, BN_EPS = (
    (2, 2, 5, 2),
    (64, 128, 256, 512),
    7,
    32,
    4,
    1e-3,
)


def gelu(x: Tensor) -> Tensor:
    return F.gelu(x, approximate="tanh")


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        mid, rd = cout * EXPAND, max(cin // 4, 8)
        shortcut: list[nn.Module] = [nn.AvgPool2d(2)] if stride == 2 else []
        if cin != cout:
            shortcut.append(nn.Conv2d(cin, cout, 1))
        self.shortcut = nn.Sequential(*shortcut)
        self.pre_norm = nn.BatchNorm2d(cin, eps=BN_EPS)
        self.conv1 = nn.Conv2d(cin, mid, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(mid, eps=BN_EPS)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False)
        self.norm2 = nn.BatchNorm2d(mid, eps=BN_EPS)
        self.se_reduce = nn.Conv2d(mid, rd, 1)
        self.se_expand = nn.Conv2d(rd, mid, 1)
        self.conv3 = nn.Conv2d(mid, cout, 1)

    def forward(self, x: Tensor) -> Tensor:
        shortcut = self.shortcut(x)
        x = gelu(self.norm1(self.conv1(self.pre_norm(x))))
        x = gelu(self.norm2(self.conv2(x)))
        s = self.se_expand(F.silu(self.se_reduce(x.mean((2, 3), keepdim=True))))
        return self.conv3(x * torch.sigmoid(s)) + shortcut


def relative_index(w: int) -> Tensor:
    coords = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij")).flatten(1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (w - 1)
    return (rel[..., 0] * (2 * w - 1) + rel[..., 1]).flatten()


class PartitionAttention(nn.Module):
    """Pre-norm attention within 49-token windows or grid partitions, then the MLP (NHWC)."""

    def __init__(self, dim: int, p: int, grid: bool) -> None:
        super().__init__()
        self.p, self.grid, self.heads = p, grid, dim // DIM_HEAD
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.bias_table = nn.Parameter(0.02 * torch.randn((2 * p - 1) ** 2, self.heads))
        self.register_buffer("bias_index", relative_index(p), persistent=False)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def partition(self, x: Tensor) -> Tensor:
        b, h, w, c = x.shape
        p = self.p
        if self.grid:  # token (i, j) of group (gh, gw) sits at (i * h/p + gh, j * w/p + gw)
            x = x.view(b, p, h // p, p, w // p, c).permute(0, 2, 4, 1, 3, 5)
        else:
            x = x.view(b, h // p, p, w // p, p, c).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(-1, p * p, c)

    def reverse(self, x: Tensor, shape: torch.Size) -> Tensor:
        b, h, w, c = shape
        p = self.p
        x = x.view(b, h // p, w // p, p, p, c)
        x = x.permute(0, 3, 1, 4, 2, 5) if self.grid else x.permute(0, 1, 3, 2, 4, 5)
        return x.reshape(b, h, w, c)

    def attention(self, x: Tensor) -> Tensor:
        g, n, c = x.shape
        q, k, v = self.qkv(x).view(g, n, 3, self.heads, DIM_HEAD).permute(2, 0, 3, 1, 4).unbind(0)
        bias = self.bias_table[self.bias_index].view(n, n, self.heads).permute(2, 0, 1)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.unsqueeze(0))
        return self.proj(out.transpose(1, 2).reshape(g, n, c))

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.reverse(self.attention(self.partition(self.norm1(x))), x.shape)
        return x + self.fc2(gelu(self.fc1(self.norm2(x))))


class MaxViTBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, p: int) -> None:
        super().__init__()
        self.conv = MBConv(cin, cout, stride)
        self.block_attn = PartitionAttention(cout, p, grid=False)
        self.grid_attn = PartitionAttention(cout, p, grid=True)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x).permute(0, 2, 3, 1)
        return self.grid_attn(self.block_attn(x)).permute(0, 3, 1, 2)


class MaxViT(nn.Module):
    def __init__(self, depths: tuple[int, ...], dims: tuple[int, ...], p: int, classes: int):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, dims[0], 3, 2, 1),
            nn.BatchNorm2d(dims[0], eps=BN_EPS),
            nn.GELU(approximate="tanh"),
            nn.Conv2d(dims[0], dims[0], 3, 1, 1),
        )
        blocks, cin = [], dims[0]
        for n, dim in zip(depths, dims, strict=True):
            for i in range(n):
                blocks.append(MaxViTBlock(cin, dim, 2 if i == 0 else 1, p))
                cin = dim
        self.blocks = nn.Sequential(*blocks)
        self.norm = nn.LayerNorm(cin)
        self.pre_logits = nn.Linear(cin, cin)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.blocks(self.stem(x)).mean((2, 3))
        return self.fc(torch.tanh(self.pre_logits(self.norm(x))))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, depths, dims, p, classes = 2, 64, (1, 1, 1, 1), (32, 32, 64, 64), 2, 10
    else:
        batch, image, depths, dims, p, classes = 8, 224, DEPTHS, DIMS, PARTITION, 1000
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = MaxViT(depths, dims, p, classes)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"MaxViT-T: {sum(depths)} blocks {depths} x {dims} (MBConv + {p}x{p} block + grid "
        f"attention, relative position bias), {image} px, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
