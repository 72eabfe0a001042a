"""Soft-DTW between sequence pairs (Cuturi & Blondel, 2017) (twenty-seventh hold-out): 16 pairs
of sequences of 24 and 24 steps with 32 features, fp32. The squared-distance matrix comes
from ``torch.cdist``; the soft-minimum recursion then walks the 47 anti-diagonals in a Python
loop, each a gather of three neighbor diagonals, a ``logsumexp`` over them (gamma 0.1) and a
scatter into the running matrix: about 10 small kernels per diagonal, 470 in all, one stream.

    traceinspect profile soft_dtw_loop_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

GAMMA = 0.1


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d = (2, 4, 3) if smoke else (16, 24, 32)
    big = 1e10
    # indices of every anti-diagonal of the (n + 1) x (n + 1) matrix, fixed per length
    diagonals = []
    for s in range(2, 2 * n + 1):
        i = torch.arange(max(1, s - n), min(n, s - 1) + 1, device=device)
        diagonals.append((i, s - i))

    @torch.no_grad()
    def step(x: Tensor, y: Tensor) -> Tensor:
        cost = torch.cdist(x, y).pow(2)  # batch x n x n
        r = torch.full((x.shape[0], n + 1, n + 1), big, device=x.device)
        r[:, 0, 0] = 0
        for i, j in diagonals:
            neighbors = torch.stack([r[:, i - 1, j - 1], r[:, i - 1, j], r[:, i, j - 1]])
            soft = -GAMMA * torch.logsumexp(-neighbors / GAMMA, dim=0)
            r[:, i, j] = cost[:, i - 1, j - 1] + soft
        return r[:, n, n]

    inputs = [
        (torch.randn(batch, n, d, device=device), torch.randn(batch, n, d, device=device))
        for _ in range(2)
    ]
    return Built(step, inputs, f"soft-DTW {n}x{n}, {d} features, b{batch}", [diagonals])


if __name__ == "__main__":
    main(build, __doc__)
