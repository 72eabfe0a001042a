"""A 3-layer graph attention network (GAT, Velickovic et al.) over one fixed random graph,
fp32 (twelfth hold-out), written as message passing with index and scatter ops, as PyG's
``GATConv`` does it: 16,384 nodes of 128 features (an ogbn-arxiv-sized input), 131,072
random directed edges plus a self-loop per node (147,456 edges; int64 source and
destination indices made once at build, on the device), 4 heads. Per layer: a Linear (no
bias) to heads x channels; per-node attention terms, the projected features times the
source and the destination attention vectors summed over the channels; per edge
``leaky_relu`` (slope 0.2) of the source term gathered at the edge's source plus the
destination term at its destination; the edge softmax over each node's incoming edges: the
per-destination maximum by ``scatter_reduce_`` ("amax", exact in any order), subtracted,
``exp``, the per-destination sum by ``index_add_``, divided; the messages, the source
features gathered per edge times their attention weight, summed into their destinations
by ``index_add_``; plus a bias. Layers 1-2: 4 heads x 64 channels concatenated (256),
then ELU; layer 3: 4 heads x 40 classes averaged, then ``log_softmax``. Everything stays
fp32: ``index_add_`` adds with atomics in no fixed order, so replayed sums may differ from
eager ones in the last fp32 bits, far inside a bf16 tolerance. Returns 16,384 x 40
log-probabilities.

    traceinspect profile gat_edge_softmax_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


class GATLayer(nn.Module):
    def __init__(self, cin: int, heads: int, channels: int, concat: bool) -> None:
        super().__init__()
        self.heads, self.channels, self.concat = heads, channels, concat
        self.lin = nn.Linear(cin, heads * channels, bias=False)
        self.att_src = nn.Parameter(0.1 * torch.randn(1, heads, channels))
        self.att_dst = nn.Parameter(0.1 * torch.randn(1, heads, channels))
        self.bias = nn.Parameter(torch.zeros(heads * channels if concat else channels))

    def forward(self, x: Tensor, src: Tensor, dst: Tensor) -> Tensor:
        n, h, c = x.shape[0], self.heads, self.channels
        feats = self.lin(x).view(n, h, c)
        a_src = (feats * self.att_src).sum(-1)  # (N, heads)
        a_dst = (feats * self.att_dst).sum(-1)
        logits = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)  # (E, heads)
        index = dst[:, None].expand(-1, h)
        peak = torch.empty_like(a_dst).scatter_reduce_(0, index, logits, "amax", include_self=False)
        weights = torch.exp(logits - peak[dst])
        total = torch.zeros_like(a_dst).index_add_(0, dst, weights)
        alpha = weights / total[dst]  # (E, heads)
        messages = feats[src] * alpha.unsqueeze(-1)  # (E, heads, c)
        out = torch.zeros_like(feats).index_add_(0, dst, messages)
        out = out.reshape(n, h * c) if self.concat else out.mean(1)
        return out + self.bias


class GAT(nn.Module):
    def __init__(self, features: int, hidden: int, heads: int, classes: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            (
                GATLayer(features, heads, hidden, True),
                GATLayer(heads * hidden, heads, hidden, True),
                GATLayer(heads * hidden, heads, classes, False),
            )
        )

    def forward(self, x: Tensor, src: Tensor, dst: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x, src, dst)
            if i < len(self.layers) - 1:
                x = F.elu(x)
        return torch.log_softmax(x, dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    nodes, edges, features, hidden, heads, classes = (
        (64, 256, 16, 8, 4, 5) if smoke else (16_384, 131_072, 128, 64, 4, 40)
    )
    gen = torch.Generator().manual_seed(12)
    src, dst = torch.randint(nodes, (2, edges), generator=gen)
    loops = torch.arange(nodes)
    src = torch.cat((src, loops)).to(device)
    dst = torch.cat((dst, loops)).to(device)  # every node has an incoming edge
    model = GAT(features, hidden, heads, classes).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x, src, dst)

    inputs = [(torch.randn(nodes, features, device=device),) for _ in range(2)]
    description = (
        f"GAT, 3 layers x {heads} heads ({hidden} hidden, {classes} classes), edge softmax "
        f"by scatter over {nodes} nodes, {edges + nodes} edges"
    )
    return Built(step, inputs, description, [model, src, dst])


if __name__ == "__main__":
    main(build, __doc__)
