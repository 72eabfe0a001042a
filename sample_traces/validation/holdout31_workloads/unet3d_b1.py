"""A 3D U-Net on one volume, as medical segmentation runs it at inference (thirty-first
hold-out): a 1 x 64 x 64 x 64 volume, fp16 on a GPU, three levels of two 3 x 3 x 3
convolutions (16, 32, 64 channels) with BatchNorm (eval) and ReLU, max-pooling between
them, a bottleneck of 128 channels, transposed convolutions back up with the skip
connections concatenated, and a 1 x 1 x 1 convolution to 4 classes. cuDNN's 3D
convolution kernels, a few dozen of them, each long.

    traceinspect profile unet3d_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def double(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(),
        nn.Conv3d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(),
    )  # fmt: skip


class UNet3D(nn.Module):
    def __init__(self, widths: tuple[int, ...], classes: int) -> None:
        super().__init__()
        self.down = nn.ModuleList()
        cin = 1
        for w in widths:
            self.down.append(double(cin, w))
            cin = w
        self.bottom = double(cin, 2 * cin)
        self.ups = nn.ModuleList()
        self.merge = nn.ModuleList()
        cin = 2 * cin
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose3d(cin, w, 2, stride=2))
            self.merge.append(double(2 * w, w))
            cin = w
        self.head = nn.Conv3d(cin, classes, 1)
        self.pool = nn.MaxPool3d(2)

    def forward(self, x: Tensor) -> Tensor:
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottom(x)
        for up, merge, skip in zip(self.ups, self.merge, reversed(skips), strict=True):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def build(device: torch.device, smoke: bool) -> Built:
    size, widths = (16, (4, 8, 16)) if smoke else (64, (16, 32, 64))
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = UNet3D(widths, 4).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(1, 1, size, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"3D U-Net {size}^3, widths {widths}, b1", [model])


if __name__ == "__main__":
    main(build, __doc__)
