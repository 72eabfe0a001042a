"""Fourier neural operator (FNO-2d) over 8 fields of 64 x 64, fp32 (eleventh hold-out): a
lifting conv1x1 from the field and its two grid coordinates (3 channels, the coordinates
made at build and concatenated in the step) to 64 channels, then 4 Fourier blocks, then a
projection conv1x1 64->128, GELU, conv1x1 128->1. A Fourier block: ``torch.fft.rfft2`` of
the 64-channel map (complex, 64 x 33 frequencies), the 16 x 16 lowest modes of the two
frequency corners (rows 0-15 and 48-63, columns 0-15) each mixed across channels by their
own complex weights (64 x 64 x 16 x 16, ``torch.einsum`` "bixy,ioxy->boxy") and written
into a zero spectrum (every other mode is dropped), ``torch.fft.irfft2`` back to 64 x 64,
plus a conv1x1 64->64 of the block's input, then GELU (not after the last block). fp32
throughout, as FNOs are usually run (cuFFT's half-precision path takes only power-of-two
sizes). Returns 8 x 1 x 64 x 64.

    traceinspect profile spectral_conv_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


class SpectralConv2d(nn.Module):
    def __init__(self, c: int, modes: int) -> None:
        super().__init__()
        self.modes = modes
        scale = 1.0 / (c * c)
        shape = (c, c, modes, modes)
        self.w_low = nn.Parameter(scale * torch.randn(shape, dtype=torch.cfloat))
        self.w_high = nn.Parameter(scale * torch.randn(shape, dtype=torch.cfloat))

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        m = self.modes
        x_ft = torch.fft.rfft2(x)  # (B, C, H, W // 2 + 1)
        out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=x_ft.dtype, device=x.device)
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.w_low)
        out_ft[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m], self.w_high)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FourierBlock(nn.Module):
    def __init__(self, c: int, modes: int, last: bool) -> None:
        super().__init__()
        self.spectral = SpectralConv2d(c, modes)
        self.pointwise = nn.Conv2d(c, c, 1)
        self.last = last

    def forward(self, x: Tensor) -> Tensor:
        y = self.spectral(x) + self.pointwise(x)
        return y if self.last else F.gelu(y)


class FNO2d(nn.Module):
    def __init__(self, c: int, modes: int, blocks: int, size: int) -> None:
        super().__init__()
        self.lift = nn.Conv2d(3, c, 1)
        self.blocks = nn.Sequential(
            *(FourierBlock(c, modes, i == blocks - 1) for i in range(blocks))
        )
        self.head = nn.Sequential(nn.Conv2d(c, 128, 1), nn.GELU(), nn.Conv2d(128, 1, 1))
        axis = torch.linspace(0, 1, size)
        gy, gx = torch.meshgrid(axis, axis, indexing="ij")
        self.register_buffer("coords", torch.stack((gx, gy)).unsqueeze(0))  # (1, 2, H, W)

    def forward(self, field: Tensor) -> Tensor:  # field: (B, 1, H, W)
        coords = self.coords.expand(field.shape[0], -1, -1, -1)
        return self.head(self.blocks(self.lift(torch.cat((field, coords), dim=1))))


def build(device: torch.device, smoke: bool) -> Built:
    c, modes, blocks, size, batch = (8, 4, 4, 16, 2) if smoke else (64, 16, 4, 64, 8)
    model = FNO2d(c, modes, blocks, size).to(device).eval()

    @torch.no_grad()
    def step(field: Tensor) -> Tensor:
        return model(field)

    inputs = [(torch.randn(batch, 1, size, size, device=device),) for _ in range(2)]
    description = (
        f"FNO-2d, {blocks} Fourier blocks x {c} ch ({modes}x{modes} modes), "
        f"batch {batch} x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
