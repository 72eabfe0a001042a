"""Chamfer distance between point clouds, with a small PointNet encoder in front (twenty-
sixth hold-out): 8 pairs of clouds of 2,048 and 1,024 points in 3-D, fp32. A shared MLP
3 -> 64 -> 128 -> 3 (per-point Linear layers with ReLU) offsets the first cloud; then
``torch.cdist`` gives 8 distance matrices of 2,048 x 1,024, their minima along each axis
are squared and averaged both ways, and a max-pooled feature of the first cloud is added as
a regularizer. A few large kernels (cdist, two min reductions over 16.8 M distances) and
about 20 small ones, one stream.

    traceinspect profile chamfer_loss_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, m = (2, 16, 8) if smoke else (8, 2048, 1024)
    mlp = (
        nn.Sequential(nn.Linear(3, 64), nn.ReLU(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 3))
        .to(device)
        .eval()
    )

    @torch.no_grad()
    def step(a: Tensor, b: Tensor) -> Tensor:
        moved = a + 0.01 * mlp(a)
        d = torch.cdist(moved, b)  # batch x n x m
        forward = d.min(dim=2).values.pow(2).mean(dim=1)
        backward = d.min(dim=1).values.pow(2).mean(dim=1)
        regular = mlp[:-1](a).amax(dim=1).pow(2).mean(dim=1)
        return forward + backward + 1e-4 * regular

    inputs = [
        (torch.randn(batch, n, 3, device=device), torch.randn(batch, m, 3, device=device))
        for _ in range(2)
    ]
    return Built(step, inputs, f"Chamfer loss {n} vs {m} points + PointNet MLP, b{batch}", [mlp])


if __name__ == "__main__":
    main(build, __doc__)
