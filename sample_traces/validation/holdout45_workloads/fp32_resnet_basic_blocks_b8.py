"""A small fp32 ResNet on one stream with TF32 off for convolutions and matmuls (forty-fifth
hold-out: an fp32 convolution net, whose cuDNN kernels multiply on the FP32 pipes): 8 images
of 3 x 112 x 112; a 7 x 7 stride-2 stem (64 channels), BatchNorm, ReLU and a 3 x 3 max pool;
then four basic blocks (two ``Conv2d 3 x 3`` + BatchNorm each, ReLU, identity shortcut, or a
1 x 1 stride-2 projection where the width doubles): 64, 128 (stride 2), 128, 256 (stride 2)
channels; a global average pool and ``Linear(256, 1000)``. Eval mode, no gradients. Input:
the (8, 3, 112, 112) images. Returns the (8, 1000) logits.

    traceinspect profile fp32_resnet_basic_blocks_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + self.down(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, widths = (2, 32, (8, 16, 16, 32)) if smoke else (8, 112, (64, 128, 128, 256))
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    blocks: list[nn.Module] = []
    cin = widths[0]
    for cout in widths:
        blocks.append(BasicBlock(cin, cout, 2 if cout != cin else 1))
        cin = cout
    model = (
        nn.Sequential(
            nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(widths[0]),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
            *blocks,
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(widths[-1], 1000),
        )
        .to(device)
        .eval()
    )

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"fp32 ResNet (stem + 4 basic blocks {'/'.join(map(str, widths))}), TF32 off, "
        f"{size}x{size}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
