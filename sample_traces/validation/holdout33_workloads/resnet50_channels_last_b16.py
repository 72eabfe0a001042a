"""A ResNet-50 forward in channels-last layout (thirty-third hold-out): 16 images of
3 x 224 x 224, bf16 on a GPU, eval mode, no gradients. The stem (7 x 7 convolution of
stride 2, BatchNorm, ReLU, 3 x 3 max-pooling), the 3 / 4 / 6 / 3 bottleneck blocks of
64 / 128 / 256 / 512 (x 4) channels, global average pooling and a Linear(2048, 1000); the
model and the input in ``torch.channels_last``, the BatchNorm layers with running
statistics other than 0 / 1. cuDNN's NHWC convolution kernels. Returns the (16, 1000) logits.

    traceinspect profile resnet50_channels_last_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import bottleneck_stack, conv_input, random_batch_norm_stats
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    blocks, width, size, batch = ((1, 1), 8, 32, 2) if smoke else ((3, 4, 6, 3), 64, 224, 16)
    dtype = low_precision(device)
    model = bottleneck_stack(blocks, width)
    random_batch_norm_stats(model)
    model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    return Built(step, inputs, f"ResNet-50 {blocks}, channels_last, b{batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
