"""LSTM cell loop: nn.LSTMCell(512, 512) stepped over 32 time steps at batch 16, fp32.

A Python loop of small fused-cell kernels: launch-bound.

    traceinspect profile lstm_cell_loop.py
"""

from __future__ import annotations

import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    hidden, steps, batch = (16, 4, 2) if smoke else (512, 32, 16)
    cell = nn.LSTMCell(hidden, hidden).to(device).eval()

    @torch.no_grad()
    def step(xs: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        for t in range(xs.shape[1]):
            h, c = cell(xs[:, t], (h, c))
        return h

    inputs = [
        (
            torch.randn(batch, steps, hidden, device=device),
            torch.zeros(batch, hidden, device=device),
            torch.zeros(batch, hidden, device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"LSTMCell({hidden}) x {steps} steps, batch {batch}", [cell])


if __name__ == "__main__":
    main(build, __doc__)
