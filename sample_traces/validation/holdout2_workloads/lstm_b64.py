"""LSTM cell loop: LSTMCell(256) over 48 time steps at batch 64 (second hold-out).

    traceinspect profile lstm_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    hidden, steps, batch = (16, 4, 2) if smoke else (256, 48, 64)
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
