"""torch.compile'd MLP (Inductor, mode="default": Triton kernels, no CUDA graphs of its own).

8 x (Linear(1024, 1024) + LayerNorm + GELU) at batch 64, bf16. Compiled (and run once)
before the measured steps; the graph candidate is the compiled function.

    traceinspect profile compiled_mlp.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch = (2, 32, 4) if smoke else (8, 1024, 64)
    dtype = low_precision(device)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width, dtype=dtype), nn.LayerNorm(width, dtype=dtype)]
        mods.append(nn.GELU())
    model = nn.Sequential(*mods).to(device).eval()
    compiled = torch.compile(model, mode="default")

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return compiled(x)

    inputs = [(torch.randn(batch, width, device=device, dtype=dtype),) for _ in range(2)]
    step(*inputs[0])  # compile now, not inside the measured steps
    return Built(step, inputs, f"compiled {layers} x Linear({width}) + LN + GELU", [model])


if __name__ == "__main__":
    main(build, __doc__)
