"""The VICReg loss (Bardes et al., 2022) over a projector's embeddings of two views
(twenty-fifth hold-out): two augmented views of 256 samples of 512 features, fp32, each
through the same projector — Linear 512 -> 2048, BatchNorm1d in eval mode (running
statistics set to random values at build), ReLU, Linear 2048 -> 2048 — then the loss:
invariance (the mean squared error between the two embeddings), variance (a hinge at 1 on
the per-dimension standard deviation, sqrt(var + 1e-4), of each centred embedding) and
covariance (the squared off-diagonal entries of each 2048 x 2048 covariance matrix summed
and divided by 2048), weighted 25 / 25 / 1. Four projector GEMMs of 256 rows, two
covariance GEMMs of 2048 x 2048 over 256 and some 30 reductions and elementwise kernels; one
stream. Returns the loss (a 0-d tensor).

    traceinspect profile vicreg_loss_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

SIM_WEIGHT, STD_WEIGHT, COV_WEIGHT, EPS = 25.0, 25.0, 1.0, 1e-4


def off_diagonal(m: Tensor) -> Tensor:
    n = m.shape[0]
    return m.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()


def variance_covariance(z: Tensor) -> tuple[Tensor, Tensor]:
    n, dim = z.shape
    z = z - z.mean(dim=0)
    std = torch.sqrt(z.var(dim=0) + EPS)
    cov = (z.T @ z) / (n - 1)
    return torch.relu(1 - std).mean(), off_diagonal(cov).pow(2).sum() / dim


def vicreg_loss(za: Tensor, zb: Tensor) -> Tensor:
    invariance = F.mse_loss(za, zb)
    std_a, cov_a = variance_covariance(za)
    std_b, cov_b = variance_covariance(zb)
    variance = (std_a + std_b) / 2
    covariance = cov_a + cov_b
    return SIM_WEIGHT * invariance + STD_WEIGHT * variance + COV_WEIGHT * covariance


def build(device: torch.device, smoke: bool) -> Built:
    batch, d_in, d = (4, 8, 16) if smoke else (256, 512, 2048)
    norm = nn.BatchNorm1d(d)
    norm.running_mean.normal_(0, 0.1)
    norm.running_var.uniform_(0.5, 1.5)
    projector = nn.Sequential(nn.Linear(d_in, d), norm, nn.ReLU(), nn.Linear(d, d))
    projector = projector.to(device).eval()

    @torch.no_grad()
    def step(view_a: Tensor, view_b: Tensor) -> Tensor:
        return vicreg_loss(projector(view_a), projector(view_b))

    inputs = [
        (torch.randn(batch, d_in, device=device), torch.randn(batch, d_in, device=device))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"VICReg loss over a projector {d_in}->{d}->{d} on two views, b{batch}",
        [projector],
    )


if __name__ == "__main__":
    main(build, __doc__)
