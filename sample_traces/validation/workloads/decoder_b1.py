"""Decoder transformer, one greedy decode step at batch 1.

Llama-style: 8 layers, d_model 1024, 16 heads, RMSNorm, SwiGLU, a static KV cache of 512
written in place at a position tensor, vocabulary 32000, bf16; the step embeds the last
tokens, runs the layers and picks the next tokens (argmax on the GPU, no host sync).

    traceinspect profile decoder_b1.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from _models import Decoder

BATCH = 1


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, cache, vocab = (2, 32, 2, 16, 64) if smoke else (8, 1024, 16, 512, 32000)
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
