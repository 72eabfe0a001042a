"""MLP stack: 32 x (Linear(2048) + SiLU) at batch 8, bf16 (second hold-out).

    traceinspect profile mlp_silu_wide.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch = (4, 16, 4) if smoke else (32, 2048, 8)
    dtype = low_precision(device)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width, dtype=dtype), nn.SiLU()]
    model = nn.Sequential(*mods).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, width, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{layers} x Linear({width}) + SiLU, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
