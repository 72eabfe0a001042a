"""A Laplacian pyramid and its reconstruction (twenty-seventh hold-out): 8 RGB images of
256 x 256, fp32, five levels. Each level blurs with a separable 5-tap Gaussian (two depthwise
``conv2d`` calls with reflect padding), downsamples by 2, upsamples back with bilinear
interpolation and keeps the difference; the reconstruction walks back up, upsampling and
adding. Then the L1 distance between input and reconstruction. Depthwise convolutions,
``pad``, ``interpolate`` and elementwise kernels over maps from 256 to 16 pixels across,
about 60 kernels, one stream.

    traceinspect profile laplacian_pyramid_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

LEVELS = 5


def build(device: torch.device, smoke: bool) -> Built:
    batch, side = (2, 32) if smoke else (8, 256)
    levels = 3 if smoke else LEVELS
    taps = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device=device) / 16
    kx = taps.view(1, 1, 1, 5).repeat(3, 1, 1, 1)
    ky = taps.view(1, 1, 5, 1).repeat(3, 1, 1, 1)

    def blur(x: Tensor) -> Tensor:
        x = F.conv2d(F.pad(x, (2, 2, 0, 0), mode="reflect"), kx, groups=3)
        return F.conv2d(F.pad(x, (0, 0, 2, 2), mode="reflect"), ky, groups=3)

    def up(x: Tensor, like: Tensor) -> Tensor:
        return F.interpolate(x, size=like.shape[-2:], mode="bilinear", align_corners=False)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        bands = []
        current = x
        for _ in range(levels):
            low = blur(current)[..., ::2, ::2]
            bands.append(current - up(low, current))
            current = low
        for band in reversed(bands):
            current = band + up(current, band)
        return (current - x).abs().mean(dim=(1, 2, 3))

    inputs = [(torch.rand(batch, 3, side, side, device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"Laplacian pyramid, {levels} levels, {side}x{side}, b{batch}", [kx, ky]
    )


if __name__ == "__main__":
    main(build, __doc__)
