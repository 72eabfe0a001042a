"""Graph-level readout over a batch of graphs (twenty-second hold-out): 4,096 nodes of 128
features in 16 graphs (node-to-graph ids sorted), pooled three ways — max
(``scatter_reduce`` amax), mean (``segment_reduce`` over the sorted ids: no atomics, so
eager and replay agree bit for bit), and attention pooling (a gate per node, a softmax
within each graph from a scattered max and a segment sum, the gated features summed per
graph) — then an MLP 384 -> 256 -> 10 on the pooled features. fp32.

    traceinspect profile segment_pool_scatter_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    graphs, nodes, d = (2, 10, 8) if smoke else (16, 4096, 128)
    gate = nn.Linear(d, 1).to(device).eval()
    head = nn.Sequential(nn.Linear(3 * d, 256), nn.ReLU(), nn.Linear(256, 10)).to(device).eval()
    ids = torch.sort(torch.randint(0, graphs, (nodes,), device=device)).values
    ids[:graphs] = torch.arange(graphs, device=device)  # no empty graph
    ids = torch.sort(ids).values
    lengths = torch.bincount(ids, minlength=graphs)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        index = ids.unsqueeze(1).expand(-1, d)
        pooled_max = torch.full((graphs, d), -1e30, device=x.device).scatter_reduce(
            0, index, x, reduce="amax", include_self=True
        )
        pooled_mean = torch.segment_reduce(x, "mean", lengths=lengths)
        g = gate(x).squeeze(1)
        g_max = torch.full((graphs,), -1e30, device=x.device).scatter_reduce(
            0, ids, g, reduce="amax", include_self=True
        )
        e = torch.exp(g - g_max[ids])
        denom = torch.segment_reduce(e, "sum", lengths=lengths)
        weights = (e / denom[ids]).unsqueeze(1)
        pooled_att = torch.segment_reduce(weights * x, "sum", lengths=lengths)
        return head(torch.cat([pooled_max, pooled_mean, pooled_att], dim=1))

    inputs = [(torch.randn(nodes, d, device=device),) for _ in range(2)]
    description = f"{graphs} graphs, {nodes} nodes x {d}: scatter readouts"
    return Built(step, inputs, description, [gate, head])


if __name__ == "__main__":
    main(build, __doc__)
