"""ResNet-18 inference at batch 1 (thirtieth hold-out), the latency case CUDA graphs are
most often tried on: one 224 x 224 image, fp16 and channels-last on a GPU, BatchNorm folded
in eval mode but not fused (cuDNN convolution, BatchNorm and ReLU kernels each), the
standard stem (7 x 7 convolution stride 2, max-pool), four stages of two basic blocks
(64, 128, 256, 512 channels, a 1 x 1 projection where a stage downsamples), global average
pooling and a Linear 512 -> 1,000. About 60 small kernels, one stream.

    traceinspect profile resnet18_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


class Basic(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else None
        )

    def forward(self, x: Tensor) -> Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down is not None else x))


def build(device: torch.device, smoke: bool) -> Built:
    size, width = (32, 8) if smoke else (224, 64)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    widths = [width, 2 * width, 4 * width, 8 * width]
    layers: list[nn.Module] = [
        nn.Conv2d(3, width, 7, 2, 3, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
    ]
    cin = width
    for i, w in enumerate(widths):
        layers += [Basic(cin, w, 1 if i == 0 else 2), Basic(w, w, 1)]
        cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    model = nn.Sequential(*layers).to(device, dtype).eval()
    if device.type == "cuda":
        model = model.to(memory_format=torch.channels_last)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    def image() -> Tensor:
        x = torch.randn(1, 3, size, size, device=device, dtype=dtype)
        return x.to(memory_format=torch.channels_last) if device.type == "cuda" else x

    inputs = [(image(),) for _ in range(2)]
    return Built(step, inputs, f"ResNet-18 {size}x{size}, b1", [model])


if __name__ == "__main__":
    main(build, __doc__)
