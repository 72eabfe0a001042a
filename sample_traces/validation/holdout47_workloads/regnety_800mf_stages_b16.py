"""The second and third stages of a RegNetY-800MF in channels-last bf16 (forty-seventh
hold-out: RegNet's Y block, a grouped 3x3 convolution of group width 16 with squeeze-and-
excitation between two 1x1 convolutions): 16 feature maps of 64 channels at 56 x 56. Stage 2:
3 Y blocks of width 144 (9 groups), the first at stride 2 (to 28 x 28); stage 3: 8 Y blocks
of width 320 (20 groups), the first at stride 2 (to 14 x 14). A Y block: 1x1 convolution +
BatchNorm + ReLU, grouped 3x3 convolution + BatchNorm + ReLU, squeeze-and-excitation (global
average pool, 1x1 convolution to a quarter of the block's input channels, ReLU, 1x1
convolution back, sigmoid, multiply), 1x1 convolution + BatchNorm, then the shortcut
(identity, or a strided 1x1 convolution + BatchNorm in a stage's first block) added and a
ReLU. Eval mode (running batch-norm statistics), no gradients, one stream. Input: (16, 64, 56,
56) channels-last. Returns (16, 320, 14, 14).

    traceinspect profile regnety_800mf_stages_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import conv_bn_relu
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn


class YBlock(nn.Module):
    def __init__(self, cin: int, width: int, stride: int, group_width: int) -> None:
        super().__init__()
        self.a = conv_bn_relu(cin, width, 1, kernel=1)
        self.b = nn.Sequential(
            nn.Conv2d(width, width, 3, stride, 1, groups=width // group_width, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        squeeze = max(1, cin // 4)
        self.se = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(width, squeeze, 1),
            nn.ReLU(),
            nn.Conv2d(squeeze, width, 1),
            nn.Sigmoid(),
        )
        self.c = nn.Sequential(nn.Conv2d(width, width, 1, bias=False), nn.BatchNorm2d(width))
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != width:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, width, 1, stride, bias=False), nn.BatchNorm2d(width)
            )

    def forward(self, x: Tensor) -> Tensor:
        y = self.b(self.a(x))
        y = y * self.se(y)
        return torch.relu(self.c(y) + self.shortcut(x))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, cin, side, stages, group_width = 2, 8, 16, [(16, 1), (32, 2)], 8
    else:
        batch, cin, side, stages, group_width = 16, 64, 56, [(144, 3), (320, 8)], 16
    dtype = low_precision(device)
    fmt = torch.channels_last
    layers: list[nn.Module] = []
    c = cin
    for width, depth in stages:
        for i in range(depth):
            layers.append(YBlock(c, width, 2 if i == 0 else 1, group_width))
            c = width
    net = nn.Sequential(*layers)
    random_batch_norm_stats(net)
    net = net.to(device=device, dtype=dtype, memory_format=fmt).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return net(x)

    inputs = [
        (torch.randn(batch, cin, side, side, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    description = (
        f"RegNetY stages {' + '.join(f'{d}x{w}' for w, d in stages)} (group width "
        f"{group_width}, SE) from {cin}x{side}x{side}, b{batch}"
    )
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
