"""A Value Iteration Network (Tamar et al., 2016) choosing the next move of 8 agents on 28 x 28
grid-world maps, its 36 value-iteration steps as a Python loop of small kernels (fiftieth
hold-out: planning by a recurrent convolution, some 150 launches of a few dozen blocks each and
little GPU time), as the common PyTorch VIN lays it out: the map (obstacles and goal, 2 channels)
through ``Conv2d(2, 150, 3, padding 1)`` to a hidden map and ``Conv2d(150, 1, 1, bias=False)`` to
the reward r; q = ``Conv2d(1, 10, 3, padding 1, bias=False)`` of r and v, the max of q over its
10 action channels; then 35 more iterations, each q = the convolution of [r, v] with [the q
weights, the value weights w (10, 1, 3, 3)] concatenated along the input channels (two
``torch.cat``, of the maps and of the weights, then ``F.conv2d``) and v = max over the
channels; a last such convolution, q at each agent's cell (advanced indexing with the batch's
positions) and ``Linear(10, 8, bias=False)`` to the 8 moves, softmax. bf16 on a GPU, no gradients,
one stream. Inputs: the maps (8, 2, 28, 28) and the agents' rows and columns (8,) int64 each.
Returns the move logits (8, 8) and probabilities (8, 8).

    traceinspect profile vin_gridworld_plan_loop_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

HIDDEN, Q_CHANNELS, MOVES = 150, 10, 8


class VIN(nn.Module):
    def __init__(self, iterations: int) -> None:
        super().__init__()
        self.iterations = iterations
        self.h = nn.Conv2d(2, HIDDEN, 3, padding=1)
        self.r = nn.Conv2d(HIDDEN, 1, 1, bias=False)
        self.q = nn.Conv2d(1, Q_CHANNELS, 3, padding=1, bias=False)
        self.w = nn.Parameter(torch.randn(Q_CHANNELS, 1, 3, 3) * 0.1)
        self.fc = nn.Linear(Q_CHANNELS, MOVES, bias=False)

    def forward(self, maps: Tensor, rows: Tensor, cols: Tensor) -> Tensor:
        r = self.r(self.h(maps))
        q = self.q(r)
        v, _ = torch.max(q, dim=1, keepdim=True)
        for _ in range(self.iterations - 1):
            q = F.conv2d(torch.cat([r, v], 1), torch.cat([self.q.weight, self.w], 1), padding=1)
            v, _ = torch.max(q, dim=1, keepdim=True)
        q = F.conv2d(torch.cat([r, v], 1), torch.cat([self.q.weight, self.w], 1), padding=1)
        picked = q[torch.arange(q.shape[0], device=q.device), :, rows, cols]  # (b, Q_CHANNELS)
        return self.fc(picked)


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, iterations = (2, 8, 5) if smoke else (8, 28, 36)
    dtype = low_precision(device)
    vin = VIN(iterations).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(maps: Tensor, rows: Tensor, cols: Tensor) -> tuple[Tensor, Tensor]:
        logits = vin(maps, rows, cols)
        return logits, torch.softmax(logits.float(), dim=-1)

    def grid_inputs() -> tuple[Tensor, Tensor, Tensor]:
        obstacles = (torch.rand(batch, 1, side, side, device=device) < 0.2).to(dtype)
        goal = torch.zeros(batch, 1, side, side, device=device, dtype=dtype)
        goal[:, :, side // 2, side // 3] = 10.0
        maps = torch.cat([obstacles, goal], dim=1)
        rows = torch.randint(0, side, (batch,), device=device)
        return maps, rows, torch.randint(0, side, (batch,), device=device)

    inputs = [grid_inputs() for _ in range(2)]
    description = (
        f"Value Iteration Network: {iterations} iterations on {side}x{side} maps, "
        f"{Q_CHANNELS} q channels, b{batch}"
    )
    return Built(step, inputs, description, [vin])


if __name__ == "__main__":
    main(build, __doc__)
