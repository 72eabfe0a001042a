"""MLP stack: 48 x (Linear(512) + ReLU) at batch 64, fp32 (third hold-out).

    traceinspect profile mlp_relu_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch = (4, 16, 4) if smoke else (48, 512, 64)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods).to(device).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, width, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{layers} x Linear({width}) + ReLU, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
