"""A bidirectional GRU written as two ``nn.GRUCell`` loops, the forward direction on one side
stream and the backward direction on another, 16 sequences of 24 steps, 256 inputs, 512
hidden, fp32 (twentieth hold-out), inference: each direction steps its cell 24 times (the
cell's two GEMMs and its gate kernels per step, about 5 kernels), the two chains side by
side; the current stream joins them, concatenates the two hidden-state sequences and applies
a Linear 1024->32 tagger. About 250 kernels, every one small: launch-bound, two long chains
in parallel. Input: 24 x 16 x 256 (time first). Returns 24 x 16 x 32.

    traceinspect profile bidir_gru_cells_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TAGS = 32


def build(device: torch.device, smoke: bool) -> Built:
    steps, batch, d, hidden = (4, 2, 8, 16) if smoke else (24, 16, 256, 512)
    forward_cell, backward_cell = nn.GRUCell(d, hidden), nn.GRUCell(d, hidden)
    tagger = nn.Linear(2 * hidden, TAGS)
    model = nn.ModuleList([forward_cell, backward_cell, tagger]).to(device).eval()
    streams = side_streams(device, 2)

    def run(cell: nn.GRUCell, xs: Tensor, reverse: bool) -> Tensor:
        h = xs.new_zeros(xs.shape[1], hidden)
        outs = []
        order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
        for t in order:
            h = cell(xs[t], h)
            outs.append(h)
        if reverse:
            outs.reverse()
        return torch.stack(outs)

    @torch.no_grad()
    def step(xs: Tensor) -> Tensor:
        fwd, bwd = fork_join(
            device,
            streams,
            [lambda: run(forward_cell, xs, False), lambda: run(backward_cell, xs, True)],
        )
        return tagger(torch.cat([fwd, bwd], dim=-1))

    inputs = [(torch.randn(steps, batch, d, device=device),) for _ in range(2)]
    description = f"bidirectional GRUCell loops ({steps} steps, {d}->{hidden}) on 2 streams"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
