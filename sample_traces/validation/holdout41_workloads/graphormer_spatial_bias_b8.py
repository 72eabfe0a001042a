"""A Graphormer encoder (Ying et al., 2021: centrality encoding, spatial encoding as a per-head
attention bias from shortest-path distances, pre-LN transformer layers) over 8 graphs padded to
64 nodes, 4 layers of width 256 (forty-first hold-out): bf16 on a GPU (the readout in fp32),
eval mode (dropout off), no gradients, no graph token and no edge encoding. Inputs: the node
features (8, 64, 256), already embedded; the shortest-path distances (8, 64, 64) int64, clipped
to 0..20 (20 also for unreachable pairs); the in- and out-degrees (8, 64) int64 in 0..63; and a
node mask (8, 64) bool, True for real nodes (each graph has 40 to 64, the rest padding). The
centrality encoding: ``nn.Embedding(64, 256)`` of the in-degree plus one of the out-degree,
added to the node features. The spatial encoding: ``nn.Embedding(21, 8)`` of the distances,
permuted to a (8, 8 heads, 64, 64) bias, -inf on the padded keys (``torch.where`` on the mask),
made contiguous once and shared by the layers. Each of the 4 pre-LN layers: LayerNorm(256), fused
``Linear(256, 768)``, ``F.scaled_dot_product_attention`` with the bias as its float mask (8
heads of 32), ``Linear(256, 256)``, residual add; LayerNorm, ``Linear(256, 256)``, GELU,
``Linear(256, 256)`` (Graphormer's FFN as wide as the model), residual add. Then a final
LayerNorm, the graph readout, the mean over the real nodes (the mask as weights, in fp32) and
``Linear(256, 1)``. 512 node rows per GEMM, attention with a dense (8, 8, 64, 64) bias, the
embedding gathers. Returns the node representations (8, 64, 256) (bf16 on a GPU) and the graph
predictions (8,) fp32.

    traceinspect profile graphormer_spatial_bias_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

MAX_DIST, MAX_DEGREE, LAYERS, MIN_NODES = 20, 64, 4, 40


class GraphormerLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        att = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=bias
        )
        x = x + self.proj(att.transpose(1, 2).reshape(b, n, d))
        return x + self.ffn(self.norm2(x))


class Graphormer(nn.Module):
    def __init__(self, d: int, heads: int, max_degree: int) -> None:
        super().__init__()
        self.in_degree, self.out_degree = (nn.Embedding(max_degree, d) for _ in range(2))
        self.spatial = nn.Embedding(MAX_DIST + 1, heads)
        self.layers = nn.ModuleList(GraphormerLayer(d, heads) for _ in range(LAYERS))
        self.norm, self.readout = nn.LayerNorm(d), nn.Linear(d, 1)

    def forward(
        self, x: Tensor, dist: Tensor, deg_in: Tensor, deg_out: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        x = x + self.in_degree(deg_in) + self.out_degree(deg_out)
        bias = self.spatial(dist).permute(0, 3, 1, 2)  # (b, heads, n, n)
        bias = torch.where(mask[:, None, None, :], bias, float("-inf")).contiguous()
        for layer in self.layers:
            x = layer(x, bias)
        x = self.norm(x)
        w = mask.float()[..., None]
        pooled = (x.float() * w).sum(dim=1) / w.sum(dim=1)
        return x, self.readout(pooled.to(x.dtype))[:, 0].float()


def build(device: torch.device, smoke: bool) -> Built:
    graphs, nodes, d, heads = (2, 8, 32, 4) if smoke else (8, 64, 256, 8)
    dtype = low_precision(device)
    model = Graphormer(d, heads, MAX_DEGREE).to(device, dtype).eval()

    @torch.no_grad()
    def step(
        x: Tensor, dist: Tensor, deg_in: Tensor, deg_out: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor]:
        return model(x, dist, deg_in, deg_out, mask)

    def example() -> tuple[Tensor, ...]:
        counts = torch.randint(min(MIN_NODES, nodes // 2), nodes + 1, (graphs, 1))
        mask = torch.arange(nodes) < counts
        return (
            torch.randn(graphs, nodes, d, device=device, dtype=dtype),
            torch.randint(MAX_DIST + 1, (graphs, nodes, nodes), device=device),
            torch.randint(MAX_DEGREE, (graphs, nodes), device=device),
            torch.randint(MAX_DEGREE, (graphs, nodes), device=device),
            mask.to(device),
        )

    inputs = [example() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Graphormer: {LAYERS} pre-LN layers ({heads} heads, d{d}) with shortest-path spatial "
        f"bias and degree centrality embeddings over {nodes}-node padded graphs, mean readout, "
        f"b{graphs}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
