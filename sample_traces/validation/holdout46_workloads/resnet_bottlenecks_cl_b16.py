"""Three ResNet-50 bottleneck blocks of its first stage in channels-last bf16 (forty-sixth
hold-out: convolutions with batch norm folded into eval mode): 16 images of 256 channels at
56 x 56, each block 1x1 (64), 3x3 (64), 1x1 (256) convolutions with batch norm and ReLU, an
identity shortcut. Eval mode, no gradients. Input: (16, 256, 56, 56) channels-last. Returns
the same shape.

    traceinspect profile resnet_bottlenecks_cl_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class Bottleneck(nn.Module):
    def __init__(self, c: int, mid: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(c, mid, 1, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU(),
            nn.Conv2d(mid, mid, 3, padding=1, bias=False),
            nn.BatchNorm2d(mid),
            nn.ReLU(),
            nn.Conv2d(mid, c, 1, bias=False),
            nn.BatchNorm2d(c),
        )

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.body(x) + x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, mid, side = (2, 16, 4, 8) if smoke else (16, 256, 64, 56)
    dtype = low_precision(device)
    fmt = torch.channels_last
    net = nn.Sequential(*(Bottleneck(c, mid) for _ in range(3)))
    net = net.to(device=device, dtype=dtype, memory_format=fmt).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return net(x)

    inputs = [
        (torch.randn(batch, c, side, side, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    return Built(step, inputs, f"3 bottlenecks {c}/{mid} at {side}x{side}, b{batch}", [net])


if __name__ == "__main__":
    main(build, __doc__)
