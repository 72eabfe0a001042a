"""Small 2D UNet on one 3 x 128 x 128 image, bf16, channels-last (ninth hold-out): 3 down
stages of 32, 64 and 128 channels (each two conv3x3 + BatchNorm (eval) + ReLU, keeping the
output as the skip, then a 2 x 2 max-pool), a bottleneck of two conv3x3 + BatchNorm + ReLU
at 256 channels on 16 x 16, 3 up stages (ConvTranspose2d 2 x 2 stride 2 halving the
channels, concatenation with the matching skip, two conv3x3 + BatchNorm + ReLU) back to 32
channels at 128 x 128, and a 1x1 conv head to 2 classes. The BatchNorm running statistics
are set to random values at build. Returns 1 x 2 x 128 x 128 logits.

    traceinspect profile unet_down_up_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import conv_input, random_batch_norm_stats
from torch import Tensor, nn

CLASSES = 2


def double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, widths: tuple[int, ...]) -> None:
        super().__init__()
        chans = [3, *widths]
        self.down = nn.ModuleList(
            double_conv(a, b) for a, b in zip(chans[:-1], chans[1:], strict=True)
        )
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = double_conv(widths[-1], 2 * widths[-1])
        ups = [2 * w for w in widths[::-1]]  # input channels of each up stage
        self.upconv = nn.ModuleList(nn.ConvTranspose2d(c, c // 2, 2, stride=2) for c in ups)
        self.upblock = nn.ModuleList(double_conv(c, c // 2) for c in ups)
        self.head = nn.Conv2d(widths[0], CLASSES, 1)

    def forward(self, x: Tensor) -> Tensor:
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.bottleneck(x)
        for upconv, block, skip in zip(self.upconv, self.upblock, skips[::-1], strict=True):
            x = block(torch.cat([upconv(x), skip], dim=1))
        return self.head(x)


def build(device: torch.device, smoke: bool) -> Built:
    widths, size, batch = ((4, 8, 16), 16, 1) if smoke else ((32, 64, 128), 128, 1)
    dtype = low_precision(device)
    model = UNet(widths)
    random_batch_norm_stats(model)
    model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    description = f"UNet {'-'.join(map(str, widths))} channels, batch {batch} x 3x{size}x{size}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
