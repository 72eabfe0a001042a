"""GraphSAGE over one graph of 8000 nodes and 40000 directed edges (a fixed random edge list
made at build), node features 128, bf16 (seventh hold-out): 3 SAGE layers 128->128, each
gathering the source nodes' features along the edges (``index_select``), summing them into
their destination nodes with ``index_add_`` into a zeroed buffer, dividing by the in-degree
(computed once at build, at least 1: a mean aggregation), concatenating the node's own
features with that mean (256 wide) and applying a Linear 256->128; ReLU after the first two
layers, none after the last. Input: the node features (8000 x 128); output: the node
embeddings (8000 x 128).

    traceinspect profile graph_sage_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class SageLayer(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.linear = nn.Linear(2 * cin, cout)

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, inv_degree: Tensor) -> Tensor:
        summed = torch.zeros_like(x).index_add_(0, dst, x.index_select(0, src))
        return self.linear(torch.cat([x, summed * inv_degree], dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    nodes, edges, features, layers = (200, 1000, 16, 3) if smoke else (8000, 40000, 128, 3)
    dtype = low_precision(device)
    model = nn.ModuleList(SageLayer(features, features) for _ in range(layers))
    model = model.to(device=device, dtype=dtype).eval()
    src = torch.randint(0, nodes, (edges,), device=device)
    dst = torch.randint(0, nodes, (edges,), device=device)
    degree = torch.zeros(nodes, device=device).index_add_(0, dst, torch.ones(edges, device=device))
    inv_degree = (1.0 / degree.clamp(min=1)).to(dtype).unsqueeze(1)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for i, layer in enumerate(model):
            x = layer(x, src, dst, inv_degree)
            if i < layers - 1:
                x = torch.relu(x)
        return x

    inputs = [(torch.randn(nodes, features, device=device, dtype=dtype),) for _ in range(2)]
    description = f"GraphSAGE, {layers} layers x {features} over {nodes} nodes, {edges} edges"
    return Built(step, inputs, description, [model, src, dst, inv_degree])


if __name__ == "__main__":
    main(build, __doc__)
