"""Small UNet: 2 down stages (conv-GroupNorm-SiLU x2, stride-2 conv), a middle block, 2 up
stages (nearest upsample, concat skip, conv-GroupNorm-SiLU x2), 64 base channels, batch 2
at 64x64, bf16 (fourth hold-out).

    traceinspect profile unet_block_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def block(cin: int, cout: int, groups: int) -> nn.Module:
    layers: list[nn.Module] = []
    for c in (cin, cout):
        layers += [nn.Conv2d(c, cout, 3, padding=1), nn.GroupNorm(groups, cout), nn.SiLU()]
    return nn.Sequential(*layers)


class UNet(nn.Module):
    def __init__(self, base: int, groups: int) -> None:
        super().__init__()
        c1, c2, c3 = base, 2 * base, 4 * base
        self.stem = nn.Conv2d(3, c1, 3, padding=1)
        self.down1, self.pool1 = block(c1, c1, groups), nn.Conv2d(c1, c2, 3, 2, 1)
        self.down2, self.pool2 = block(c2, c2, groups), nn.Conv2d(c2, c3, 3, 2, 1)
        self.mid = block(c3, c3, groups)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.reduce2, self.up2 = nn.Conv2d(c3, c2, 1), block(2 * c2, c2, groups)
        self.reduce1, self.up1 = nn.Conv2d(c2, c1, 1), block(2 * c1, c1, groups)
        self.out = nn.Conv2d(c1, 3, 1)

    def forward(self, x: Tensor) -> Tensor:
        s1 = self.down1(self.stem(x))
        s2 = self.down2(self.pool1(s1))
        h = self.mid(self.pool2(s2))
        h = self.up2(torch.cat([self.reduce2(self.up(h)), s2], dim=1))
        h = self.up1(torch.cat([self.reduce1(self.up(h)), s1], dim=1))
        return self.out(h)


def build(device: torch.device, smoke: bool) -> Built:
    base, groups, size, batch = (8, 4, 16, 2) if smoke else (64, 32, 64, 2)
    dtype = low_precision(device)
    model = UNet(base, groups).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"UNet base {base}, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
