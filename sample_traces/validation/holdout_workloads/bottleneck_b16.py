"""ResNet bottleneck stack (ResNet-50 layout, 3/4/6/3 blocks) at batch 16, 160x160 (hold-out).

eval, bf16, channels_last.

    traceinspect profile bottleneck_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import bottleneck_stack, conv_input


def build(device: torch.device, smoke: bool) -> Built:
    blocks, width, size, batch = ((1, 1), 8, 32, 2) if smoke else ((3, 4, 6, 3), 64, 160, 16)
    dtype = low_precision(device)
    model = bottleneck_stack(blocks, width).to(
        device=device, dtype=dtype, memory_format=torch.channels_last
    )
    model.eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    return Built(step, inputs, f"ResNet-50 bottlenecks, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
