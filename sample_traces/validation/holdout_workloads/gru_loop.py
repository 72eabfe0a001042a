"""GRU cell loop: two stacked nn.GRUCell(384, 384) over 24 time steps at batch 64, fp32 (hold-out).

traceinspect profile gru_loop.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    hidden, steps, batch = (16, 4, 2) if smoke else (384, 24, 64)
    cells = nn.ModuleList(nn.GRUCell(hidden, hidden) for _ in range(2)).to(device).eval()

    @torch.no_grad()
    def step(xs: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        h1, h2 = h0, h0
        for t in range(xs.shape[1]):
            h1 = cells[0](xs[:, t], h1)
            h2 = cells[1](h1, h2)
        return h2

    inputs = [
        (
            torch.randn(batch, steps, hidden, device=device),
            torch.zeros(batch, hidden, device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"2 x GRUCell({hidden}) x {steps} steps", [cells])


if __name__ == "__main__":
    main(build, __doc__)
