"""Transformer encoder inference at batch 32, sequence 256 (hold-out).

4 pre-norm layers, d_model 1024, 16 heads, SDPA, GELU MLP (4x), bf16.

    traceinspect profile encoder_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import encoder

BATCH = 32


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, seq = (2, 32, 2, 8) if smoke else (4, 1024, 16, 256)
    dtype = low_precision(device)
    model = encoder(layers, d, heads, dtype).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(BATCH, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"encoder, batch {BATCH} x {seq} tokens", [model])


if __name__ == "__main__":
    main(build, __doc__)
