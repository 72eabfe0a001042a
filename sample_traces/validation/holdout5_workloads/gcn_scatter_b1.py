"""Graph convolution written as message passing: 3 layers over a fixed random graph (20k
nodes, 200k edges, int64 edge_index on the device), messages ``x[src] * w_e`` summed into
their destination with ``index_add_``, mean by in-degree, Linear 64->64 and ReLU, fp32
(fifth hold-out).

``index_add_`` on a GPU adds with atomics in no fixed order. Features and edge weights stay
on a 1/16 grid (rounded after each layer), so every message is a multiple of 1/256 and the
float sums are exact whatever the order: replayed outputs equal eager ones.

    traceinspect profile gcn_scatter_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

GRID = 16.0


def on_grid(x: Tensor) -> Tensor:
    return torch.round(x * GRID) / GRID


def build(device: torch.device, smoke: bool) -> Built:
    nodes, edges, dim, layers = (64, 256, 8, 3) if smoke else (20_000, 200_000, 64, 3)
    src, dst = torch.randint(nodes, (2, edges), device=device)
    w_e = on_grid(torch.rand(edges, 1, device=device))
    inv_deg = 1.0 / torch.bincount(dst, minlength=nodes).clamp(min=1).float().unsqueeze(1)
    lins = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers)).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for lin in lins:
            msg = x[src] * w_e
            agg = torch.zeros_like(x).index_add_(0, dst, msg)
            x = on_grid(torch.relu(lin(agg * inv_deg)))
        return x

    inputs = [(on_grid(torch.randn(nodes, dim, device=device)),) for _ in range(2)]
    description = f"GCN, {layers} layers over {nodes} nodes / {edges} edges, dim {dim}"
    return Built(step, inputs, description, [lins, src, dst, w_e, inv_deg])


if __name__ == "__main__":
    main(build, __doc__)
