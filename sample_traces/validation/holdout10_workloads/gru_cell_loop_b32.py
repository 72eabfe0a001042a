"""GRU sequence encoder unrolled by hand: one ``nn.GRUCell(128, 512)`` stepped in a Python
loop over 32 time steps at batch 32, fp32 (tenth hold-out). The input (32 x 32 x 128) is
read one time step at a time, the cell's two small GEMMs and its fused gate kernel run per
step from the previous hidden state (the initial state is the step's second input), and
the 32 hidden states are kept; after the loop they are stacked (32 x 32 x 512) and go
through one readout, LayerNorm and Linear 512->128, for every time step at once. About a
hundred small kernels in order, each waiting on the one before: launch-bound. Returns the
readout (32 x 32 x 128) and the last hidden state (32 x 512).

    traceinspect profile gru_cell_loop_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    features, hidden, out, steps, batch = (8, 16, 8, 4, 2) if smoke else (128, 512, 128, 32, 32)
    cell = nn.GRUCell(features, hidden)
    readout = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, out))
    model = nn.ModuleList([cell, readout]).to(device).eval()

    @torch.no_grad()
    def step(xs: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        states = []
        for t in range(xs.shape[1]):
            h = cell(xs[:, t], h)
            states.append(h)
        return readout(torch.stack(states, dim=1)), h

    inputs = [
        (
            torch.randn(batch, steps, features, device=device),
            torch.randn(batch, hidden, device=device) * 0.1,
        )
        for _ in range(2)
    ]
    description = f"GRUCell({features}, {hidden}) x {steps} steps + readout, batch {batch}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
