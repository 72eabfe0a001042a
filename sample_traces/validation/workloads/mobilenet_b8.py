"""MobileNetV2 (depthwise-separable inverted residuals) inference at batch 8, 224x224.

torchvision's layout written out, eval, bf16, channels_last.

    traceinspect profile mobilenet_b8.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main
from _models import conv_input, mobilenet_v2

BATCH = 8


def build(device: torch.device, smoke: bool) -> Built:
    width, size = (0.25, 32) if smoke else (1.0, 224)
    dtype = low_precision(device)
    model = mobilenet_v2(width).to(device=device, dtype=dtype, memory_format=torch.channels_last)
    model.eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = conv_input(BATCH, size, device, dtype)
    return Built(step, inputs, f"MobileNetV2, batch {BATCH} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
