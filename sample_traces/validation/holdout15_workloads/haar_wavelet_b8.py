"""A 3-level 2D Haar wavelet transform of 8 RGB images of 256 x 256 and its inverse, fp32
(fifteenth hold-out). Forward, per level: the four polyphase components of the current
approximation by strided slicing (``x[..., ::2, ::2]``, ``x[..., ::2, 1::2]``,
``x[..., 1::2, ::2]``, ``x[..., 1::2, 1::2]``: strided views, read by the elementwise
kernels), their pairwise sums and differences, then the orthonormal sub-bands LL = (a + b +
c + d) / 2, LH = (a - b + c - d) / 2, HL = (a + b - c - d) / 2 and HH = (a - b - c + d) / 2,
concatenated along the channels (``torch.cat``: 8 x 12 x 128 x 128 at level 1, 64 x 64 at
level 2, 32 x 32 at level 3); the next level transforms the LL channels of the
concatenation. Inverse, from the coarsest level up: the four components rebuilt from the
approximation and the level's three detail bands (sums and differences again), interleaved
back into an image of twice the size by two ``torch.stack`` (columns, then rows) and a view.
Then the L1 reconstruction error, the mean absolute difference from the input (a few 1e-8:
the transform is exact up to rounding). About 15 elementwise and copy kernels per level and
direction, some 90 in all, each over at most 6 MB: launch-bound. Input: the images (8 x 3 x
256 x 256). Returns the three levels' sub-bands (8 x 12 x 128 x 128, 8 x 12 x 64 x 64, 8 x
12 x 32 x 32), the reconstruction (8 x 3 x 256 x 256) and the L1 error (a 0-d tensor).

    traceinspect profile haar_wavelet_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LEVELS = 3


def haar(x: Tensor) -> Tensor:
    """(B, C, H, W) -> (B, 4C, H/2, W/2): LL, LH, HL, HH along the channels."""
    a, b = x[..., ::2, ::2], x[..., ::2, 1::2]
    c, d = x[..., 1::2, ::2], x[..., 1::2, 1::2]
    s1, d1, s2, d2 = a + b, a - b, c + d, c - d
    return torch.cat(((s1 + s2) * 0.5, (d1 + d2) * 0.5, (s1 - s2) * 0.5, (d1 - d2) * 0.5), 1)


def inverse_haar(ll: Tensor, details: Tensor) -> Tensor:
    """The approximation (B, C, h, w) and the details (B, 3C, h, w) -> (B, C, 2h, 2w)."""
    lh, hl, hh = details.chunk(3, dim=1)
    s1, s2, d1, d2 = ll + hl, ll - hl, lh + hh, lh - hh
    a, b, c, d = (s1 + d1) * 0.5, (s1 - d1) * 0.5, (s2 + d2) * 0.5, (s2 - d2) * 0.5
    n, ch, h, w = ll.shape
    even = torch.stack((a, b), dim=-1).view(n, ch, h, 2 * w)  # rows 0, 2, ...
    odd = torch.stack((c, d), dim=-1).view(n, ch, h, 2 * w)  # rows 1, 3, ...
    return torch.stack((even, odd), dim=-2).view(n, ch, 2 * h, 2 * w)


def build(device: torch.device, smoke: bool) -> Built:
    batch, channels, size = (2, 3, 16) if smoke else (8, 3, 256)

    @torch.no_grad()
    def step(x: Tensor) -> tuple[list[Tensor], Tensor, Tensor]:
        c = x.shape[1]
        levels, approx = [], x
        for _ in range(LEVELS):
            bands = haar(approx)
            levels.append(bands)
            approx = bands[:, :c]
        for bands in reversed(levels):
            approx = inverse_haar(approx, bands[:, c:])
        return levels, approx, (approx - x).abs().mean()

    inputs = [(torch.rand(batch, channels, size, size, device=device),) for _ in range(2)]
    description = (
        f"{LEVELS}-level 2D Haar wavelet + inverse (strided slices, cat/stack), "
        f"batch {batch} x {channels} x {size}x{size}"
    )
    return Built(step, inputs, description)


if __name__ == "__main__":
    main(build, __doc__)
