"""A GINE graph network (Hu et al., 2020: GIN with edge features, as PyG's ``GINEConv``) for
molecular property regression over a batch of 32 small graphs fed five separate inputs
(thirty-seventh hold-out): fp32 (explicitly, also on a GPU), eval mode, no gradients, message
passing written with index and scatter ops. The batch: graph g has 16 + (g mod 17) nodes (753
nodes in all, laid out graph after graph) and twice as many random directed edges within it
(1,506 edges). ``Linear(32, 128)`` embeds the node features; then 4 GINE layers of width 128,
each: its own ``Linear(8, 128)`` on the edge attributes, the messages ReLU(h[src] + e)
(``index_select`` on the sources), summed into their destinations with ``index_add_`` into a
zeroed buffer, then h + aggr (eps 0) through ``Linear(128, 128)``, ``BatchNorm1d(128)`` (eval,
running statistics set at build), ReLU, ``Linear(128, 128)``, and a ReLU. Readout with the
batch vector: the per-graph sum of the node states (``index_add_`` into (32, 128)), the node
count per graph (``index_add_`` of ones), the mean (sum over the count, clamped at 1), the
concatenation [sum, mean, graph descriptors] (32, 272) and the head ``Linear(272, 128)`` + ReLU
+ ``Linear(128, 1)``. Inputs: node features (753, 32), edge index (2, 1506) int64 (source row,
destination row), edge attributes (1506, 8), batch vector (753,) int64 (the graph of each
node) and graph descriptors (32, 16). Returns one prediction per graph, (32,) fp32.

    traceinspect profile gine_molecule_readout_5in_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

NODE_FEATURES, EDGE_FEATURES, GRAPH_FEATURES, LAYERS = 32, 8, 16, 4
MIN_NODES, SIZE_CYCLE, EDGES_PER_NODE = 16, 17, 2


class GINELayer(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.edge = nn.Linear(EDGE_FEATURES, width)
        self.mlp = nn.Sequential(
            nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Linear(width, width)
        )

    def forward(self, h: Tensor, src: Tensor, dst: Tensor, edge_attr: Tensor) -> Tensor:
        msg = F.relu(h.index_select(0, src) + self.edge(edge_attr))
        aggr = torch.zeros_like(h).index_add_(0, dst, msg)
        return F.relu(self.mlp(h + aggr))


class GINE(nn.Module):
    def __init__(self, width: int, graphs: int) -> None:
        super().__init__()
        self.graphs = graphs
        self.embed = nn.Linear(NODE_FEATURES, width)
        self.layers = nn.ModuleList(GINELayer(width) for _ in range(LAYERS))
        self.head = nn.Sequential(
            nn.Linear(2 * width + GRAPH_FEATURES, width), nn.ReLU(), nn.Linear(width, 1)
        )

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor, batch: Tensor, desc: Tensor
    ) -> Tensor:
        src, dst = edge_index[0], edge_index[1]
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, src, dst, edge_attr)
        total = h.new_zeros(self.graphs, h.shape[1]).index_add_(0, batch, h)
        ones = torch.ones_like(batch, dtype=h.dtype)
        count = h.new_zeros(self.graphs).index_add_(0, batch, ones)
        mean = total / count.clamp(min=1)[:, None]
        return self.head(torch.cat([total, mean, desc], dim=1)).squeeze(-1)


def build(device: torch.device, smoke: bool) -> Built:
    graphs, width = (3, 16) if smoke else (32, 128)
    size_list = [(MIN_NODES // (4 if smoke else 1)) + g % SIZE_CYCLE for g in range(graphs)]
    sizes = torch.tensor(size_list, device=device)
    nodes = sum(size_list)
    offsets = torch.cumsum(sizes, 0) - sizes
    batch_vec = torch.repeat_interleave(torch.arange(graphs, device=device), sizes)
    edge_graph = torch.repeat_interleave(
        torch.arange(graphs, device=device), EDGES_PER_NODE * sizes
    )
    edges = edge_graph.numel()
    model = GINE(width, graphs)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device, torch.float32).eval()

    @torch.no_grad()
    def step(
        x: Tensor, edge_index: Tensor, edge_attr: Tensor, batch: Tensor, desc: Tensor
    ) -> Tensor:
        return model(x, edge_index, edge_attr, batch, desc)

    def local_node() -> Tensor:  # a random node of each edge's graph
        within = (torch.rand(edges, device=device) * sizes[edge_graph]).long()
        return offsets[edge_graph] + within

    def make() -> tuple[Tensor, ...]:
        return (
            torch.randn(nodes, NODE_FEATURES, device=device),
            torch.stack([local_node(), local_node()]),
            torch.randn(edges, EDGE_FEATURES, device=device),
            batch_vec.clone(),
            torch.randn(graphs, GRAPH_FEATURES, device=device),
        )

    inputs = [make() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"GINE {LAYERS} layers x {width} + sum/mean readout, {graphs} graphs, {nodes} nodes, "
        f"{edges} edges, 5 inputs",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
