"""torch.compile'd transformer encoder blocks (Inductor, mode="default"), 8 x 128 (hold-out).

2 pre-norm encoder layers, d_model 1024, 16 heads, SDPA, bf16. Compiled (and run once)
before the measured steps; the graph candidate is the compiled function.

    traceinspect profile compiled_block.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import encoder


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, seq, batch = (1, 32, 2, 8, 2) if smoke else (2, 1024, 16, 128, 8)
    dtype = low_precision(device)
    model = encoder(layers, d, heads, dtype).to(device).eval()
    compiled = torch.compile(model, mode="default")

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return compiled(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    step(*inputs[0])  # compile now, not inside the measured steps
    return Built(step, inputs, f"compiled {layers} encoder layers, d {d}", [model])


if __name__ == "__main__":
    main(build, __doc__)
