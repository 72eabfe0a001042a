"""PointPillars (Lang et al., 2019, laid out as OpenPCDet's KITTI model: ``PillarVFE``,
``PointPillarScatter``, ``BaseBEVBackbone`` and ``AnchorHeadSingle``) on 2 point clouds of
12,000 pillars (forty-first hold-out): bf16 on a GPU, eval mode, no gradients; every BatchNorm
in eval mode with running statistics set at build, every convolution ``bias=False`` but the
head's. Inputs: the pillars' points (2, 12000, 32, 9), the 9 decorated point features (x, y, z,
reflectance, offsets to the pillar's point mean and to its centre) already computed, zero past
each pillar's point count; the point counts (2, 12000) int64 in 1..32; and the pillars' (y, x)
cells in the 496 x 432 grid (2, 12000, 2) int64, distinct within a cloud. The pillar feature
net: the points times the mask of real points (``arange(32)`` < count), ``Linear(9, 64,
bias=False)``, BatchNorm over the 64 channels, ReLU and the max over the 32 points, (2, 12000,
64). The scatter: a zero canvas (2 x 496 x 432, 64) and ``index_put_`` of the 24,000 pillar
rows at their flattened cells (cloud x 496 x 432 + y x 432 + x), viewed as the (2, 64, 496,
432) BEV map (channels-last strides, no copy). The backbone, 3 stages of 3 x 3 convolutions +
BatchNorm + ReLU, each a stride-2 one and then 3, 5 and 5 more: 64 channels at 248 x 216, 128
at 124 x 108, 256 at 62 x 54; the necks, ``ConvTranspose2d`` with kernel = stride 1, 2 and 4 to
128 channels each at 248 x 216, + BatchNorm + ReLU, concatenated (384 channels). The SSD-style
head, 1 x 1 ``Conv2d`` to 6 anchors per cell (3 classes x 2 rotations): class logits (18
channels), box deltas (6 x 7 = 42) and direction logits (6 x 2 = 12). Returns the three maps
permuted to (2, 248, 216, 18), (2, 248, 216, 42) and (2, 248, 216, 12) (bf16 on a GPU).

    traceinspect profile pointpillars_scatter_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

POINT_FEATURES, ANCHORS, CLASSES, BOX_CODE, DIR_BINS = 9, 6, 3, 7, 2
LAYERS, STRIDES, UPSAMPLE = (3, 5, 5), (2, 2, 2), (1, 2, 4)


def conv_bn_relu(cin: int, cout: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class PillarFeatureNet(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.linear, self.norm = nn.Linear(POINT_FEATURES, c, bias=False), nn.BatchNorm1d(c)

    def forward(self, points: Tensor, counts: Tensor) -> Tensor:
        b, p, n, f = points.shape
        mask = torch.arange(n, device=points.device) < counts[..., None]  # (b, p, n)
        x = self.linear(points * mask[..., None].to(points.dtype))
        x = torch.relu(self.norm(x.view(-1, x.shape[-1]))).view(b, p, n, -1)
        return x.amax(dim=2)  # (b, p, c)


class Backbone(nn.Module):
    def __init__(self, cin: int, widths: tuple[int, ...], up: int) -> None:
        super().__init__()
        self.stages = nn.ModuleList()
        self.necks = nn.ModuleList()
        for c, layers, stride, upsample in zip(widths, LAYERS, STRIDES, UPSAMPLE, strict=True):
            block = conv_bn_relu(cin, c, stride)
            for _ in range(layers):
                block += conv_bn_relu(c, c)
            self.stages.append(nn.Sequential(*block))
            self.necks.append(
                nn.Sequential(
                    nn.ConvTranspose2d(c, up, upsample, upsample, bias=False),
                    nn.BatchNorm2d(up),
                    nn.ReLU(),
                )
            )
            cin = c

    def forward(self, x: Tensor) -> Tensor:
        ups = []
        for stage, neck in zip(self.stages, self.necks, strict=True):
            x = stage(x)
            ups.append(neck(x))
        return torch.cat(ups, dim=1)


class PointPillars(nn.Module):
    def __init__(self, c: int, widths: tuple[int, ...], up: int, grid: tuple[int, int]) -> None:
        super().__init__()
        self.grid = grid
        self.pfn = PillarFeatureNet(c)
        self.backbone = Backbone(c, widths, up)
        cat = up * len(widths)
        self.cls = nn.Conv2d(cat, ANCHORS * CLASSES, 1)
        self.box = nn.Conv2d(cat, ANCHORS * BOX_CODE, 1)
        self.dir = nn.Conv2d(cat, ANCHORS * DIR_BINS, 1)

    def forward(
        self, points: Tensor, counts: Tensor, cells: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        b, p = counts.shape
        h, w = self.grid
        feats = self.pfn(points, counts)  # (b, p, c)
        c = feats.shape[-1]
        batch = torch.arange(b, device=cells.device)[:, None] * (h * w)
        flat = (batch + cells[..., 0] * w + cells[..., 1]).flatten()  # (b p,)
        canvas = feats.new_zeros(b * h * w, c)
        canvas.index_put_((flat,), feats.view(b * p, c))
        bev = canvas.view(b, h, w, c).permute(0, 3, 1, 2)  # (b, c, h, w), channels-last
        x = self.backbone(bev)
        cls, box, direction = (
            head(x).permute(0, 2, 3, 1) for head in (self.cls, self.box, self.dir)
        )
        return cls, box, direction


def build(device: torch.device, smoke: bool) -> Built:
    clouds, pillars, points, grid, c, widths, up = (
        (2, 40, 4, (32, 24), 8, (8, 16, 32), 8)
        if smoke
        else (2, 12000, 32, (496, 432), 64, (64, 128, 256), 128)
    )
    dtype = low_precision(device)
    model = PointPillars(c, widths, up, grid)
    random_batch_norm_stats(model)
    model.pfn.norm.running_mean.normal_(0, 0.1)  # the BatchNorm1d, which that helper skips
    model.pfn.norm.running_var.uniform_(0.5, 1.5)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(pts: Tensor, counts: Tensor, cells: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return model(pts, counts, cells)

    def example() -> tuple[Tensor, Tensor, Tensor]:
        counts = torch.randint(1, points + 1, (clouds, pillars))
        flat = torch.stack([torch.randperm(grid[0] * grid[1])[:pillars] for _ in range(clouds)])
        cells = torch.stack([flat // grid[1], flat % grid[1]], dim=-1)
        pts = torch.randn(clouds, pillars, points, POINT_FEATURES)
        pts = pts * (torch.arange(points) < counts[..., None])[..., None]
        return pts.to(device, dtype), counts.to(device), cells.to(device)

    inputs = [example() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"PointPillars: pillar feature net ({pillars} pillars x {points} points, 9 -> {c}, max), "
        f"index_put_ scatter to a {grid[0]} x {grid[1]} BEV canvas, 3-stage backbone "
        f"({'/'.join(map(str, widths))}) + upsampling necks, class / box / direction head, "
        f"b{clouds}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
