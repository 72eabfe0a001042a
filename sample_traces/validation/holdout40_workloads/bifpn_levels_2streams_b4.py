"""EfficientDet-D0's feature network and heads (Tan et al., 2020: the BiFPN with fast
normalized fusion, width 64, and the shared class / box heads) on given P3-P7 features of 4
images of 512 x 512, two BiFPN layers on the current stream, the class head and the box head
on two side streams, the flattening, concatenation and top-k box decoding after the join
(fortieth hold-out): bf16 on a GPU (the scores and the decoding in fp32), eval mode, no
gradients; every BatchNorm in eval mode with running statistics set at build. Inputs: the
five 64-channel levels P3-P7, (4, 64, 64, 64), (4, 64, 32, 32), (4, 64, 16, 16), (4, 64, 8, 8)
and (4, 64, 4, 4). A fusion node: its 2 or 3 inputs weighted by ReLU'd learnable scalars
divided by their sum + 1e-4 and added, SiLU, a separable convolution (a depthwise 3 x 3
``Conv2d(64, 64, groups 64, bias=False)`` and a 1 x 1 ``Conv2d(64, 64)``) and a BatchNorm.
Each BiFPN layer: the top-down path, P6 to P3, each level fused with the nearest 2x upsampling
(``F.interpolate``) of the level above's top-down node (P7 passed through); then the bottom-up
path, P4 to P7, each level fused with its input, its top-down node (P4-P6) and the 3 x 3 stride
2 max pool (padding 1) of the level below's output. Side stream 1, the class head, side stream
2, the box head, each over the five output levels with its convolution weights shared across
levels and its BatchNorms per level: three separable convolutions 64 -> 64 each with a
BatchNorm and SiLU, then a separable convolution to 9 anchors x 90 classes (810 channels) or 9
x 4 box deltas (36). Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current
stream: each level's outputs permuted to (4, H W 9, 90) and (4, H W 9, 4) and concatenated over
the levels (49,104 anchors); the sigmoid of the class logits in fp32, each anchor's best class
and score, the top 100 anchors per image (``topk``), their box deltas gathered and decoded in
fp32 against the anchors (made at build: strides 8-128, 3 scales 2^(0, 1/3, 2/3) x 3 aspects
(1, 1), (1.4, 0.7), (0.7, 1.4), anchor scale 4; centre + delta x size, size x exp(delta)) to
corners clipped to the image. On a CPU the heads run in order. Returns the boxes (4, 100, 4)
and scores (4, 100), fp32, and the labels (4, 100) int64.

    traceinspect profile bifpn_levels_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

LEVELS, BIFPN_LAYERS, HEAD_REPEATS, ANCHOR_SCALE, EPS = 5, 2, 3, 4.0, 1e-4
SCALES = (1.0, 2 ** (1 / 3), 2 ** (2 / 3))
ASPECTS = ((1.0, 1.0), (1.4, 0.7), (0.7, 1.4))
ANCHORS = len(SCALES) * len(ASPECTS)


def separable(c: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.Conv2d(c, cout, 1))


class FusionNode(nn.Module):
    def __init__(self, c: int, inputs: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(inputs))
        self.conv, self.bn = separable(c, c), nn.BatchNorm2d(c)

    def forward(self, xs: list[Tensor]) -> Tensor:
        w = F.relu(self.w)
        w = w / (w.sum() + EPS)
        fused = w[0] * xs[0]
        for i in range(1, len(xs)):
            fused = fused + w[i] * xs[i]
        return self.bn(self.conv(F.silu(fused)))


def up(x: Tensor) -> Tensor:
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


def down(x: Tensor) -> Tensor:
    return F.max_pool2d(x, 3, 2, 1)


class BiFPNLayer(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.top_down = nn.ModuleList(FusionNode(c, 2) for _ in range(LEVELS - 1))  # P6..P3
        self.bottom_up = nn.ModuleList(
            FusionNode(c, 3 if i < LEVELS - 1 else 2) for i in range(1, LEVELS)
        )  # P4..P7

    def forward(self, feats: list[Tensor]) -> list[Tensor]:
        td = list(feats)
        for j, i in enumerate(range(LEVELS - 2, -1, -1)):
            td[i] = self.top_down[j]([feats[i], up(td[i + 1])])
        outs = [td[0]]
        for i in range(1, LEVELS):
            mid = [td[i]] if i < LEVELS - 1 else []
            outs.append(self.bottom_up[i - 1]([feats[i], *mid, down(outs[-1])]))
        return outs


class Head(nn.Module):
    def __init__(self, c: int, cout: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(separable(c, c) for _ in range(HEAD_REPEATS))
        self.bns = nn.ModuleList(
            nn.ModuleList(nn.BatchNorm2d(c) for _ in range(HEAD_REPEATS)) for _ in range(LEVELS)
        )
        self.pred = separable(c, cout)

    def forward(self, feats: list[Tensor]) -> tuple[Tensor, ...]:
        outs = []
        for x, bns in zip(feats, self.bns, strict=True):
            for conv, bn in zip(self.convs, bns, strict=True):
                x = F.silu(bn(conv(x)))
            outs.append(self.pred(x))
        return tuple(outs)


def make_anchors(image: int, device: torch.device) -> Tensor:
    """(anchors, 4) as (cx, cy, w, h), ordered level, y, x, anchor like the flattened heads."""
    out = []
    for level in range(LEVELS):
        stride = 2 ** (level + 3)
        c = (torch.arange(image // stride, dtype=torch.float32) + 0.5) * stride
        cy, cx = torch.meshgrid(c, c, indexing="ij")
        sizes = torch.tensor(
            [(ANCHOR_SCALE * stride * s * ax, ANCHOR_SCALE * stride * s * ay)
             for s in SCALES for ax, ay in ASPECTS]
        )  # fmt: skip
        ctr = torch.stack([cx, cy], dim=-1)[:, :, None].expand(-1, -1, ANCHORS, 2)
        wh = sizes.expand(*ctr.shape[:2], ANCHORS, 2)
        out.append(torch.cat([ctr, wh], dim=-1).reshape(-1, 4))
    return torch.cat(out).to(device)


def flatten_levels(outs: tuple[Tensor, ...], per_anchor: int) -> Tensor:
    b = outs[0].shape[0]
    return torch.cat([o.permute(0, 2, 3, 1).reshape(b, -1, per_anchor) for o in outs], dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, c, classes, top = (1, 128, 8, 3, 10) if smoke else (4, 512, 64, 90, 100)
    dtype = low_precision(device)
    bifpn = nn.Sequential(*(BiFPNLayer(c) for _ in range(BIFPN_LAYERS)))
    class_head, box_head = Head(c, ANCHORS * classes), Head(c, ANCHORS * 4)
    model = nn.ModuleList([bifpn, class_head, box_head])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    anchors = make_anchors(image, device)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(*levels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        feats = bifpn(list(levels))
        cls_outs, box_outs = fork_join(
            device, streams, [lambda: class_head(feats), lambda: box_head(feats)]
        )
        logits, deltas = flatten_levels(cls_outs, classes), flatten_levels(box_outs, 4)
        scores, labels = logits.float().sigmoid().max(dim=-1)  # (b, anchors)
        scores, idx = scores.topk(top, dim=1)
        labels = labels.gather(1, idx)
        d = deltas.float().gather(1, idx[..., None].expand(-1, -1, 4))
        a = anchors[idx]  # (b, top, 4)
        ctr = a[..., :2] + d[..., :2] * a[..., 2:]
        wh = a[..., 2:] * d[..., 2:].exp()
        boxes = torch.cat([ctr - 0.5 * wh, ctr + 0.5 * wh], dim=-1).clamp(0, image)
        return boxes, scores, labels

    inputs = [
        tuple(
            torch.randn(batch, c, image // 2**s, image // 2**s, device=device, dtype=dtype)
            for s in range(3, 3 + LEVELS)
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"EfficientDet BiFPN: {BIFPN_LAYERS} layers over P3-P7 ({c} channels, "
        f"{image // 8}..{image // 128}), class and box heads on 2 side streams + concat / "
        f"top-{top} decode, b{batch}",
        [model, anchors],
    )


if __name__ == "__main__":
    main(build, __doc__)
