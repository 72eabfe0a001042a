"""A PointNet++ classifier (Qi et al., 2017), single-scale grouping, on 8 point clouds of 4,096
points (fifty-first hold-out: point-set abstraction, a Python loop of farthest-point sampling of
a few small kernels per iteration, then k-nearest-neighbour grouping by ``torch.cdist`` and
``torch.topk``, gathers, and shared MLPs as 1 x 1 convolutions), after the common PyTorch
PointNet++ (``pointnet2_cls_ssg``) with the ball query replaced by k nearest neighbours. The
centroids are chosen with no data-dependent host work: level 1 takes 512 centroids of the 4,096
points, the first 64 by farthest-point sampling (64 iterations from point 0, each the squared
distance of every point to the last pick, the running minimum, ``argmax`` and a gather of the
pick's coordinates) and the other 448 a fixed strided subset (points 0, 9, 18, ..., 4,023, made
at build); level 2 takes 128 of the 512 level-1 centroids by a fixed stride of 4 (made at
build). Each set-abstraction level: ``torch.cdist`` of its centroids to its input points (fp32;
(8, 512, 4096), then (8, 128, 512)), ``topk(32, largest=False)`` for the 32 nearest, the
neighbourhoods gathered (``torch.gather``): their coordinates relative to the centroid and, at
level 2, their features, concatenated; a shared MLP of ``Conv2d`` 1 x 1 + ``BatchNorm2d`` +
ReLU over (batch, channels, centroids, 32) with widths 3-64-64-128 at level 1 and 131-128-128-256
at level 2; the max over the 32 neighbours. Then the global level (group all): the 128
centroids' coordinates and features, 259 channels, through Conv2d 1 x 1 + BatchNorm + ReLU
259-256-512-1024 and the max over the 128 points; the classifier head ``Linear(1024, 512)`` +
``BatchNorm1d`` + ReLU, ``Linear(512, 256)`` + ``BatchNorm1d`` + ReLU (dropout is a no-op in
eval) and ``Linear(256, 40)``, log-softmax. Coordinates, sampling and the distances in fp32, the
MLPs in bf16 on a GPU; eval mode (BatchNorm with running statistics), no gradients, one stream.
Input: the points (8, 4096, 3) fp32. Returns the class log-probabilities (8, 40) fp32.

    traceinspect profile pointnet2_knn_grouping_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

NEIGHBOURS, CLASSES = 32, 40


def shared_mlp(widths: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for cin, cout in zip(widths[:-1], widths[1:], strict=True):
        layers += [nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(*layers)


def gather_points(x: Tensor, idx: Tensor) -> Tensor:
    """x (b, n, c), idx (b, ...) int64 -> (b, ..., c)."""
    b, _, c = x.shape
    picked = torch.gather(x, 1, idx.reshape(b, -1, 1).expand(-1, -1, c))
    return picked.view(*idx.shape, c)


def farthest_points(xyz: Tensor, count: int) -> Tensor:
    """``count`` iterations of farthest-point sampling from point 0: indices (b, count)."""
    b, n, _ = xyz.shape
    nearest = torch.full((b, n), float("inf"), device=xyz.device)
    far = torch.zeros(b, 1, dtype=torch.long, device=xyz.device)
    picks = []
    for _ in range(count):
        picks.append(far)
        centroid = gather_points(xyz, far)  # (b, 1, 3)
        nearest = torch.minimum(nearest, ((xyz - centroid) ** 2).sum(-1))
        far = nearest.argmax(-1, keepdim=True)
    return torch.cat(picks, dim=1)


class PointNet2(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sa1 = shared_mlp([3, 64, 64, 128])
        self.sa2 = shared_mlp([128 + 3, 128, 128, 256])
        self.sa3 = shared_mlp([256 + 3, 256, 512, 1024])
        self.head = nn.Sequential(
            nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Dropout(0.4),
            nn.Linear(256, CLASSES),
        )  # fmt: skip

    def abstract(
        self, mlp: nn.Sequential, xyz: Tensor, feats: Tensor | None, centres: Tensor, k: int
    ) -> Tensor:
        """Group the k nearest of ``xyz`` (b, n, 3) around ``centres`` (b, s, 3); the MLP's
        output max-pooled over them: (b, s, c)."""
        dist = torch.cdist(centres, xyz)  # (b, s, n) fp32
        _, near = torch.topk(dist, k, dim=-1, largest=False)  # (b, s, k)
        grouped = (gather_points(xyz, near) - centres[:, :, None]).to(self.dtype)  # (b, s, k, 3)
        if feats is not None:
            grouped = torch.cat([grouped, gather_points(feats, near)], dim=-1)
        out = mlp(grouped.permute(0, 3, 1, 2))  # (b, c, s, k)
        return out.amax(dim=-1).transpose(1, 2)  # (b, s, c)

    @property
    def dtype(self) -> torch.dtype:
        return self.head[0].weight.dtype


def build(device: torch.device, smoke: bool) -> Built:
    batch, points, fps, rest, stride2, k = (
        (2, 256, 8, 24, 4, 8) if smoke else (8, 4096, 64, 448, 4, NEIGHBOURS)
    )
    centres1 = fps + rest
    stride1 = (points - 1) // rest  # 9 at full size: 0, 9, ..., 4023
    dtype = low_precision(device)
    model = PointNet2().to(device=device, dtype=dtype).eval()
    strided1 = (torch.arange(rest, device=device) * stride1).expand(batch, -1)
    strided2 = (torch.arange(centres1 // stride2, device=device) * stride2).expand(batch, -1)

    @torch.no_grad()
    def step(xyz: Tensor) -> Tensor:
        idx1 = torch.cat([farthest_points(xyz, fps), strided1], dim=1)  # (b, 512)
        xyz1 = gather_points(xyz, idx1)
        f1 = model.abstract(model.sa1, xyz, None, xyz1, k)  # (b, 512, 128)
        xyz2 = gather_points(xyz1, strided2)  # (b, 128, 3)
        f2 = model.abstract(model.sa2, xyz1, f1, xyz2, k)  # (b, 128, 256)
        g = torch.cat([xyz2.to(dtype), f2], dim=-1).transpose(1, 2)[..., None]  # (b, 259, 128, 1)
        g = model.sa3(g).amax(dim=(2, 3))  # (b, 1024)
        return F.log_softmax(model.head(g).float(), dim=-1)

    inputs = [(torch.rand(batch, points, 3, device=device) * 2 - 1,) for _ in range(2)]
    description = (
        f"PointNet++ SSG: {points} points -> {centres1} ({fps} by FPS) -> "
        f"{centres1 // stride2} centroids, {k}-NN grouping, {CLASSES} classes, b{batch}"
    )
    return Built(step, inputs, description, [model, strided1, strided2])


if __name__ == "__main__":
    main(build, __doc__)
