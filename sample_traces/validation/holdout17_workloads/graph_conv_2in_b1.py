"""A three-layer graph convolutional network (Kipf & Welling, 2017) on one graph of 512 nodes
with a dense normalized adjacency, fp32 (seventeenth hold-out), inference. The adjacency is
D^-1/2 (A + I) D^-1/2 of a random symmetric graph (each node linked to about 8 others, plus
self-loops), stored dense (512 x 512, 1 MB: the largest of the graph's two input copies);
the node features are 512 x 64. Each layer computes ReLU(adj @ (X @ W)) with W a fixed
weight without bias, the widths 64->128->128->64: per layer a thin GEMM (512 x in by in x
out), a GEMM with the adjacency (512 x 512 by 512 x out) and a ReLU. 9 kernels (more where
a thin fp32 GEMM is a split-K GEMM and its reduction), the largest the adjacency GEMMs (67
MFLOP each at width 128): launch-bound. Inputs: the adjacency (512 x 512) and the node
features (512 x 64). Returns the node embeddings (512 x 64, fp32).

    traceinspect profile graph_conv_2in_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

DEGREE = 8


def normalized_adjacency(nodes: int, device: torch.device) -> Tensor:
    """D^-1/2 (A + I) D^-1/2 of a random symmetric graph, dense."""
    edges = (torch.rand(nodes, nodes, device=device) < DEGREE / (2 * nodes)).float()
    adj = ((edges + edges.t()) > 0).float()
    adj.fill_diagonal_(1.0)
    inv_sqrt = adj.sum(1).rsqrt()
    return inv_sqrt[:, None] * adj * inv_sqrt[None, :]


def build(device: torch.device, smoke: bool) -> Built:
    nodes, widths = (32, (8, 16, 16, 8)) if smoke else (512, (64, 128, 128, 64))
    weights = nn.ParameterList(
        nn.Parameter(torch.randn(cin, cout) * cin**-0.5)
        for cin, cout in zip(widths[:-1], widths[1:], strict=True)
    )
    weights = weights.to(device)

    @torch.no_grad()
    def step(adj: Tensor, features: Tensor) -> Tensor:
        x = features
        for w in weights:
            x = torch.relu(adj @ (x @ w))
        return x

    inputs = [
        (normalized_adjacency(nodes, device), torch.randn(nodes, widths[0], device=device))
        for _ in range(2)
    ]
    description = (
        f"GCN, 3 layers relu(adj @ (X @ W)) {'-'.join(map(str, widths))}, dense normalized "
        f"adjacency {nodes} x {nodes}, {nodes} nodes"
    )
    return Built(step, inputs, description, [weights])


if __name__ == "__main__":
    main(build, __doc__)
