"""APPNP (Klicpera, Bojchevski and Guennemann, ICLR 2019, "Predict then Propagate: Graph Neural
Networks meet Personalized PageRank": an MLP predicts each node's class scores from its own
features, then K steps of personalized-PageRank propagation over the normalized graph spread them,
each step teleporting a fraction alpha back to the predictions) classifying the 13,752 products of
the Amazon Computers co-purchase graph in one full-graph evaluation pass, the graph held as a fixed
edge list (sixty-fifth hold-out: one stream, fp32 with TF32 off for cuBLAS: the GCN normalization,
the self-loops appended to the 491,722 directed edges (``cat``), the in-degrees by ``index_add_`` of
ones, their inverse square roots with the infinities zeroed and each edge's weight as the product at
its two ends; the MLP, ``Linear(767, 64)``, ReLU and ``Linear(64, 10)``; then 10 propagation steps,
each the gather of the 505,474 source rows (``index_select``, (505,474, 10)), their scaling by the
edge weights, the sum into a zeroed (13,752, 10) tensor by ``index_add_`` over the targets, the
scaling by 1 - alpha and the add of alpha times the predictions; the log-softmax, the masked
negative log-likelihood and accuracy on the validation nodes (sums over a mask, no boolean
indexing); some 100 kernels, the propagation's gathers and atomic adds over 20 MB edge tensors and
the 42 MB feature matrix's GEMM the bulk, some 0.4 to 1 ms of GPU time). Laid out as PyTorch
Geometric's ``APPNP`` example (``Net``: ``Linear(num_features, 64)``, ReLU, ``Linear(64,
num_classes)``, ``APPNP(K=10, alpha=0.1)``, ``log_softmax``; dropout off in eval) with the
propagation as ``torch_geometric.nn.conv.APPNP`` computes it (``gcn_norm`` with
``add_self_loops=True`` and no caching, then per step ``propagate`` as gather,
``edge_weight.view(-1, 1) * x_j`` and a sum aggregation, then ``x = x * (1 - alpha)`` and ``x = x +
alpha * h``) and the dataset's sizes (``Amazon(name="Computers")``: 13,752 nodes, 491,722 edges, 767
bag-of-words features, 10 classes). fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` off (torch's default, set at build), eval, no gradients,
random weights (torch's defaults). Inputs (two input sets): the node features (13,752, 767) fp32, 0s
and 1s with about 5 % ones; the edge list (2, 491,722) int64, 245,861 uniform random pairs of
distinct nodes in both directions; the labels (13,752,) int64 below 10; the validation mask
(13,752,) fp32, 1 on a random 10 %. Returns the log-probabilities (13,752, 10), the validation loss
and accuracy (0-d fp32 tensors).

    traceinspect profile appnp_amazon_computers_ppr_k10_index_add_fp32_one_stream_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

NODES, EDGES, FEATURES, CLASSES, HIDDEN, K, ALPHA = 13_752, 491_722, 767, 10, 64, 10, 0.1


def gcn_norm(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    """``gcn_norm`` with self-loops: (edge_index with the loops, the edges' symmetric weights)."""
    loops = torch.arange(num_nodes, device=edge_index.device).expand(2, -1)
    edge_index = torch.cat((edge_index, loops), dim=1)
    row, col = edge_index[0], edge_index[1]
    edge_weight = torch.ones(row.shape[0], device=edge_index.device)
    deg = torch.zeros(num_nodes, device=edge_index.device).index_add_(0, col, edge_weight)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class APPNPNet(nn.Module):
    def __init__(self, features: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.lin1 = nn.Linear(features, hidden)
        self.lin2 = nn.Linear(hidden, classes)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = self.lin2(torch.relu(self.lin1(x)))
        edge_index, edge_weight = gcn_norm(edge_index, x.shape[0])
        src, dst = edge_index[0], edge_index[1]
        h = x
        for _ in range(K):
            x_j = x.index_select(0, src)
            message = edge_weight.view(-1, 1) * x_j
            x = torch.zeros_like(h).index_add_(0, dst, message)
            x = x * (1 - ALPHA)
            x = x + ALPHA * h
        return F.log_softmax(x, dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    nodes, edges, features = (64, 256, 32) if smoke else (NODES, EDGES, FEATURES)
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs (torch's default)
    model = APPNPNet(features, HIDDEN, CLASSES).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor, edge_index: Tensor, y: Tensor, val_mask: Tensor):
        log_probs = model(x, edge_index)
        count = val_mask.sum()
        nll = F.nll_loss(log_probs, y, reduction="none")
        loss = (nll * val_mask).sum() / count
        accuracy = ((log_probs.argmax(dim=1) == y).float() * val_mask).sum() / count
        return log_probs, loss, accuracy

    def graph() -> tuple[Tensor, ...]:
        x = (torch.rand(nodes, features, device=device) < 0.05).float()
        src = torch.randint(0, nodes, (edges // 2,), device=device)
        dst = (src + torch.randint(1, nodes, (edges // 2,), device=device)) % nodes  # no loops
        edge_index = torch.stack((torch.cat((src, dst)), torch.cat((dst, src))))
        y = torch.randint(0, CLASSES, (nodes,), device=device)
        val_mask = (torch.rand(nodes, device=device) < 0.1).float()
        return x, edge_index, y, val_mask

    inputs = [graph() for _ in range(2)]
    description = (
        f"APPNP: MLP {features}-{HIDDEN}-{CLASSES}, K={K} PPR steps (index_select + index_add_) "
        f"over {nodes} nodes / {edges} edges + self-loops, fp32 TF32 off, one stream, b1"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
