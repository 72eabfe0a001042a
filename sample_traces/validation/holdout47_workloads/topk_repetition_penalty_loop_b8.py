"""Sixteen steps of token generation with a repetition penalty and top-k sampling, written as
a Python loop of small kernels (forty-seventh hold-out: a decode-time sampler loop where every
token costs some twenty launches and almost no GPU time): 8 sequences, a 64-token prompt, a
vocabulary of 8192, a 512-wide state. Each step: the LM head ``Linear(512, 8192)`` without
bias (bf16) to fp32 logits; the CTRL-style repetition penalty 1.2 on every token seen so far
(``gather`` of the prompt and generated ids, positive logits divided and negative ones
multiplied, ``scatter_`` back); temperature 0.7; ``topk`` 40; ``softmax`` and ``cumsum`` of the
40 values; inverse-CDF sampling against one caller-supplied uniform draw per sequence and step
(the count of cumulative values below it, clamped to 39), so the step is deterministic;
``gather`` of the token id, written into a preallocated (8, 80) history; then a recurrent
state update h <- tanh(``Linear(1024, 512)``([h, embedding(token)])). bf16 on a GPU except the
sampling math, no gradients, one stream. Inputs: the initial state (8, 512), the prompt ids
(8, 64) int64 and the uniform draws (8, 16) fp32. Returns the 16 generated ids, (8, 16) int64.

    traceinspect profile topk_repetition_penalty_loop_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

PENALTY, TEMPERATURE, TOP_K = 1.2, 0.7, 40


def build(device: torch.device, smoke: bool) -> Built:
    batch, prompt, new, vocab, d = (2, 6, 3, 100, 16) if smoke else (8, 64, 16, 8192, 512)
    dtype = low_precision(device)
    embed = nn.Embedding(vocab, d).to(device, dtype).eval()
    cell = nn.Linear(2 * d, d).to(device, dtype).eval()
    head = nn.Linear(d, vocab, bias=False).to(device, dtype).eval()

    @torch.no_grad()
    def step(h: Tensor, prompt_ids: Tensor, u: Tensor) -> Tensor:
        history = torch.empty(batch, prompt + new, dtype=torch.long, device=device)
        history[:, :prompt] = prompt_ids
        for t in range(new):
            logits = head(h).float()
            seen = history[:, : prompt + t]
            prev = logits.gather(1, seen)
            logits.scatter_(1, seen, torch.where(prev > 0, prev / PENALTY, prev * PENALTY))
            values, ids = (logits / TEMPERATURE).topk(TOP_K, dim=-1)
            cdf = values.softmax(dim=-1).cumsum(dim=-1)
            choice = (cdf < u[:, t : t + 1]).sum(dim=-1, keepdim=True).clamp_(max=TOP_K - 1)
            token = ids.gather(1, choice)
            history[:, prompt + t : prompt + t + 1] = token
            h = torch.tanh(cell(torch.cat([h, embed(token).squeeze(1)], dim=-1)))
        return history[:, prompt:]

    inputs = [
        (
            torch.randn(batch, d, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, prompt), device=device),
            torch.rand(batch, new, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"{new} decode steps, repetition penalty {PENALTY} + top-{TOP_K} sampling, vocab "
        f"{vocab}, prompt {prompt}, b{batch}"
    )
    return Built(step, inputs, description, [embed, cell, head])


if __name__ == "__main__":
    main(build, __doc__)
