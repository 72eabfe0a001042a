"""ResNet bottleneck stack (2, 2, 2, 2 blocks) at batch 4, 160x160, bf16 channels-last
(second hold-out).

    traceinspect profile bottleneck_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import bottleneck_stack, conv_input


def build(device: torch.device, smoke: bool) -> Built:
    blocks, width, size, batch = ((1, 1), 8, 32, 2) if smoke else ((2, 2, 2, 2), 64, 160, 4)
    dtype = low_precision(device)
    model = bottleneck_stack(blocks, width).to(
        device=device, dtype=dtype, memory_format=torch.channels_last
    )
    model.eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    return Built(step, inputs, f"bottleneck stack {blocks}, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
