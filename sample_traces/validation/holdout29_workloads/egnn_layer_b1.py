"""E(n)-equivariant graph network layers (Satorras et al., 2021) on a molecule-sized point
cloud batch (twenty-ninth hold-out): 64 graphs of 48 atoms, every pair within a graph an
edge (147,456 directed edges, fixed index tensors built once), 128 features, fp32. Each of
4 layers: the squared distance per edge from the coordinates (``index_select`` of both ends),
the edge MLP on [h_i, h_j, d²] (Linear 257 -> 128, SiLU, Linear -> 128, SiLU), a coordinate
weight per edge (Linear -> 1) moving x_i along x_i - x_j (``index_add_`` over the sources,
averaged by the degree), the messages summed per atom (``index_add_``) and the node MLP on
[h, m] with a residual. Gathers, scatters and GEMMs of 147,456 rows; one stream.

    traceinspect profile egnn_layer_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS = 4


class EGNNLayer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.edge1, self.edge2 = nn.Linear(2 * d + 1, d), nn.Linear(d, d)
        self.coord = nn.Linear(d, 1)
        self.node1, self.node2 = nn.Linear(2 * d, d), nn.Linear(d, d)

    def forward(
        self, h: Tensor, x: Tensor, src: Tensor, dst: Tensor, degree: Tensor
    ) -> tuple[Tensor, Tensor]:
        diff = x.index_select(0, src) - x.index_select(0, dst)
        dist = (diff * diff).sum(dim=-1, keepdim=True)
        e = torch.cat([h.index_select(0, src), h.index_select(0, dst), dist], dim=-1)
        m = F.silu(self.edge2(F.silu(self.edge1(e))))
        move = torch.zeros_like(x).index_add_(0, src, diff * self.coord(m))
        x = x + move / degree
        agg = torch.zeros_like(h).index_add_(0, src, m)
        h = h + self.node2(F.silu(self.node1(torch.cat([h, agg], dim=-1))))
        return h, x


def build(device: torch.device, smoke: bool) -> Built:
    graphs, atoms, d = (2, 4, 8) if smoke else (64, 48, 128)
    layers = nn.ModuleList([EGNNLayer(d) for _ in range(LAYERS)]).to(device).eval()
    i, j = torch.meshgrid(torch.arange(atoms), torch.arange(atoms), indexing="ij")
    keep = i != j
    offsets = torch.arange(graphs)[:, None] * atoms
    src = (i[keep][None] + offsets).flatten().to(device)
    dst = (j[keep][None] + offsets).flatten().to(device)
    degree = torch.full((graphs * atoms, 1), float(atoms - 1), device=device)

    @torch.no_grad()
    def step(h: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
        for layer in layers:
            h, x = layer(h, x, src, dst, degree)
        return h, x

    n = graphs * atoms
    inputs = [
        (torch.randn(n, d, device=device), torch.randn(n, 3, device=device)) for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{LAYERS} EGNN layers, {graphs} graphs x {atoms} atoms, d{d}",
        [layers, src, dst, degree],
    )


if __name__ == "__main__":
    main(build, __doc__)
