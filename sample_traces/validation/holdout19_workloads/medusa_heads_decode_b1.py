"""Medusa speculative-decoding heads (Cai et al., 2024) on one decode token, bf16 (nineteenth
hold-out), inference: the base model's last hidden state (1 x 1024) goes through the final
RMSNorm, the LM head (1024 -> 32000) and four Medusa heads, each a residual block
``h + SiLU(Linear(h))`` (1024 -> 1024) and its own LM head (1024 -> 32000, 65.5 MB in bf16
apiece); each of the five logit rows takes its top-4 candidates (``topk``), and the step
returns the candidates' ids stacked (5 x 4, int64) and their log-probabilities (5 x 4).
About 40 kernels, five matrix-vector products over 65 MB weights (memory-bound, some 15 µs
each on an H200) among tiny norms, activations, softmaxes and top-k's: mixed. Input: 1 x 1024
hidden state. Returns (5 x 4 int64, 5 x 4 fp32).

    traceinspect profile medusa_heads_decode_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

HEADS, TOP = 4, 4


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype) * self.weight


class MedusaHead(nn.Module):
    def __init__(self, d: int, vocab: int) -> None:
        super().__init__()
        self.block = nn.Linear(d, d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, h: Tensor) -> Tensor:
        return self.lm_head(h + F.silu(self.block(h)))


def build(device: torch.device, smoke: bool) -> Built:
    d, vocab = (32, 100) if smoke else (1024, 32000)
    dtype = low_precision(device)
    norm = RMSNorm(d)
    lm_head = nn.Linear(d, vocab, bias=False)
    heads = nn.ModuleList(MedusaHead(d, vocab) for _ in range(HEADS))
    model = nn.ModuleList([norm, lm_head, heads]).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(hidden: Tensor) -> tuple[Tensor, Tensor]:
        h = norm(hidden)
        logits = [lm_head(h)] + [head(h) for head in heads]
        ids, scores = [], []
        for row in logits:
            top = torch.log_softmax(row.float(), dim=-1).topk(TOP, dim=-1)
            ids.append(top.indices)
            scores.append(top.values)
        return torch.cat(ids), torch.cat(scores)

    inputs = [(torch.randn(1, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"Medusa: RMSNorm, LM head and {HEADS} heads ({d} -> {vocab}), top-{TOP} each"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
