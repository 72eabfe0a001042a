"""A three-layer graph convolutional network over a sparse CSR adjacency matrix (thirty-first
hold-out): one graph of 20,000 nodes with 12 random neighbours each (240,000 edges, the
row-normalized adjacency as a ``torch.sparse_csr_tensor``), 128 input features, layers
128 -> 256 -> 256 -> 40 classes, fp32: per layer a dense GEMM (features times weights)
then the sparse-times-dense product through cuSPARSE's SpMM, a bias and a ReLU. Whether
cuSPARSE's work-buffer query and its kernels capture into a CUDA graph is part of what
this records.

    traceinspect profile sparse_gcn_csr_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    nodes, degree, widths = (64, 4, (8, 16, 16, 4)) if smoke else (20000, 12, (128, 256, 256, 40))
    crow = torch.arange(0, nodes * degree + 1, degree, device=device)
    col = torch.randint(0, nodes, (nodes * degree,), device=device)
    values = torch.full((nodes * degree,), 1.0 / degree, device=device)
    adjacency = torch.sparse_csr_tensor(crow, col, values, (nodes, nodes))
    layers = nn.ModuleList(
        nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:], strict=True)
    ).to(device)
    layers.eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for i, layer in enumerate(layers):
            x = adjacency @ (x @ layer.weight.t()) + layer.bias
            if i < len(layers) - 1:
                x = torch.relu(x)
        return x

    inputs = [(torch.randn(nodes, widths[0], device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"3-layer GCN over a CSR adjacency, {nodes} nodes x {degree} neighbours",
        [layers, adjacency],
    )


if __name__ == "__main__":
    main(build, __doc__)
