"""Narrow, deep MLP stack in fp32: 96 x (Linear(256, 256) + Tanh) at batch 32.

Hundreds of tiny kernels: launch-bound.

    traceinspect profile mlp_narrow_fp32.py
"""

from __future__ import annotations

import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch = (4, 16, 4) if smoke else (96, 256, 32)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.Tanh()]
    model = nn.Sequential(*mods).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, width, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{layers} x Linear({width}) + Tanh, fp32", [model])


if __name__ == "__main__":
    main(build, __doc__)
