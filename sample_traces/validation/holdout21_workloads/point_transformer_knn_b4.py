"""A Point Transformer layer (Zhao et al., 2021) with its k-nearest-neighbour grouping, 4
clouds of 2048 points, 16 neighbours, 128 features, fp32 (twenty-first hold-out), inference,
fed two inputs: the coordinates (4 x 2048 x 3) and the features (4 x 2048 x 128). The
neighbours come from ``torch.cdist`` (2048 x 2048 per cloud) and ``topk``; the layer
projects queries, keys and values, gathers each point's neighbours' keys, values and
coordinates (``gather`` over 4 x 2048 x 16), encodes the relative positions (Linear 3->128,
ReLU, Linear), forms the vector attention weights (an MLP on query - key + position),
softmax over the neighbours, sums the weighted values plus positions and adds the residual
after a final projection. About 40 kernels; the distance matrix, the top-k and the gathers
are memory-bound. Inputs: the coordinates and the features. Returns 4 x 2048 x 128.

    traceinspect profile point_transformer_knn_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

K = 16


def gather(x: Tensor, index: Tensor) -> Tensor:
    """x (b, n, c) at index (b, n, k): (b, n, k, c)."""
    b, n, k = index.shape
    flat = index.reshape(b, n * k, 1).expand(-1, -1, x.shape[-1])
    return torch.gather(x, 1, flat).view(b, n, k, x.shape[-1])


class PointTransformerLayer(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)
        self.pos = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
        self.attn = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c))
        self.out = nn.Linear(c, c)

    def forward(self, xyz: Tensor, feats: Tensor) -> Tensor:
        index = torch.cdist(xyz, xyz).topk(K, dim=-1, largest=False).indices
        q = self.q(feats).unsqueeze(2)
        k, v = gather(self.k(feats), index), gather(self.v(feats), index)
        rel = self.pos(xyz.unsqueeze(2) - gather(xyz, index))
        w = torch.softmax(self.attn(q - k + rel), dim=2)
        return feats + self.out((w * (v + rel)).sum(2))


def build(device: torch.device, smoke: bool) -> Built:
    batch, points, c = (1, 64, 16) if smoke else (4, 2048, 128)
    layer = PointTransformerLayer(c).to(device).eval()

    @torch.no_grad()
    def step(xyz: Tensor, feats: Tensor) -> Tensor:
        return layer(xyz, feats)

    inputs = [
        (torch.rand(batch, points, 3, device=device), torch.randn(batch, points, c, device=device))
        for _ in range(2)
    ]
    description = f"Point Transformer layer, {points} points x {c}, k={K}, batch {batch}"
    return Built(step, inputs, description, [layer])


if __name__ == "__main__":
    main(build, __doc__)
