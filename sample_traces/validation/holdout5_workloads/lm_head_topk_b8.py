"""Sampling head of a language model: final LayerNorm and LM head Linear(1024 -> 32000, bf16)
on the last token of 8 sequences (8 x 128 x 1024 hidden states as input), log_softmax in fp32,
topk(50) and a softmax over the top 50, a greedy pick by argmax and a gather of its
log-probability (fifth hold-out).

    traceinspect profile lm_head_topk_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    d, vocab, k, batch, seq = (32, 500, 10, 2, 8) if smoke else (1024, 32_000, 50, 8, 128)
    dtype = low_precision(device)
    norm = nn.LayerNorm(d).to(device=device, dtype=dtype)
    head = nn.Linear(d, vocab, bias=False).to(device=device, dtype=dtype)

    @torch.no_grad()
    def step(hidden: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        logits = head(norm(hidden[:, -1]))
        logp = torch.log_softmax(logits.float(), dim=-1)
        top, top_ids = logp.topk(k, dim=-1)
        greedy = logp.argmax(dim=-1, keepdim=True)
        return torch.softmax(top, dim=-1), top_ids, greedy, logp.gather(-1, greedy)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"LM head {d}->{vocab} + top-{k}, batch {batch}"
    return Built(step, inputs, description, [norm, head])


if __name__ == "__main__":
    main(build, __doc__)
