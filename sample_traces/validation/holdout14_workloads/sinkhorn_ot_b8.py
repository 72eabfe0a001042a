"""Entropy-regularized optimal transport by the Sinkhorn algorithm in the log domain (Cuturi,
2013, in the stabilized log-sum-exp form) on a batch of 8 cost matrices of 256 x 256 with
epsilon 0.05, fp32 (fourteenth hold-out). The costs are squared distances between two clouds
of 256 points in the unit square (made at build), the marginals uniform (log a = log b =
-log 256). With K = -C / epsilon (one division) and the scaled potentials u and v starting at
zero, 30 iterations of a Python loop, each a ``logsumexp`` along the rows, u_i = log a -
logsumexp_j(K_ij + v_j), then one along the columns, v_j = log b - logsumexp_i(K_ij + u_i):
per half-iteration a broadcast add over 8 x 256 x 256 values, ``logsumexp`` (about 9 kernels:
amax, the guard against infinite maxima, subtract, exp, sum, log and add) and a subtraction,
so some 22 small kernels per iteration, 660 in all, each over at most 524,288 values:
launch-bound. Then the transport plan P = exp(K + u + v) and the transport cost sum P C per
problem. Input: the cost matrices (8 x 256 x 256). Returns the plans (8 x 256 x 256) and the
costs (8).

    traceinspect profile sinkhorn_ot_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

ITERS, EPSILON = 30, 0.05


def build(device: torch.device, smoke: bool) -> Built:
    batch, n = (2, 16) if smoke else (8, 256)
    log_a = log_b = -math.log(n)  # uniform marginals

    @torch.no_grad()
    def step(cost: Tensor) -> tuple[Tensor, Tensor]:
        k = cost / -EPSILON
        u = torch.zeros(cost.shape[:2], device=cost.device)  # (B, n), f / epsilon
        v = torch.zeros(cost.shape[:2], device=cost.device)  # (B, n), g / epsilon
        for _ in range(ITERS):
            u = log_a - torch.logsumexp(k + v[:, None, :], dim=2)
            v = log_b - torch.logsumexp(k + u[:, :, None], dim=1)
        plan = torch.exp(k + u[:, :, None] + v[:, None, :])
        return plan, (plan * cost).sum((1, 2))

    def make() -> tuple[Tensor]:
        x = torch.rand(batch, n, 2, device=device)
        y = torch.rand(batch, n, 2, device=device)
        return (torch.cdist(x, y).pow(2),)

    inputs = [make() for _ in range(2)]
    description = f"log-domain Sinkhorn, {ITERS} iterations, eps {EPSILON}, batch {batch} x {n}x{n}"
    return Built(step, inputs, description)


if __name__ == "__main__":
    main(build, __doc__)
