"""Mask R-CNN's RoI heads (He et al., 2017; the box and mask heads laid out as torchvision's
``maskrcnn_resnet50_fpn``: TwoMLPHead, FastRCNNPredictor, MaskRCNNHeads, MaskRCNNPredictor)
on one FPN level for 2 images x 64 proposals, with the box branch and the mask branch on two
side streams and the detection post-processing after the join (thirty-ninth hold-out): bf16
on a GPU (the post-processing in fp32), eval mode, no gradients. Inputs: the P3 feature map
(2, 256, 100, 136), stride 8 of an 800 x 1088 image, and the proposals (2, 64, 4) fp32 as
(x1, y1, x2, y2) in image pixels (made at build inside the image, 32 to 266 pixels a side).
Each branch pools its own RoI features: RoIAlign with the half-pixel offset (Detectron2's
ROIAlignV2) and sampling ratio 2, written as one ``F.grid_sample`` per branch (bilinear,
zeros padding, align_corners=False; the 2 x 2 sample points per bin of all 64 RoIs of an
image as rows of one grid, computed in fp32 from the proposals and cast to the features'
dtype) and a 2 x 2 average pool. Box branch, on one side stream: the 7 x 7 RoI features
(128, 256, 7, 7) flattened to 12,544, ``Linear(12544, 1024)`` + ReLU, ``Linear(1024, 1024)``
+ ReLU, then ``Linear(1024, 91)`` class logits and ``Linear(1024, 364)`` per-class box
deltas. Mask branch, on the other: the 14 x 14 RoI features (128, 256, 14, 14), four
``Conv2d(256, 256, 3, padding 1)`` + ReLU, ``ConvTranspose2d(256, 256, 2, stride 2)`` + ReLU
and ``Conv2d(256, 91, 1)`` to the (128, 91, 28, 28) mask logits. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream, in fp32, as torchvision's
``postprocess_detections`` and ``maskrcnn_inference`` run without the score threshold and
NMS: the softmax over the 91 classes; each RoI's label, the argmax over the 90 foreground
classes, and its score; that class's box deltas gathered, divided by the weights (10, 10, 5,
5), dw and dh clamped at log(1000 / 16), decoded against the proposal (centre + delta x size,
size x exp(delta)), turned into corners and clipped to the image; that class's mask logits
gathered and passed through a sigmoid. On a CPU the branches run in order. Returns the boxes
(2, 64, 4), scores (2, 64), labels (2, 64) int64 and mask probabilities (2, 64, 28, 28), fp32.

    traceinspect profile maskrcnn_roi_heads_2streams_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

STRIDE, BOX_POOL, MASK_POOL = 8, 7, 14
WEIGHTS = (10.0, 10.0, 5.0, 5.0)
CLIP = math.log(1000.0 / 16)


def roi_align(feats: Tensor, boxes: Tensor, steps: Tensor) -> Tensor:
    """(b, c, h, w) features, (b, r, 4) fp32 boxes in image pixels -> (b r, c, out, out), out
    = len(steps) / 2: 2 x 2 bilinear samples per bin, averaged."""
    b, c, h, w = feats.shape
    r, n = boxes.shape[1], steps.numel()
    x1, y1, x2, y2 = (boxes / STRIDE - 0.5).unbind(-1)  # half-pixel offset (aligned)
    xs = x1[..., None] + (x2 - x1)[..., None] * steps  # (b, r, n) sample positions
    ys = y1[..., None] + (y2 - y1)[..., None] * steps
    gx = (2 * xs + 1) / w - 1  # grid_sample's [-1, 1], align_corners=False
    gy = (2 * ys + 1) / h - 1
    grid = torch.stack(
        [gx[:, :, None, :].expand(b, r, n, n), gy[:, :, :, None].expand(b, r, n, n)], dim=-1
    )
    s = F.grid_sample(feats, grid.reshape(b, r * n, n, 2).to(feats.dtype), align_corners=False)
    s = s.view(b, c, r, n, n).transpose(1, 2).reshape(b * r, c, n, n)
    return F.avg_pool2d(s, 2)


class BoxHead(nn.Module):
    def __init__(self, c: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.fc6 = nn.Linear(c * BOX_POOL * BOX_POOL, hidden)
        self.fc7 = nn.Linear(hidden, hidden)
        self.cls_score = nn.Linear(hidden, classes)
        self.bbox_pred = nn.Linear(hidden, 4 * classes)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = F.relu(self.fc7(F.relu(self.fc6(x.flatten(1)))))
        return self.cls_score(x), self.bbox_pred(x)


class MaskHead(nn.Module):
    def __init__(self, c: int, classes: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(4):
            layers += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU()]
        self.fcn = nn.Sequential(*layers)
        self.conv5_mask = nn.ConvTranspose2d(c, c, 2, stride=2)
        self.mask_fcn_logits = nn.Conv2d(c, classes, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.mask_fcn_logits(F.relu(self.conv5_mask(self.fcn(x))))


def make_proposals(batch: int, rois: int, img_h: int, img_w: int, device: torch.device) -> Tensor:
    lo, hi = img_h / 25, img_h / 3
    wh = lo + torch.rand(batch, rois, 2, device=device) * (hi - lo)
    xy = torch.rand(batch, rois, 2, device=device) * (
        torch.tensor([img_w, img_h], device=device) - wh
    )
    return torch.cat([xy, xy + wh], dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, rois, c, fh, fw, hidden, classes = (
        (2, 4, 16, 20, 24, 32, 5) if smoke else (2, 64, 256, 100, 136, 1024, 91)
    )
    img_h, img_w = fh * STRIDE, fw * STRIDE
    dtype = low_precision(device)
    box_head, mask_head = BoxHead(c, hidden, classes), MaskHead(c, classes)
    model = nn.ModuleList([box_head, mask_head]).to(device, dtype).eval()
    box_steps, mask_steps = (
        (torch.arange(2 * p, device=device, dtype=torch.float32) + 0.5) / (2 * p)
        for p in (BOX_POOL, MASK_POOL)
    )
    weights = torch.tensor(WEIGHTS, device=device)
    limits = torch.tensor([img_w, img_h, img_w, img_h], device=device, dtype=torch.float32)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(feats: Tensor, proposals: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        (cls, deltas), masks = fork_join(
            device,
            streams,
            [
                lambda: box_head(roi_align(feats, proposals, box_steps)),
                lambda: mask_head(roi_align(feats, proposals, mask_steps)),
            ],
        )
        n = cls.shape[0]
        probs = cls.float().softmax(dim=-1)
        scores, labels = probs[:, 1:].max(dim=1)
        labels = labels + 1  # (n,), foreground classes 1..90
        d = deltas.float().view(n, -1, 4).gather(1, labels[:, None, None].expand(n, 1, 4))[:, 0]
        d = d / weights
        dwh = d[:, 2:].clamp(max=CLIP)
        p = proposals.reshape(n, 4)
        size = p[:, 2:] - p[:, :2]
        ctr = p[:, :2] + 0.5 * size + d[:, :2] * size
        wh = size * dwh.exp()
        boxes = torch.cat([ctr - 0.5 * wh, ctr + 0.5 * wh], dim=1)
        boxes = torch.minimum(boxes.clamp(min=0), limits)
        m = masks.float()
        m = m.gather(1, labels[:, None, None, None].expand(n, 1, *m.shape[2:]))[:, 0].sigmoid()
        b = proposals.shape[0]
        return (
            boxes.view(b, -1, 4),
            scores.view(b, -1),
            labels.view(b, -1),
            m.view(b, -1, *m.shape[1:]),
        )

    inputs = [
        (
            torch.randn(batch, c, fh, fw, device=device, dtype=dtype),
            make_proposals(batch, rois, img_h, img_w, device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"Mask R-CNN RoI heads: box MLP branch (7x7 RoIAlign) and mask conv branch (14x14 "
        f"RoIAlign) on 2 side streams + per-class decode / mask gather, b{batch} x {rois} RoIs",
        [model, box_steps, mask_steps, weights, limits],
    )


if __name__ == "__main__":
    main(build, __doc__)
