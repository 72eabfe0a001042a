"""The SSIM loss between two image batches (twenty-third hold-out), as image-restoration
training computes it: 8 pairs of 3 x 256 x 256 images, fp32 — local means, variances and
covariance by an 11 x 11 Gaussian window (separable: two depthwise ``conv2d`` passes for
each of the five maps, stacked into one batch), the SSIM map from them, its mean, and an
L1 term. Depthwise convolutions and elementwise kernels over 1.6 M pixels.

    traceinspect profile ssim_loss_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

WINDOW, SIGMA = 11, 1.5
C1, C2 = 0.01**2, 0.03**2


def gaussian(device: torch.device) -> Tensor:
    x = torch.arange(WINDOW, device=device, dtype=torch.float32) - WINDOW // 2
    g = torch.exp(-(x**2) / (2 * SIGMA**2))
    return g / g.sum()


def build(device: torch.device, smoke: bool) -> Built:
    batch, side = (2, 16) if smoke else (8, 256)
    g = gaussian(device)
    horizontal = g.view(1, 1, 1, WINDOW).repeat(15, 1, 1, 1)
    vertical = g.view(1, 1, WINDOW, 1).repeat(15, 1, 1, 1)

    def blur(x: Tensor) -> Tensor:
        x = F.conv2d(x, horizontal, padding=(0, WINDOW // 2), groups=15)
        return F.conv2d(x, vertical, padding=(WINDOW // 2, 0), groups=15)

    @torch.no_grad()
    def step(a: Tensor, b: Tensor) -> Tensor:
        maps = blur(torch.cat([a, b, a * a, b * b, a * b], dim=1))
        mu_a, mu_b, aa, bb, ab = maps.chunk(5, dim=1)
        var_a, var_b, cov = aa - mu_a**2, bb - mu_b**2, ab - mu_a * mu_b
        ssim = ((2 * mu_a * mu_b + C1) * (2 * cov + C2)) / (
            (mu_a**2 + mu_b**2 + C1) * (var_a + var_b + C2)
        )
        return (1 - ssim.mean()) + 0.5 * (a - b).abs().mean()

    def make() -> tuple[Tensor, Tensor]:
        a = torch.rand(batch, 3, side, side, device=device)
        return a, (a + 0.05 * torch.randn_like(a)).clamp(0, 1)

    assert math.isclose(float(g.sum()), 1.0, rel_tol=1e-5)
    return Built(step, [make() for _ in range(2)], f"SSIM + L1 loss b{batch} 3x{side}x{side}")


if __name__ == "__main__":
    main(build, __doc__)
