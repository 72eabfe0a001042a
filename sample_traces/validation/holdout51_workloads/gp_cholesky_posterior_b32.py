"""Exact Gaussian-process regression for 32 independent GPs at once, fp32: the posterior at 64 test
points and the log marginal likelihood of 256 training points each, in 8 input dimensions
(fifty-first hold-out: batched dense linear algebra, a Cholesky factorization and triangular solves
from cuSOLVER and cuBLAS among some 60 small elementwise, copy and reduction kernels). Each GP has
its own fixed hyperparameters, made at build: ARD length-scales (32, 1, 8), signal variances (32,)
and noise variances (32,). The step: the RBF kernel K = s^2 exp(-0.5 ||x/l - x'/l||^2) of the
training points via ``torch.cdist`` of the scaled inputs, squared, (32, 256, 256); noise + jitter
(1e-4) added to the diagonal in place; L = ``torch.linalg.cholesky_ex(K)`` (no error check on the
host: the per-GP info codes stay on the device and are returned); alpha = ``torch.cholesky_solve(y,
L)`` (32, 256, 1); the cross-kernel K* (32, 64, 256) likewise; the predictive mean K* alpha; v =
``torch.linalg.solve_triangular(L, K*^T, upper=False)`` (32, 256, 64) and the latent predictive
variance s^2 - sum v^2 (clamped at 1e-10); the log marginal likelihood -0.5 y^T alpha - sum log
diag L - (n / 2) log 2 pi. On a GPU the build selects cuSOLVER as torch's linear-algebra backend
(``torch.backends.cuda.preferred_linalg_library``): torch sends a batched ``cholesky_solve`` to
MAGMA by default, which passes pointer arrays in pinned host memory and works on its own queue, not
something a CUDA graph can hold; on cuSOLVER it is one ``potrsBatched`` (one right-hand side) and
the Cholesky one ``potrfBatched``. One stream, no gradients. Inputs: the training inputs (32, 256,
8) uniform in [0, 1], the training targets (32, 256) (a smooth function of the inputs plus noise of
0.1) and the test inputs (32, 64, 8). Returns the predictive mean (32, 64), the predictive variance
(32, 64), the log marginal likelihood (32,) and the Cholesky info codes (32,) int32 (zero where
factorized).

    traceinspect profile gp_cholesky_posterior_b32.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

JITTER, MIN_VAR = 1e-4, 1e-10


def build(device: torch.device, smoke: bool) -> Built:
    gps, n_train, n_test, dims = (2, 16, 4, 2) if smoke else (32, 256, 64, 8)
    if device.type == "cuda":
        torch.backends.cuda.preferred_linalg_library("cusolver")
    # hyperparameters, one set per GP (as if each had been fitted on its own)
    lengthscale = (0.3 + 0.4 * torch.rand(gps, 1, dims)).to(device)
    signal_var = (0.5 + torch.rand(gps)).to(device)
    noise_var = (0.01 + 0.02 * torch.rand(gps)).to(device)
    log_2pi_term = 0.5 * n_train * math.log(2 * math.pi)

    def rbf(a: Tensor, b: Tensor) -> Tensor:
        sq_dist = torch.cdist(a / lengthscale, b / lengthscale).square()
        return signal_var[:, None, None] * torch.exp(-0.5 * sq_dist)

    @torch.no_grad()
    def step(x: Tensor, y: Tensor, x_test: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        k = rbf(x, x)
        k.diagonal(dim1=-2, dim2=-1).add_((noise_var + JITTER)[:, None])
        chol, info = torch.linalg.cholesky_ex(k)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), chol)  # (gps, n_train, 1)
        k_star = rbf(x_test, x)  # (gps, n_test, n_train)
        mean = (k_star @ alpha).squeeze(-1)
        v = torch.linalg.solve_triangular(chol, k_star.mT, upper=False)
        var = (signal_var[:, None] - v.square().sum(-2)).clamp_min(MIN_VAR)
        log_det_half = chol.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        lml = -0.5 * (y * alpha.squeeze(-1)).sum(-1) - log_det_half - log_2pi_term
        return mean, var, lml, info

    def make() -> tuple[Tensor, Tensor, Tensor]:
        x = torch.rand(gps, n_train, dims)
        w = torch.randn(gps, dims, 1)
        y = torch.sin(3.0 * (x @ w)).squeeze(-1) + 0.1 * torch.randn(gps, n_train)
        x_test = torch.rand(gps, n_test, dims)
        return x.to(device), y.to(device), x_test.to(device)

    inputs = [make() for _ in range(2)]
    description = (
        f"batched exact GP posterior, {gps} GPs x {n_train} train / {n_test} test points in "
        f"{dims}-d, RBF via cdist, cholesky_ex + cholesky_solve + solve_triangular, fp32"
    )
    return Built(step, inputs, description, [lengthscale, signal_var, noise_var])


if __name__ == "__main__":
    main(build, __doc__)
