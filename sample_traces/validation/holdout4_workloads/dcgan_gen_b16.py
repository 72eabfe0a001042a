"""DCGAN generator: ConvTranspose2d from a 100x1x1 code up to a 3x64x64 image through 512,
256, 128 and 64 channels with BatchNorm2d (eval) and ReLU, Tanh at the end, batch 16, bf16
(fourth hold-out).

    traceinspect profile dcgan_gen_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CODE = 100


def generator(width: int) -> nn.Module:
    channels = [width * 8, width * 4, width * 2, width]
    layers: list[nn.Module] = []
    cin = CODE
    for i, c in enumerate(channels):
        stride, padding = (1, 0) if i == 0 else (2, 1)
        layers += [
            nn.ConvTranspose2d(cin, c, 4, stride, padding, bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(),
        ]
        cin = c
    layers += [nn.ConvTranspose2d(cin, 3, 4, 2, 1, bias=False), nn.Tanh()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    width, batch = (4, 2) if smoke else (64, 16)
    dtype = low_precision(device)
    model = generator(width).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(z: Tensor) -> Tensor:
        return model(z)

    inputs = [(torch.randn(batch, CODE, 1, 1, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"DCGAN generator (width {width}), batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
