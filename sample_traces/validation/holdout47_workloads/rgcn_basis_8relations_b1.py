"""A two-layer relational GCN (R-GCN, Schlichtkrull et al.) with basis decomposition over one
fixed knowledge graph (forty-seventh hold-out: per-relation message passing, a Python loop
over edge types as PyG's ``RGCNConv`` runs it): 20,000 nodes, 8 relations of 12,500 directed
edges each (a fixed random edge list made at build), 64 features, bf16. Per layer: the 8
relation weights (64 x 64) composed from 4 shared bases (``einsum`` of the (8, 4)
coefficients with the (4, 64, 64) bases); the self-loop ``x W_0 + b``; then per relation,
the source nodes' features gathered (``index_select``), multiplied by that relation's weight,
scaled by 1 / (the destination's in-degree under that relation, computed at build, at least
1) and summed into the destination nodes (``index_add_``): four small kernels per relation,
32 per layer. ReLU after the first layer. Eval, no gradients, one stream. Input: node features
(20000, 64). Returns (20000, 64).

    traceinspect profile rgcn_basis_8relations_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class RGCNLayer(nn.Module):
    def __init__(self, features: int, relations: int, bases: int) -> None:
        super().__init__()
        self.bases = nn.Parameter(torch.randn(bases, features, features) * features**-0.5)
        self.coeff = nn.Parameter(torch.randn(relations, bases) * bases**-0.5)
        self.self_loop = nn.Linear(features, features)

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, norm: Tensor) -> Tensor:
        weights = torch.einsum("rb,bio->rio", self.coeff, self.bases)
        out = self.self_loop(x)
        for r in range(weights.shape[0]):
            out.index_add_(0, dst[r], (x.index_select(0, src[r]) @ weights[r]) * norm[r])
        return out


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        nodes, relations, edges, bases, features, layers = 100, 3, 200, 2, 8, 2
    else:
        nodes, relations, edges, bases, features, layers = 20_000, 8, 12_500, 4, 64, 2
    dtype = low_precision(device)
    model = nn.ModuleList(RGCNLayer(features, relations, bases) for _ in range(layers))
    model = model.to(device, dtype).eval()
    src = torch.randint(0, nodes, (relations, edges), device=device)
    dst = torch.randint(0, nodes, (relations, edges), device=device)
    degree = torch.zeros(relations, nodes, device=device).scatter_add_(
        1, dst, torch.ones(relations, edges, device=device)
    )
    norm = (1.0 / degree.clamp(min=1)).gather(1, dst).to(dtype).unsqueeze(-1)  # (R, E, 1)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for i, layer in enumerate(model):
            x = layer(x, src, dst, norm)
            if i < layers - 1:
                x = torch.relu(x)
        return x

    inputs = [(torch.randn(nodes, features, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"R-GCN, {layers} layers x {features}, {relations} relations ({bases} bases), "
        f"{nodes} nodes, {relations}x{edges} edges"
    )
    return Built(step, inputs, description, [model, src, dst, norm])


if __name__ == "__main__":
    main(build, __doc__)
