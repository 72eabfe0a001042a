"""Two graph-attention (GAT) layers over one random graph, the edge softmax done by hand with
scatter and index-add kernels (thirty-second hold-out): 4,096 nodes, 65,536 random directed
edges plus a self-loop on every node (69,632 edges, the ``src`` and ``dst`` index tensors
made once in ``build``), node features (4096, 128), 4 heads of 64 features, fp32, no
gradients. Per layer: a Linear projection to 4 x 64, per-edge logits
``leaky_relu(a_src . h[src] + a_dst . h[dst], 0.2)``, the softmax over each destination's
incoming edges (the per-node maximum by ``scatter_reduce(..., reduce="amax",
include_self=False)``, ``exp`` of the shifted logits, their sums by ``index_add_``, a
division), then the messages, source features times weights, summed into their destinations
by ``index_add_``, and a bias. ELU after the first layer (heads concatenated, 256 features),
the mean over heads after the second. Returns the node outputs (4096, 64). The float sums by
``index_add_`` use atomics on a GPU, so their low bits may vary from run to run.

    traceinspect profile gat_edge_softmax_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


class GATLayer(nn.Module):
    def __init__(self, cin: int, heads: int, feats: int) -> None:
        super().__init__()
        self.heads, self.feats = heads, feats
        self.proj = nn.Linear(cin, heads * feats, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, feats) * feats**-0.5)
        self.a_dst = nn.Parameter(torch.randn(heads, feats) * feats**-0.5)
        self.bias = nn.Parameter(torch.zeros(heads, feats))

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, dst_heads: Tensor) -> Tensor:
        nodes = x.shape[0]
        h = self.proj(x).view(nodes, self.heads, self.feats)
        score_src = (h * self.a_src).sum(dim=-1)  # (nodes, heads)
        score_dst = (h * self.a_dst).sum(dim=-1)
        logits = F.leaky_relu(score_src[src] + score_dst[dst], 0.2)  # (edges, heads)
        peak = logits.new_zeros(nodes, self.heads).scatter_reduce(
            0, dst_heads, logits, reduce="amax", include_self=False
        )
        weights = torch.exp(logits - peak[dst])
        sums = weights.new_zeros(nodes, self.heads).index_add_(0, dst, weights)
        weights = weights / sums[dst]
        messages = h[src] * weights.unsqueeze(-1)  # (edges, heads, feats)
        return h.new_zeros(h.shape).index_add_(0, dst, messages) + self.bias


def build(device: torch.device, smoke: bool) -> Built:
    nodes, edges, cin, heads, feats = (64, 256, 16, 2, 8) if smoke else (4096, 65536, 128, 4, 64)
    loops = torch.arange(nodes, device=device)
    src = torch.cat([torch.randint(0, nodes, (edges,), device=device), loops])
    dst = torch.cat([torch.randint(0, nodes, (edges,), device=device), loops])
    dst_heads = dst.unsqueeze(1).expand(-1, heads).contiguous()
    first, second = GATLayer(cin, heads, feats), GATLayer(heads * feats, heads, feats)
    model = nn.ModuleList([first, second]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        x = F.elu(first(x, src, dst, dst_heads).flatten(1))
        return second(x, src, dst, dst_heads).mean(dim=1)

    inputs = [(torch.randn(nodes, cin, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"2-layer GAT, {heads} heads x {feats}, edge softmax by scatter/index_add, "
        f"{nodes} nodes, {edges} edges + self-loops",
        [model, src, dst, dst_heads],
    )


if __name__ == "__main__":
    main(build, __doc__)
