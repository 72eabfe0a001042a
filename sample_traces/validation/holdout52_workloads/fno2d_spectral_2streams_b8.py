"""A two-resolution 2-D Fourier Neural Operator (Li et al., 2021) on 8 Darcy-flow coefficient
fields, one FNO branch at 128 x 128 and one at 64 x 64 on each of two side streams (fifty-second
hold-out: spectral convolutions, fp32 ``rfft2`` / ``irfft2`` and complex mode mixing, on two
grids at once, joined on the current stream), after the reference ``fourier_2d.py`` of
neuraloperator (``SpectralConv2d`` and ``FNO2d``, periodic, without the padding of the later
version). Each branch: the field a(x) (b, s, s, 1) concatenated with the grid coordinates
(x, y) in [0, 1] (a buffer made at build, expanded over the batch), the lifting ``Linear(3,
32)``, channels first, then 3 Fourier layers of width 32, each the sum of a spectral
convolution and a pointwise ``Conv2d(32, 32, 1)``, GELU after all but the last. The spectral
convolution: ``torch.fft.rfft2``, a zeroed complex (b, 32, s, s / 2 + 1) spectrum whose two
corner blocks of 16 x 16 kept modes (the lowest positive and negative row frequencies) are the
input's kept modes mixed by learned complex weights (32, 32, 16, 16) each, ``einsum("bixy,
ioxy->boxy")`` (batched complex GEMMs), then ``torch.fft.irfft2`` back to s x s. Side stream
1: the 128 x 128 branch on the full field; side stream 2: the 64 x 64 branch on the field
sub-sampled by 2 (``a[:, ::2, ::2]``, as the FNO scripts sub-sample their data), 16 modes too.
After the join, on the current stream: the coarse branch's output up-sampled to 128 x 128
(``F.interpolate``, bilinear), added to the fine one, channels last, and the projection
``Linear(32, 128)``, GELU, ``Linear(128, 1)``. fp32 throughout (complex64 spectra, as the
reference), eval mode, no gradients. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Input: a
(8, 128, 128, 1) (two input sets of random fields). Returns u (8, 128, 128, 1).

    traceinspect profile fno2d_spectral_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 3


class SpectralConv2d(nn.Module):
    """neuraloperator's SpectralConv2d: keep the lowest ``modes`` x ``modes`` frequencies (both
    signs along the rows), mix their channels with complex weights, zero the rest."""

    def __init__(self, width: int, modes: int, device: torch.device) -> None:
        super().__init__()
        self.modes = modes
        scale = 1 / (width * width)
        shape = (width, width, modes, modes)
        self.weights1 = nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat, device=device))
        self.weights2 = nn.Parameter(scale * torch.rand(shape, dtype=torch.cfloat, device=device))

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        m = self.modes
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, c, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.weights1)
        out_ft[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m], self.weights2)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNOBranch(nn.Module):
    """FNO2d up to (not including) the projection: lifting and the Fourier layers."""

    def __init__(self, size: int, width: int, modes: int, device: torch.device) -> None:
        super().__init__()
        self.fc0 = nn.Linear(3, width, device=device)
        self.spectral = nn.ModuleList(SpectralConv2d(width, modes, device) for _ in range(LAYERS))
        self.pointwise = nn.ModuleList(
            nn.Conv2d(width, width, 1, device=device) for _ in range(LAYERS)
        )
        coords = torch.linspace(0, 1, size, device=device)
        gx, gy = torch.meshgrid(coords, coords, indexing="ij")
        self.register_buffer("grid", torch.stack((gx, gy), dim=-1)[None])  # (1, s, s, 2)

    def forward(self, a: Tensor) -> Tensor:
        """a (b, s, s, 1) -> (b, width, s, s), channels first."""
        x = self.fc0(torch.cat((a, self.grid.expand(a.shape[0], -1, -1, -1)), dim=-1))
        x = x.permute(0, 3, 1, 2)
        for i, (spectral, pointwise) in enumerate(zip(self.spectral, self.pointwise, strict=True)):
            x = spectral(x) + pointwise(x)
            if i < LAYERS - 1:
                x = F.gelu(x)
        return x


class TwoResolutionFNO(nn.Module):
    def __init__(self, size: int, width: int, modes: int, device: torch.device) -> None:
        super().__init__()
        self.fine = FNOBranch(size, width, modes, device)
        self.coarse = FNOBranch(size // 2, width, modes, device)
        self.fc1 = nn.Linear(width, 128, device=device)
        self.fc2 = nn.Linear(128, 1, device=device)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, width, modes = (2, 16, 8, 4) if smoke else (8, 128, 32, 16)
    model = TwoResolutionFNO(size, width, modes, device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(a: Tensor) -> Tensor:
        fine, coarse = fork_join(
            device,
            streams,
            [lambda: model.fine(a), lambda: model.coarse(a[:, ::2, ::2].contiguous())],
        )
        x = fine + F.interpolate(coarse, size=(size, size), mode="bilinear", align_corners=False)
        x = F.gelu(model.fc1(x.permute(0, 2, 3, 1)))
        return model.fc2(x)

    inputs = [(torch.randn(batch, size, size, 1, device=device),) for _ in range(2)]
    description = (
        f"FNO2d: {LAYERS} Fourier layers at {size}x{size} and at {size // 2}x{size // 2} "
        f"(rfft2/irfft2, {modes} modes, fp32), width {width}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
