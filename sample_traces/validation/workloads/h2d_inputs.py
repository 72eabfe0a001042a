"""Host-to-device input copies inside the step.

Each step copies a batch (256 x 2048 fp32 features and 256 int64 labels) from pinned host
staging buffers to the GPU with non_blocking=True, then runs 6 x (Linear(2048) + ReLU) and
a cross-entropy against the labels (reduction 'none'). The loader fills the staging
buffers between steps (here: the same buffers every step, as a replayed graph requires).
The step's argument is a per-sample weight already on the GPU.

    traceinspect profile h2d_inputs.py
"""

from __future__ import annotations

import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    layers, width, batch, classes = (2, 16, 4, 8) if smoke else (6, 2048, 256, 1000)
    cuda = device.type == "cuda"
    features = torch.randn(batch, width, pin_memory=cuda)
    labels = torch.randint(0, classes, (batch,), pin_memory=cuda)
    mods: list[nn.Module] = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    mods.append(nn.Linear(width, classes))
    model = nn.Sequential(*mods).to(device).eval()

    @torch.no_grad()
    def step(weight: torch.Tensor) -> torch.Tensor:
        x = features.to(device, non_blocking=True)
        y = labels.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y, reduction="none")
        return loss * weight

    inputs = [(torch.rand(batch, device=device),) for _ in range(2)]
    return Built(step, inputs, f"pinned H2D copy + {layers} x Linear({width})", [model])


if __name__ == "__main__":
    main(build, __doc__)
