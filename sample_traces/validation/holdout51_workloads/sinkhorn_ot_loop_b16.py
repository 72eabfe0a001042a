"""Entropic optimal transport between 16 pairs of point clouds of 512 points in 3 dimensions by
60 log-domain Sinkhorn iterations (Cuturi, 2013), a Python loop with a fixed count and no
convergence test on the host (fifty-first hold-out: an iterative solver of some 1,400 kernels,
each iteration two ``torch.logsumexp`` over (16, 512, 512) fp32, 16 MB a pass, with the add
before and the subtraction after them about 11 kernels each: a memory-bound loop of mid-sized
kernels), as POT's ``sinkhorn_log`` lays it out, in the scaled dual potentials u = f / eps and
v = g / eps: the cost C = ``torch.cdist(x, y) ** 2`` (16, 512, 512), eps 0.05, M = -C / eps
once; the log marginals uniform, log a = log b = -log 512 (made at build); u and v from zero;
60 times u = log a - ``logsumexp``(M + v[:, None, :], dim 2) and v = log b -
``logsumexp``(M + u[:, :, None], dim 1). Then the plan
P = exp(M + u[:, :, None] + v[:, None, :]), the transport cost sum(P C) per pair, and the
barycentric projection of x onto y, (P @ y) / P.sum(-1). fp32 throughout (TF32 off, PyTorch's
default for matmuls), no gradients, one stream.
(512 points rather than 1,024: at 1,024 x 1,024 the 120 log-sum-exps, each some 576 MB of
memory traffic, would take over 20 ms on an H100; at 512 the step should take a few ms.)
Inputs: the point clouds x (16, 512, 3) and y (16, 512, 3) fp32. Returns the costs (16,), the
dual potentials f = eps u (16, 512) and g = eps v (16, 512), and the projection (16, 512, 3).

    traceinspect profile sinkhorn_ot_loop_b16.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

POINTS, ITERATIONS, EPS = 512, 60, 0.05


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, iterations = (2, 32, 5) if smoke else (16, POINTS, ITERATIONS)
    log_a = torch.full((n,), -math.log(n), device=device)
    log_b = torch.full((n,), -math.log(n), device=device)

    @torch.no_grad()
    def step(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        cost = torch.cdist(x, y) ** 2  # (b, n, m)
        m = -cost / EPS
        u = torch.zeros(x.shape[:2], device=x.device)
        v = torch.zeros(y.shape[:2], device=y.device)
        for _ in range(iterations):
            u = log_a - torch.logsumexp(m + v[:, None, :], dim=2)
            v = log_b - torch.logsumexp(m + u[:, :, None], dim=1)
        plan = torch.exp(m + u[:, :, None] + v[:, None, :])
        total = (plan * cost).sum(dim=(1, 2))
        projection = (plan @ y) / plan.sum(dim=-1, keepdim=True)
        return total, EPS * u, EPS * v, projection

    inputs = [
        (torch.rand(batch, n, 3, device=device), torch.rand(batch, n, 3, device=device))
        for _ in range(2)
    ]
    description = (
        f"log-domain Sinkhorn: {iterations} iterations, eps {EPS}, {n}x{n} points, b{batch}"
    )
    return Built(step, inputs, description, [log_a, log_b])


if __name__ == "__main__":
    main(build, __doc__)
