"""Transformer encoder inference at batch 64, sequence 128.

6 pre-norm layers, d_model 768, 12 heads, SDPA attention, GELU MLP (4x), bf16.

    traceinspect profile encoder_b64.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from _models import encoder

BATCH = 64


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, seq = (2, 32, 2, 8) if smoke else (6, 768, 12, 128)
    dtype = low_precision(device)
    model = encoder(layers, d, heads, dtype).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(BATCH, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"encoder, batch {BATCH} x {seq} tokens", [model])


if __name__ == "__main__":
    main(build, __doc__)
