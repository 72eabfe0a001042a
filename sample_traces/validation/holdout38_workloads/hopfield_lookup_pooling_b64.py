"""A sequence classifier built from modern Hopfield layers (Ramsauer et al., 2021, "Hopfield
Networks is All You Need", after the hopfield-layers library's ``HopfieldLayer`` with learned
stored patterns and its ``HopfieldPooling``) at batch 64 (thirty-eighth hold-out): 64
sequences of 64 tokens of width 256, bf16 on a GPU, eval mode, no gradients. 2 pre-LayerNorm
blocks, each x + lookup(LayerNorm(x)) and then x + FFN(LayerNorm(x)), the FFN ``Linear(256,
1024)`` + GELU + ``Linear(1024, 256)``. The lookup is an associative memory of 1,024 learned
stored patterns (a (1024, 256) parameter) and their learned target patterns (another), 4 heads
of 64, beta = 1 / sqrt(64): the state patterns xi = ``Linear(256, 256)`` of the tokens, the
keys K = ``Linear(256, 256, bias=False)`` of the stored patterns and the values V =
``Linear(256, 256, bias=False)`` of the target patterns, recomputed every step, per head
(4, 1024, 64); 3 Hopfield update iterations xi <- softmax(beta xi K^T) K over the 1,024
patterns ((64, 4, 64, 1024) scores, ``torch.matmul`` against the per-head keys), then the
retrieval softmax(beta xi K^T) V, the heads merged and ``Linear(256, 256)``. Then a final
LayerNorm and the pooling: 8 learned state patterns (8, 256), projected by ``Linear(256,
256)``, retrieve from the 64 tokens (keys and values ``Linear(256, 256)`` of the tokens, 4
heads, one update step: softmax(beta xi K^T) V over the 64 tokens), the (64, 8, 256) result
flattened to (64, 2048), ``Linear(2048, 256)`` + GELU + ``Linear(256, 10)``. Input: the token
embeddings (64, 64, 256). Returns the class logits (64, 10), fp32.

    traceinspect profile hopfield_lookup_pooling_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, UPDATE_STEPS, CLASSES = 2, 3, 10


def split_heads(x: Tensor, heads: int) -> Tensor:
    """(..., n, d) -> (..., heads, n, d / heads)."""
    *lead, n, d = x.shape
    return x.view(*lead, n, heads, d // heads).transpose(-3, -2)


def merge_heads(x: Tensor) -> Tensor:
    """(..., heads, n, d_h) -> (..., n, heads d_h)."""
    return x.transpose(-3, -2).flatten(-2)


class HopfieldLookup(nn.Module):
    """Tokens query a memory of learned stored / target patterns, with update iterations."""

    def __init__(self, d: int, patterns: int, heads: int) -> None:
        super().__init__()
        self.heads, self.beta = heads, (d // heads) ** -0.5
        self.stored = nn.Parameter(torch.randn(patterns, d) * 0.5)
        self.targets = nn.Parameter(torch.randn(patterns, d) * 0.5)
        self.state_proj = nn.Linear(d, d)
        self.key_proj = nn.Linear(d, d, bias=False)
        self.value_proj = nn.Linear(d, d, bias=False)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        xi = split_heads(self.state_proj(x), self.heads)  # (b, h, n, d_h)
        k = split_heads(self.key_proj(self.stored), self.heads)  # (h, p, d_h)
        v = split_heads(self.value_proj(self.targets), self.heads)
        kt = k.transpose(-2, -1)
        for _ in range(UPDATE_STEPS):
            xi = torch.matmul((self.beta * torch.matmul(xi, kt)).softmax(dim=-1), k)
        attn = (self.beta * torch.matmul(xi, kt)).softmax(dim=-1)
        return self.out_proj(merge_heads(torch.matmul(attn, v)))


class HopfieldPooling(nn.Module):
    """Learned state patterns retrieve from the tokens (one update step)."""

    def __init__(self, d: int, queries: int, heads: int) -> None:
        super().__init__()
        self.heads, self.beta = heads, (d // heads) ** -0.5
        self.queries = nn.Parameter(torch.randn(queries, d) * 0.5)
        self.state_proj = nn.Linear(d, d)
        self.key_proj = nn.Linear(d, d)
        self.value_proj = nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        xi = split_heads(self.state_proj(self.queries), self.heads)  # (h, q, d_h)
        k = split_heads(self.key_proj(x), self.heads)  # (b, h, n, d_h)
        v = split_heads(self.value_proj(x), self.heads)
        attn = (self.beta * torch.matmul(xi, k.transpose(-2, -1))).softmax(dim=-1)
        return merge_heads(torch.matmul(attn, v))  # (b, q, d)


class Block(nn.Module):
    def __init__(self, d: int, patterns: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.lookup = HopfieldLookup(d, patterns, heads)
        self.ffn = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.lookup(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class HopfieldClassifier(nn.Module):
    def __init__(self, d: int, patterns: int, heads: int, hidden: int, queries: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(Block(d, patterns, heads, hidden) for _ in range(BLOCKS)))
        self.norm = nn.LayerNorm(d)
        self.pool = HopfieldPooling(d, queries, heads)
        self.head = nn.Sequential(nn.Linear(queries * d, d), nn.GELU(), nn.Linear(d, CLASSES))

    def forward(self, x: Tensor) -> Tensor:
        pooled = self.pool(self.norm(self.blocks(x)))
        return self.head(pooled.flatten(1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, heads, patterns, hidden, queries = (
        (2, 8, 32, 2, 16, 64, 2) if smoke else (64, 64, 256, 4, 1024, 1024, 8)
    )
    dtype = low_precision(device)
    model = HopfieldClassifier(d, patterns, heads, hidden, queries).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x).float()

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"modern Hopfield classifier, {BLOCKS} lookup blocks over {patterns} stored patterns x "
        f"{UPDATE_STEPS} updates + Hopfield pooling ({queries} queries), d{d}, b{batch} x {tokens}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
