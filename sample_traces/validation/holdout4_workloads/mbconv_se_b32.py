"""EfficientNet-style MBConv blocks with squeeze-and-excitation: 6 blocks (1x1 expand x4,
3x3 depthwise, SE, 1x1 project) from 32 to 96 channels, batch 32 at 56x56, bf16
channels-last (fourth hold-out).

    traceinspect profile mbconv_se_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

# (out channels, stride) per block, from 32 input channels
BLOCKS = [(32, 1), (48, 2), (48, 1), (64, 1), (96, 2), (96, 1)]
EXPAND = 4


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        mid, squeeze = cin * EXPAND, max(8, cin // 4)
        self.expand = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.SiLU()
        )
        self.depthwise = nn.Sequential(
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False),
            nn.BatchNorm2d(mid),
            nn.SiLU(),
        )
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(mid, squeeze, 1),
            nn.SiLU(),
            nn.Conv2d(squeeze, mid, 1),
            nn.Sigmoid(),
        )
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x: Tensor) -> Tensor:
        h = self.depthwise(self.expand(x))
        y = self.project(h * self.se(h))
        return x + y if self.residual else y


def build(device: torch.device, smoke: bool) -> Built:
    size, batch = (16, 2) if smoke else (56, 32)
    dtype = low_precision(device)
    blocks, cin = [], 32
    for cout, stride in BLOCKS:
        blocks.append(MBConv(cin, cout, stride))
        cin = cout
    model = nn.Sequential(*blocks).to(device=device, dtype=dtype)
    model = model.to(memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [
        (x.contiguous(memory_format=torch.channels_last),)
        for x in torch.randn(2, batch, 32, size, size, device=device, dtype=dtype)
    ]
    return Built(step, inputs, f"{len(BLOCKS)} MBConv-SE blocks, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
