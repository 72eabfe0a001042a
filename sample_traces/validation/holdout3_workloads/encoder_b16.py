"""Transformer encoder (4 layers, d 512, 8 heads) over 128 tokens at batch 16, bf16 (third
hold-out).

    traceinspect profile encoder_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import encoder


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, tokens, batch = (1, 32, 2, 8, 2) if smoke else (4, 512, 8, 128, 16)
    dtype = low_precision(device)
    model = encoder(layers, d, heads, dtype).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"encoder {layers} x d{d}, {tokens} tokens, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
