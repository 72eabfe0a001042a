"""ResNet-18 inference on 16 images of 3 x 128 x 128, bf16, channels-last (tenth hold-out):
a stem (conv7x7 stride 2 to 64 channels, BatchNorm, ReLU, 3 x 3 max-pool stride 2), then 4
stages of 2 BasicBlocks at 64, 128, 256 and 512 channels on 32 x 32, 16 x 16, 8 x 8 and
4 x 4. A BasicBlock: conv3x3 (stride 2 in the first block of stages 2-4), BatchNorm, ReLU,
conv3x3, BatchNorm, plus the shortcut (a 1x1 conv stride 2 and BatchNorm where the shape
changes, else the input), ReLU. Then global average pooling and a Linear 512->1000. Eval
mode: every BatchNorm is its own kernel; the running statistics are set to random values at
build. Returns 16 x 1000 logits.

    traceinspect profile resnet_basic_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import conv_input, random_batch_norm_stats
from torch import Tensor, nn


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + self.shortcut(x))


def resnet_basic(widths: tuple[int, ...], blocks: int, classes: int) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(3, widths[0], 7, 2, 3, bias=False),
        nn.BatchNorm2d(widths[0]),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = widths[0]
    for stage, width in enumerate(widths):
        for i in range(blocks):
            layers.append(BasicBlock(cin, width, 2 if stage > 0 and i == 0 else 1))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    widths, size, classes, batch = (
        ((8, 16, 16, 32), 32, 10, 2) if smoke else ((64, 128, 256, 512), 128, 1000, 16)
    )
    dtype = low_precision(device)
    model = resnet_basic(widths, 2, classes)
    random_batch_norm_stats(model)
    model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    description = (
        f"ResNet-18 BasicBlocks {'-'.join(map(str, widths))}, batch {batch} x 3x{size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
