"""A ViT-B/16 (Dosovitskiy et al., 2021) with Token Merging (ToMe, Bolya et al., 2023) at r = 16
classifying 8 images of 224 x 224 (fifty-fourth hold-out: one stream of some 500 kernels, a
ViT's mid-sized bf16 GEMMs on a token count that shrinks by 16 a layer, 197 -> 11, and between
them ToMe's bipartite soft matching every layer: a cosine-similarity batched matmul, a row max,
an ``argsort`` and a ``sort`` of about 100 scores a row, ``gather``s and a ``scatter_reduce``
sum, all small), laid out as facebookresearch/ToMe's ``tome.patch.timm`` patches timm's
``VisionTransformer`` (``ToMeBlock``, ``ToMeAttention``) with ``tome.merge``'s
``bipartite_soft_matching`` and ``merge_wavg``, proportional attention on, the class token
protected. The model: the 16 x 16 patch embedding (``Conv2d(3, 768, 16, stride 16)``), the
class token and 197 position embeddings, 12 pre-norm blocks (d 768, 12 heads, MLP 3072 with
GELU) and the final LayerNorm, the class token's features to a ``Linear(768, 1000)`` head. Each
block on x (8, t, 768) with token sizes s (8, t, 1), s = None (all ones) before the first merge:
attention as ``ToMeAttention`` computes it, explicitly (qkv ``Linear(768, 2304)``, q k^T x
64^-0.5, plus log s over the keys where s is known, softmax, times v, ``Linear(768, 768)``),
returning also the keys averaged over the heads as the matching metric; x = x + attention; then,
with r = min(16, (t - 1) // 2) (a schedule fixed in Python: 16 for the first 11 layers, 10 for
the last), the bipartite soft matching: the metric normalized, split into alternating tokens A
and B, scores A B^T with the class token's row set to -inf, each A token's best B match
(``max``), the A tokens ordered by it (``argsort``, descending), the r best merged into their
matches and the rest kept (their indices sorted so the class token stays first); the merge
weighted by size as ``merge_wavg`` does (x s and s each merged with ``gather`` and
``scatter_reduce(reduce="sum")``, then divided); then x = x + MLP(LayerNorm(x)). bf16 on a GPU
(fp32 on a CPU), eval mode, no gradients, random weights (torch's defaults). The sum
``scatter_reduce`` adds with atomics, so a replay may differ from an eager call in the last bits.
Input: the images (8, 3, 224, 224), random, two input sets. Returns the logits (8, 1000), fp32.

    traceinspect profile tome_vit_b16_r16_b8.py
"""

from __future__ import annotations

import math
from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

R, PATCH, CLASSES = 16, 16, 1000


def bipartite_soft_matching(metric: Tensor, r: int) -> Callable[[Tensor, str], Tensor]:
    """tome.merge.bipartite_soft_matching with the class token protected (r already clipped)."""
    metric = metric / metric.norm(dim=-1, keepdim=True)
    a, b = metric[..., ::2, :], metric[..., 1::2, :]
    scores = a @ b.transpose(-1, -2)
    scores[..., 0, :] = -math.inf
    node_max, node_idx = scores.max(dim=-1)
    edge_idx = node_max.argsort(dim=-1, descending=True)[..., None]
    unm_idx = edge_idx[..., r:, :]  # unmerged tokens
    src_idx = edge_idx[..., :r, :]  # merged tokens
    dst_idx = node_idx[..., None].gather(dim=-2, index=src_idx)
    unm_idx = unm_idx.sort(dim=1)[0]  # the class token first

    def merge(x: Tensor, mode: str = "mean") -> Tensor:
        src, dst = x[..., ::2, :], x[..., 1::2, :]
        n, t1, c = src.shape
        unm = src.gather(dim=-2, index=unm_idx.expand(n, t1 - r, c))
        src = src.gather(dim=-2, index=src_idx.expand(n, r, c))
        dst = dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=mode)
        return torch.cat([unm, dst], dim=1)

    return merge


def merge_wavg(
    merge: Callable[[Tensor, str], Tensor], x: Tensor, size: Tensor | None
) -> tuple[Tensor, Tensor]:
    """tome.merge.merge_wavg: merge by size-weighted average, sizes summed."""
    if size is None:
        size = torch.ones_like(x[..., 0, None])
    x = merge(x * size, "sum")
    size = merge(size, "sum")
    return x / size, size


class ToMeAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads, self.scale = heads, (d // heads) ** -0.5
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x: Tensor, size: Tensor | None) -> tuple[Tensor, Tensor]:
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        if size is not None:  # proportional attention
            attn = attn + size.log()[:, None, None, :, 0]
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(x), k.mean(1)


class ToMeBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = ToMeAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: Tensor, size: Tensor | None, r: int) -> tuple[Tensor, Tensor | None]:
        x_attn, metric = self.attn(self.norm1(x), size)
        x = x + x_attn
        r = min(r, (x.shape[1] - 1) // 2)
        if r > 0:
            x, size = merge_wavg(bipartite_soft_matching(metric, r), x, size)
        return x + self.mlp(self.norm2(x)), size


class ToMeViT(nn.Module):
    def __init__(self, d: int, heads: int, depth: int, image: int, r: int) -> None:
        super().__init__()
        self.r = r
        self.patch_embed = nn.Conv2d(3, d, PATCH, stride=PATCH)
        self.cls_token = nn.Parameter(0.02 * torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(0.02 * torch.randn(1, (image // PATCH) ** 2 + 1, d))
        self.blocks = nn.ModuleList(ToMeBlock(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, images: Tensor) -> Tensor:
        x = self.patch_embed(images).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1) + self.pos_embed
        size = None
        for blk in self.blocks:
            x, size = blk(x, size, self.r)
        return self.head(self.norm(x)[:, 0]).float()


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, d, heads, depth, r = (2, 64, 32, 2, 3, 4) if smoke else (8, 224, 768, 12, 12, R)
    dtype = low_precision(device)
    model = ToMeViT(d, heads, depth, image, r).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    tokens = [(image // PATCH) ** 2 + 1]
    for _ in range(depth):
        tokens.append(tokens[-1] - min(r, (tokens[-1] - 1) // 2))
    description = (
        f"ViT-B/16-like + ToMe r={r}: {depth} blocks d{d} {heads} heads, tokens "
        f"{tokens[0]}->{tokens[-1]}, bipartite matching (argsort, gather, scatter_reduce), "
        f"proportional attention, b{batch} at {image}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
