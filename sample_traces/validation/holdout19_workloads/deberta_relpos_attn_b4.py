"""DeBERTa's disentangled self-attention (He et al., 2021), one layer, on 4 sequences of 256
tokens, d 768, 12 heads of 64, bf16 (nineteenth hold-out), inference: the query, key and
value projections of the content; the relative-position embeddings (512 buckets of
distance, 2k = 512 x 768) projected to position keys and queries; content-to-content
scores (Q K^T), content-to-position scores (Q against the position keys, 256 x 512 per
head, then ``gather`` at each pair's relative distance) and position-to-content scores
(K against the position queries, gathered and transposed), summed and scaled by
1/sqrt(3 * 64); softmax; the weighted sum of V; the output projection, the residual add and
LayerNorm. About 30 kernels: eight GEMMs (four batched over the heads), two gathers over 4
x 12 x 256 x 256 indices, the softmax and the norm. Input: 4 x 256 x 768. Returns 4 x 256 x
768.

    traceinspect profile deberta_relpos_attn_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

SPAN = 256  # relative distances -SPAN..SPAN-1, as 2 * SPAN buckets


class DisentangledAttention(nn.Module):
    def __init__(self, d: int, heads: int, span: int) -> None:
        super().__init__()
        self.heads, self.span = heads, span
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.pos_q, self.pos_k = nn.Linear(d, d), nn.Linear(d, d, bias=False)
        self.rel = nn.Parameter(0.02 * torch.randn(2 * span, d))
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def split(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: Tensor, distance: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        rel = self.rel.unsqueeze(0)
        pos_k, pos_q = self.split(self.pos_k(rel)), self.split(self.pos_q(rel))  # 1 h 2s dh
        index = distance.expand(b, self.heads, n, n)
        c2c = q @ k.transpose(-1, -2)
        c2p = torch.gather(q @ pos_k.transpose(-1, -2), -1, index)
        p2c = torch.gather(k @ pos_q.transpose(-1, -2), -1, index).transpose(-1, -2)
        scores = (c2c + c2p + p2c) / math.sqrt(3 * d // self.heads)
        att = torch.softmax(scores.float(), dim=-1).to(x.dtype) @ v
        return self.norm(x + self.out(att.transpose(1, 2).reshape(b, n, d)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads, span = (2, 16, 32, 2, 16) if smoke else (4, 256, 768, 12, SPAN)
    dtype = low_precision(device)
    model = DisentangledAttention(d, heads, span).to(device=device, dtype=dtype).eval()
    pos = torch.arange(n, device=device)
    distance = (pos.unsqueeze(1) - pos.unsqueeze(0)).clamp(-span, span - 1) + span

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x, distance)

    inputs = [(torch.randn(batch, n, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"DeBERTa disentangled attention d{d} {heads} heads, batch {batch} x {n}"
    return Built(step, inputs, description, [model, distance])


if __name__ == "__main__":
    main(build, __doc__)
