"""Principal Neighbourhood Aggregation (PNA, Corso et al., 2020) regressing the constrained
solubility of a batch of 128 ZINC molecules, each layer's four aggregators (mean, min, max and
standard deviation) on their own side streams (fifty-eighth hold-out: four fork / join rounds, one a
layer, of four concurrent chains of unequal length, 7, 2, 2 and 21 small kernels of ``scatter_add_``
with atomics, ``scatter_reduce_`` and elementwise work, the (5956, 5, 75) fp32 messages (9 MB)
reduced into (2836, 5, 75); between them on the current stream some 32 kernels a layer, gathers, the
towers' small GEMMs (5956 edge rows of 225 -> 75, 2836 node rows of 975 -> 15), the degree scalers,
concatenations and the BatchNorm: launch-bound throughout, some 265 kernels). Laid out as PyG's
``examples/pna.py`` (``Net``: ``Embedding(21, 75)`` for the atom types, ``Embedding(4, 50)`` for the
bond types, 4 ``PNAConv(75, 75, aggregators=["mean", "min", "max", "std"], scalers=["identity",
"amplification", "attenuation"], deg, edge_dim=50, towers=5, pre_layers=1, post_layers=1,
divide_input=False)``, each followed by ``BatchNorm(75)`` and ReLU, then ``global_add_pool``
(``scatter_add_`` by graph) and the MLP 75 -> 50 -> 25 -> 1 with ReLUs) with ``PNAConv`` as
``torch_geometric.nn.conv.PNAConv`` computes it: the node features repeated over the 5 towers (N, 5,
75); ``propagate`` gathers ``x_i`` (targets) and ``x_j`` (sources) along the edges
(``index_select``), the edge features through ``edge_encoder`` ``Linear(50, 75)`` repeated over the
towers, concatenated to (E, 5, 225), each tower's ``pre_nns`` ``Linear(225, 75)`` on its slice,
stacked; ``DegreeScalerAggregation``'s ``MultiAggregation``: side stream 1, ``MeanAggregation``
(PyG's ``scatter(reduce="mean")``: the counts by ``scatter_add_`` of ones, clamped at 1, the sums by
``scatter_add_``, divided); side stream 2, ``MinAggregation`` and side stream 3, ``MaxAggregation``
(``scatter_reduce_`` with ``amin`` / ``amax``, ``include_self=False``, into zeros); side stream 4,
``StdAggregation`` (the mean of the squares minus the squared mean, each a mean aggregation, clamped
at 1e-5, square root, values at or below sqrt(1e-5) set to 0). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After
each join, on the current stream: the four concatenated (N, 5, 300); the in-degrees (``degree`` by
``scatter_add_``, clamped at 1); the scalers, identity, amplification log(d + 1) / avg_log and
attenuation avg_log / log(d + 1), with avg_log from the training in-degree histogram (here the
batch's own, computed at build), concatenated (N, 5, 900); the input concatenated in front (N, 5,
975); each tower's ``post_nns`` ``Linear(975, 15)``, concatenated; ``lin`` ``Linear(75, 75)``. The
batch: 128 molecule-like graphs of 9 to 37 atoms (ZINC's range, 2836 atoms and 5956 directed bonds
in all, in-degrees at most 4), drawn at build as a random spanning tree per molecule plus ring-
closing bonds, fixed across steps as the graph structure (the edge index and the graph assignment)
of one DataLoader batch. fp32 with TF32 on for matrix multiplications
(``torch.backends.cuda.matmul.allow_tf32 = True``, set in build), eval (BatchNorm on random running
statistics), no gradients, random weights (torch's defaults). The ``scatter_add_`` sums add with
atomics, so a replay may differ from an eager call in the last bits. Inputs (two input sets): the
atom types (2836, 1) int64 below 21 and the bond types (5956,) int64 in [1, 3]. Returns the
predictions (128, 1).

    traceinspect profile pna_zinc_aggregators_4streams_b128.py
"""

from __future__ import annotations

import math
import random

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

ATOMS, BONDS, HIDDEN, EDGE_DIM, TOWERS, LAYERS, MAX_DEGREE = 21, 4, 75, 50, 5, 4, 4


def molecules(count: int, rng: random.Random) -> tuple[Tensor, Tensor]:
    """Molecule-like graphs: the directed edge index (2, E) and the graph of each node."""
    src: list[int] = []
    dst: list[int] = []
    graph: list[int] = []
    offset = 0
    for g in range(count):
        n = rng.randint(9, 37)
        degree = [0] * n
        bonds = set()
        for i in range(1, n):
            j = rng.choice([k for k in range(i) if degree[k] < 3])
            bonds.add((j, i))
            degree[i] += 1
            degree[j] += 1
        for _ in range(n // 8):  # ring closures
            free = [k for k in range(n) if degree[k] < MAX_DEGREE]
            a, b = rng.sample(free, 2)
            if (min(a, b), max(a, b)) not in bonds:
                bonds.add((min(a, b), max(a, b)))
                degree[a] += 1
                degree[b] += 1
        for a, b in sorted(bonds):
            src += [a + offset, b + offset]
            dst += [b + offset, a + offset]
        graph += [g] * n
        offset += n
    return torch.tensor([src, dst]), torch.tensor(graph)


def scatter_mean(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    """torch_geometric.utils.scatter(src, index, 0, dim_size, reduce="mean") on (E, T, F)."""
    count = src.new_zeros(dim_size)
    count.scatter_add_(0, index, src.new_ones(src.size(0)))
    count = count.clamp(min=1)
    idx = index.view(-1, 1, 1).expand_as(src)
    out = src.new_zeros(dim_size, *src.shape[1:]).scatter_add_(0, idx, src)
    return out / count.view(-1, 1, 1)


def scatter_extreme(src: Tensor, index: Tensor, dim_size: int, reduce: str) -> Tensor:
    idx = index.view(-1, 1, 1).expand_as(src)
    out = src.new_zeros(dim_size, *src.shape[1:])
    return out.scatter_reduce_(0, idx, src, reduce=reduce, include_self=False)


def scatter_std(src: Tensor, index: Tensor, dim_size: int) -> Tensor:
    mean = scatter_mean(src, index, dim_size)
    mean_2 = scatter_mean(src * src, index, dim_size)
    out = (mean_2 - mean * mean).clamp(min=1e-5).sqrt()
    return out.masked_fill(out <= math.sqrt(1e-5), 0.0)


class PNAConv(nn.Module):
    def __init__(self, f: int, edge_dim: int, towers: int, avg_log: float) -> None:
        super().__init__()
        self.towers, self.avg_log = towers, avg_log
        self.edge_encoder = nn.Linear(edge_dim, f)
        self.pre_nns = nn.ModuleList(nn.Linear(3 * f, f) for _ in range(towers))
        self.post_nns = nn.ModuleList(nn.Linear(13 * f, f // towers) for _ in range(towers))
        self.lin = nn.Linear(f, f)

    def messages(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> Tensor:
        x_j, x_i = x.index_select(0, edge_index[0]), x.index_select(0, edge_index[1])
        e = self.edge_encoder(edge_attr).view(-1, 1, x.shape[-1]).repeat(1, self.towers, 1)
        h = torch.cat([x_i, x_j, e], dim=-1)
        return torch.stack([nn_(h[:, i]) for i, nn_ in enumerate(self.pre_nns)], dim=1)

    def post(self, x: Tensor, aggregated: list[Tensor], index: Tensor) -> Tensor:
        out = torch.cat(aggregated, dim=-1)
        deg = out.new_zeros(x.shape[0]).scatter_add_(0, index, out.new_ones(index.numel()))
        deg = deg.clamp_(1).view(-1, 1, 1)
        log_deg = torch.log(deg + 1)
        out = torch.cat([out, out * (log_deg / self.avg_log), out * (self.avg_log / log_deg)], -1)
        out = torch.cat([x, out], dim=-1)
        outs = [nn_(out[:, i]) for i, nn_ in enumerate(self.post_nns)]
        return self.lin(torch.cat(outs, dim=1))


class Net(nn.Module):
    def __init__(self, avg_log: float) -> None:
        super().__init__()
        self.node_emb = nn.Embedding(ATOMS, HIDDEN)
        self.edge_emb = nn.Embedding(BONDS, EDGE_DIM)
        self.convs = nn.ModuleList(
            PNAConv(HIDDEN, EDGE_DIM, TOWERS, avg_log) for _ in range(LAYERS)
        )
        self.batch_norms = nn.ModuleList(nn.BatchNorm1d(HIDDEN) for _ in range(LAYERS))
        self.mlp = nn.Sequential(
            nn.Linear(HIDDEN, 50), nn.ReLU(), nn.Linear(50, 25), nn.ReLU(), nn.Linear(25, 1)
        )


def build(device: torch.device, smoke: bool) -> Built:
    count = 6 if smoke else 128
    edge_index, graph = molecules(count, random.Random(58))
    nodes, edges = graph.numel(), edge_index.shape[1]
    in_degree = torch.bincount(edge_index[1], minlength=nodes)
    avg_log = float(torch.log(in_degree.float() + 1).mean())
    torch.backends.cuda.matmul.allow_tf32 = True  # the workload: TF32 GEMMs
    model = Net(avg_log)
    for bn in model.batch_norms:
        bn.running_mean.normal_(0, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
    model = model.to(device).eval()
    edge_index, graph = edge_index.to(device), graph.to(device)
    target = edge_index[1]
    graph_index = graph.view(-1, 1).expand(-1, HIDDEN)
    streams = side_streams(device, 4)

    @torch.no_grad()
    def step(atoms: Tensor, bonds: Tensor) -> Tensor:
        x = model.node_emb(atoms.squeeze(-1))
        edge_attr = model.edge_emb(bonds)
        for conv, bn in zip(model.convs, model.batch_norms, strict=True):
            xt = x.view(-1, 1, HIDDEN).repeat(1, TOWERS, 1)
            h = conv.messages(xt, edge_index, edge_attr)
            aggregated = fork_join(
                device,
                streams,
                [
                    lambda: scatter_mean(h, target, nodes),  # noqa: B023
                    lambda: scatter_extreme(h, target, nodes, "amin"),  # noqa: B023
                    lambda: scatter_extreme(h, target, nodes, "amax"),  # noqa: B023
                    lambda: scatter_std(h, target, nodes),  # noqa: B023
                ],
            )
            x = F.relu(bn(conv.post(xt, aggregated, target)))
        pooled = x.new_zeros(count, HIDDEN).scatter_add_(0, graph_index, x)  # global_add_pool
        return model.mlp(pooled)

    def make() -> tuple[Tensor, Tensor]:
        return (
            torch.randint(0, ATOMS, (nodes, 1), device=device),
            torch.randint(1, BONDS, (edges,), device=device),
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"PNA (PyG examples/pna.py): {LAYERS} PNAConv d{HIDDEN} x {TOWERS} towers, mean / min / "
        f"max / std aggregators on 4 side streams, {count} molecules ({nodes} atoms, {edges} "
        f"directed bonds), fp32 TF32"
    )
    return Built(step, inputs, description, [model, edge_index, graph_index])


if __name__ == "__main__":
    main(build, __doc__)
