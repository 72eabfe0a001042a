"""GRU cell loop: one GRUCell(768) over 40 time steps at batch 8 (third hold-out).

    traceinspect profile gru_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    hidden, steps, batch = (16, 4, 2) if smoke else (768, 40, 8)
    cell = nn.GRUCell(hidden, hidden).to(device).eval()

    @torch.no_grad()
    def step(xs: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        for t in range(xs.shape[1]):
            h = cell(xs[:, t], h)
        return h

    inputs = [
        (
            torch.randn(batch, steps, hidden, device=device),
            torch.zeros(batch, hidden, device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"GRUCell({hidden}) x {steps} steps, batch {batch}", [cell])


if __name__ == "__main__":
    main(build, __doc__)
