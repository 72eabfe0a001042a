"""A detector's post-processing with Matrix NMS (SOLOv2, Wang et al., 2020) on 8 images fed five
separate inputs (thirty-seventh hold-out): fp32 (explicitly, also on a GPU), no gradients, no
network, fixed shapes throughout (no ``torchvision.ops.nms``, no boolean indexing). Box
decoding as torchvision's ``BoxCoder`` with weights (10, 10, 5, 5): the deltas against the
4,000 anchors' centres and sizes, dw and dh clamped at log(1000 / 16), exp, back to x1 y1 x2 y2
(8, 4000, 4); each image's boxes clipped to its own width and height. Scores: the sigmoid of
the class logits (8, 4000, 20), the best class per anchor (max over the 20 classes: a score and
a label), scores under the score threshold set to 0, ``topk(200)`` per image and the boxes and
labels gathered at those 200. Matrix NMS on the 200 (Gaussian decay, sigma 2): the pairwise
IoU (8, 200, 200), zeroed between boxes of different labels and kept only above the diagonal
(``triu(1)``: box i scored above box j); per box its compensation, the largest IoU with a
higher-scored box (max over the rows); the decay of box j the min over i of exp(-2 (iou_ij^2 -
comp_i^2)); the scores times their decay, set to 0 under 0.05, then ``topk(100)`` and the
boxes and labels gathered again (labels -1 where the score is 0). Inputs: the anchors (4000,
4) (x1 y1 x2 y2 pixels), the box deltas (8, 4000, 4), the class logits (8, 4000, 20), the image
sizes (8, 2) (height, width, fp32) and the score threshold as a 0-d fp32 tensor (0.05 in one
input set, 0.1 in the other). Returns the kept boxes (8, 100, 4), their scores (8, 100) and
labels (8, 100) int64.

    traceinspect profile matrix_nms_postprocess_5in_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

WEIGHTS, CLIP, SIGMA, UPDATE_THRESH = (10.0, 10.0, 5.0, 5.0), math.log(1000.0 / 16), 2.0, 0.05


def decode(anchors: Tensor, deltas: Tensor) -> Tensor:
    """(a, 4) anchors and (b, a, 4) deltas -> (b, a, 4) boxes, x1 y1 x2 y2."""
    widths = anchors[:, 2] - anchors[:, 0]
    heights = anchors[:, 3] - anchors[:, 1]
    ctr_x = anchors[:, 0] + 0.5 * widths
    ctr_y = anchors[:, 1] + 0.5 * heights
    wx, wy, ww, wh = WEIGHTS
    dx, dy = deltas[..., 0] / wx, deltas[..., 1] / wy
    dw = (deltas[..., 2] / ww).clamp(max=CLIP)
    dh = (deltas[..., 3] / wh).clamp(max=CLIP)
    pred_ctr_x = dx * widths + ctr_x
    pred_ctr_y = dy * heights + ctr_y
    pred_w = torch.exp(dw) * widths
    pred_h = torch.exp(dh) * heights
    return torch.stack(
        [
            pred_ctr_x - 0.5 * pred_w,
            pred_ctr_y - 0.5 * pred_h,
            pred_ctr_x + 0.5 * pred_w,
            pred_ctr_y + 0.5 * pred_h,
        ],
        dim=-1,
    )


def pairwise_iou(boxes: Tensor) -> Tensor:
    """(b, k, 4) -> (b, k, k)."""
    area = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    lt = torch.maximum(boxes[:, :, None, :2], boxes[:, None, :, :2])
    rb = torch.minimum(boxes[:, :, None, 2:], boxes[:, None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area[:, :, None] + area[:, None, :] - inter).clamp(min=1e-6)


def gather_rows(x: Tensor, idx: Tensor) -> Tensor:
    """x (b, n, ...) at idx (b, k) -> (b, k, ...)."""
    view = idx.view(*idx.shape, *(1,) * (x.dim() - 2)).expand(-1, -1, *x.shape[2:])
    return x.gather(1, view)


def build(device: torch.device, smoke: bool) -> Built:
    batch, anchors_n, classes, pre, post = (2, 64, 4, 16, 8) if smoke else (8, 4000, 20, 200, 100)

    @torch.no_grad()
    def step(
        anchors: Tensor, deltas: Tensor, logits: Tensor, image_sizes: Tensor, score_thresh: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        boxes = decode(anchors, deltas)
        limits = image_sizes.flip(-1).repeat(1, 2)[:, None, :]  # (b, 1, 4): w h w h
        boxes = torch.minimum(boxes, limits).clamp(min=0)
        scores, labels = torch.sigmoid(logits).max(dim=-1)  # (b, a)
        scores = torch.where(scores >= score_thresh, scores, torch.zeros_like(scores))
        scores, idx = scores.topk(pre, dim=1)
        boxes, labels = gather_rows(boxes, idx), labels.gather(1, idx)
        same = labels[:, :, None] == labels[:, None, :]
        decay_iou = (pairwise_iou(boxes) * same).triu(diagonal=1)  # (b, i, j), i above j
        compensate = decay_iou.amax(dim=1)  # (b, k): per box, its max IoU with a higher one
        decay = torch.exp(-SIGMA * (decay_iou.square() - compensate[:, :, None].square()))
        scores = scores * decay.amin(dim=1)
        scores = torch.where(scores >= UPDATE_THRESH, scores, torch.zeros_like(scores))
        scores, idx = scores.topk(post, dim=1)
        boxes, labels = gather_rows(boxes, idx), labels.gather(1, idx)
        labels = torch.where(scores > 0, labels, torch.full_like(labels, -1))
        return boxes, scores, labels

    def make(thresh: float) -> tuple[Tensor, ...]:
        centres = torch.rand(anchors_n, 2, device=device) * 512
        sizes = 16 + torch.rand(anchors_n, 2, device=device) * 240
        anchors = torch.cat([centres - sizes / 2, centres + sizes / 2], dim=1)
        return (
            anchors,
            torch.randn(batch, anchors_n, 4, device=device) * 0.5,
            torch.randn(batch, anchors_n, classes, device=device) - 2.0,
            384 + torch.rand(batch, 2, device=device) * 128,
            torch.tensor(thresh, device=device),
        )

    inputs = [make(0.05), make(0.1)]
    return Built(
        step,
        inputs,
        f"box decode + clip + top-{pre} + Matrix NMS (gaussian) + top-{post}, {anchors_n} "
        f"anchors x {classes} classes, 5 inputs, b{batch}",
    )


if __name__ == "__main__":
    main(build, __doc__)
