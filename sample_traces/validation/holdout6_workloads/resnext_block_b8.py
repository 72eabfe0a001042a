"""Three ResNeXt bottleneck blocks (ResNeXt-50 32x4d, first stage) on 8 x 256 x 28 x 28
(NCHW, contiguous), bf16 (sixth hold-out): each a 1x1 conv 256->128, a grouped 3x3 conv
128->128 with 32 groups and a 1x1 conv 128->256, each followed by BatchNorm2d in eval mode
(running statistics set at build), ReLU after the first two, then the identity residual
added and a ReLU.

    traceinspect profile resnext_block_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def bn(c: int) -> nn.BatchNorm2d:
    norm = nn.BatchNorm2d(c)
    # As after training: running statistics away from 0 and 1.
    norm.running_mean = torch.randn(norm.num_features) * 0.1
    norm.running_var = torch.rand(norm.num_features) + 0.5
    return norm


class ResNeXtBlock(nn.Module):
    def __init__(self, c: int, width: int, groups: int) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(c, width, 1, bias=False), bn(width)
        self.c2 = nn.Conv2d(width, width, 3, padding=1, groups=groups, bias=False)
        self.b2 = bn(width)
        self.c3, self.b3 = nn.Conv2d(width, c, 1, bias=False), bn(c)

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        return torch.relu(self.b3(self.c3(y)) + x)


def build(device: torch.device, smoke: bool) -> Built:
    c, width, groups, size, batch = (32, 16, 4, 8, 2) if smoke else (256, 128, 32, 28, 8)
    dtype = low_precision(device)
    blocks = [ResNeXtBlock(c, width, groups) for _ in range(3)]
    model = nn.Sequential(*blocks).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = f"3 ResNeXt blocks C{c} width {width} groups {groups}, batch {batch} at {size}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
