"""ResNet bottleneck stack (ResNet-50 layout, 3/4/6/3 blocks) inference at batch 32, 224x224.

eval, bf16, channels_last.

    traceinspect profile bottleneck_b32.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from _models import bottleneck_stack, conv_input


def build(device: torch.device, smoke: bool) -> Built:
    blocks, width, size, batch = ((1, 1), 8, 32, 2) if smoke else ((3, 4, 6, 3), 64, 224, 32)
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
