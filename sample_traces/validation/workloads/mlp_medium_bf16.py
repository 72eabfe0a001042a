"""Medium MLP stack in bf16: 16 x (Linear(2048, 2048) + LayerNorm + GELU) at batch 256.

GEMMs of ~2 GFLOP each next to small normalization kernels: between launch- and
compute-bound.

    traceinspect profile mlp_medium_bf16.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch = (3, 32, 8) if smoke else (16, 2048, 256)
    dtype = low_precision(device)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width, dtype=dtype), nn.LayerNorm(width, dtype=dtype)]
        mods.append(nn.GELU())
    model = nn.Sequential(*mods).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, width, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{layers} x Linear({width}) + LN + GELU, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
