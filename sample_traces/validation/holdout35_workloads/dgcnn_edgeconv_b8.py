"""A DGCNN point-cloud classifier (Wang et al., 2019) at batch 8 on 1,024 points
(thirty-fifth hold-out): bf16 on a GPU (the k-NN distances in fp32), eval mode, no gradients.
Four EdgeConv layers, 3 -> 64 -> 64 -> 128 -> 256 channels, each on a graph rebuilt from its
own input features (the dynamic graph): the negative squared pairwise distances
2 x_i . x_j - |x_i|^2 - |x_j|^2 of the 1,024 points, from one batched matmul (8 x 1024 x
1024, in fp32), then ``topk(20)`` along the last dimension for the indices of the 20 nearest
neighbours (the point itself included; a fixed k, so fixed shapes). The neighbours' features
are gathered with index arithmetic as the reference code does (the indices offset by
batch x 1,024 and flattened, then one index into the (8 x 1024, C) point features), the
edge features are cat(x_j - x_i, x_i), (8, 2C, 1024, 20), then ``Conv2d(2C, C', 1,
bias=False)`` + BatchNorm + ``LeakyReLU(0.2)`` and the max over the 20 neighbours. The four
layers' outputs are concatenated (512 channels) and ``Conv1d(512, 1024, 1, bias=False)`` +
BatchNorm + LeakyReLU(0.2) embed each point; global max pooling and global average pooling
over the points give 2 x 1024 values per cloud, then the classifier MLP
``Linear(2048, 512, bias=False)`` + BatchNorm + LeakyReLU(0.2), ``Linear(512, 256)`` +
BatchNorm + LeakyReLU(0.2), ``Linear(256, 40)`` (dropout is an identity in eval). The
BatchNorms hold running statistics set at build. Input: points (8, 3, 1024). Returns the
logits (8, 40).

    traceinspect profile dgcnn_edgeconv_b8.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

K, WIDTHS, EMBED, CLASSES, SLOPE = 20, (64, 64, 128, 256), 1024, 40, 0.2


def knn(x: Tensor, k: int) -> Tensor:
    """x (b, c, n) -> the indices (b, n, k) of each point's k nearest points, itself included."""
    xf = x.float()
    inner = torch.matmul(xf.transpose(1, 2), xf)  # (b, n, n)
    sq = (xf * xf).sum(dim=1)  # (b, n)
    neg_dist = 2 * inner - sq.unsqueeze(2) - sq.unsqueeze(1)
    return neg_dist.topk(k, dim=-1).indices


def edge_features(x: Tensor, k: int) -> Tensor:
    """x (b, c, n) -> cat(x_j - x_i, x_i) over each point's k neighbours, (b, 2c, n, k)."""
    b, c, n = x.shape
    idx = knn(x, k)
    base = torch.arange(b, device=x.device).view(b, 1, 1) * n
    flat = (idx + base).view(-1)
    pts = x.transpose(1, 2).contiguous()  # (b, n, c)
    nbrs = pts.view(b * n, c)[flat].view(b, n, k, c)
    center = pts.view(b, n, 1, c).expand(b, n, k, c)
    return torch.cat((nbrs - center, center), dim=3).permute(0, 3, 1, 2)


class EdgeConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int) -> None:
        super().__init__()
        self.k = k
        self.conv = nn.Sequential(
            nn.Conv2d(2 * cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(SLOPE)
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(edge_features(x, self.k)).amax(dim=-1)  # (b, cout, n)


class DGCNN(nn.Module):
    def __init__(self, k: int = K) -> None:
        super().__init__()
        chans = (3, *WIDTHS)
        self.edges = nn.ModuleList(EdgeConv(cin, cout, k) for cin, cout in pairwise(chans))
        self.embed = nn.Sequential(
            nn.Conv1d(sum(WIDTHS), EMBED, 1, bias=False), nn.BatchNorm1d(EMBED), nn.LeakyReLU(SLOPE)
        )
        self.head = nn.Sequential(
            nn.Linear(2 * EMBED, 512, bias=False),
            nn.BatchNorm1d(512),
            nn.LeakyReLU(SLOPE),
            nn.Linear(512, 256),
            nn.BatchNorm1d(256),
            nn.LeakyReLU(SLOPE),
            nn.Linear(256, CLASSES),
        )

    def forward(self, x: Tensor) -> Tensor:
        feats = []
        for edge in self.edges:
            x = edge(x)
            feats.append(x)
        x = self.embed(torch.cat(feats, dim=1))  # (b, 1024, n)
        pooled = torch.cat((x.amax(dim=-1), x.mean(dim=-1)), dim=1)  # (b, 2048)
        return self.head(pooled)


def build(device: torch.device, smoke: bool) -> Built:
    batch, points = (2, 64) if smoke else (8, 1024)
    dtype = low_precision(device)
    model = DGCNN()
    random_batch_norm_stats(model)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, points, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"DGCNN, {len(WIDTHS)} EdgeConv (k {K}, dynamic k-NN by matmul + topk) "
        f"{'-'.join(map(str, WIDTHS))} -> {EMBED}, b{batch} x {points} points",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
