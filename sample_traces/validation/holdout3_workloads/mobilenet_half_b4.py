"""MobileNetV2 at width 0.5, batch 4 at 192x192, bf16 channels-last (third hold-out).

    traceinspect profile mobilenet_half_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import conv_input, mobilenet_v2


def build(device: torch.device, smoke: bool) -> Built:
    size, batch = (32, 2) if smoke else (192, 4)
    dtype = low_precision(device)
    model = mobilenet_v2(0.5).to(device=device, dtype=dtype, memory_format=torch.channels_last)
    model.eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    return Built(step, inputs, f"MobileNetV2 x0.5, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
