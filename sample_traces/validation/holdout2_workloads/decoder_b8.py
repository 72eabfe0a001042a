"""Decoder transformer, one greedy decode step at batch 8 (second hold-out).

The validation set's Llama-style decoder with other sizes: 6 layers, d_model 1024,
16 heads, cache 512, vocabulary 32000, bf16.

    traceinspect profile decoder_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import Decoder

BATCH = 8


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, cache, vocab = (2, 32, 2, 16, 64) if smoke else (6, 1024, 16, 512, 32000)
    dtype = low_precision(device)
    model = Decoder(layers, d, heads, BATCH, cache, vocab, dtype).to(device).eval()

    @torch.no_grad()
    def step(tokens: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        return model(tokens, pos)

    start = cache // 2
    inputs = [
        (
            torch.randint(0, vocab, (BATCH, 1), device=device),
            torch.tensor([start + i], device=device),
        )
        for i in range(4)
    ]
    return Built(step, inputs, f"decoder decode step, batch {BATCH}", [model])


if __name__ == "__main__":
    main(build, __doc__)
