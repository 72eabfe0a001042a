"""DETR's matching cost matrix (Carion et al., 2020) (twenty-seventh hold-out): 8 images,
100 queries against 20 ground-truth boxes each, fp32. A class head (Linear 256 -> 92) with a
softmax gives the class cost (the negated probability of each target's class, gathered), a
box head (a 3-layer MLP 256 -> 256 -> 4 with a sigmoid) gives boxes whose L1 cost comes from
``torch.cdist(p=1)``, and the generalized-IoU cost is computed from corners, areas,
intersections and enclosing boxes as broadcasts of 100 x 20; the three are weighted and
summed. About 60 small kernels, one stream.

    traceinspect profile detr_matching_cost_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

CLASSES, TARGETS = 91, 20


def corners(b: Tensor) -> Tensor:
    cx, cy, w, h = b.unbind(-1)
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1)


def giou(a: Tensor, b: Tensor) -> Tensor:
    """Pairwise generalized IoU of boxes (x0, y0, x1, y1): a is ... x N x 4, b ... x M x 4."""
    area_a = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])).unsqueeze(-1)
    area_b = ((b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])).unsqueeze(-2)
    lo = torch.maximum(a[..., :, None, :2], b[..., None, :, :2])
    hi = torch.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    inter = (hi - lo).clamp(min=0).prod(-1)
    union = area_a + area_b - inter
    outer = (
        torch.maximum(a[..., :, None, 2:], b[..., None, :, 2:])
        - torch.minimum(a[..., :, None, :2], b[..., None, :, :2])
    ).prod(-1)
    return inter / union - (outer - union) / outer


def build(device: torch.device, smoke: bool) -> Built:
    batch, queries, d = (2, 6, 8) if smoke else (8, 100, 256)
    targets = 3 if smoke else TARGETS
    classify = nn.Linear(d, CLASSES + 1).to(device).eval()
    box = (
        nn.Sequential(
            nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4), nn.Sigmoid()
        )
        .to(device)
        .eval()
    )

    @torch.no_grad()
    def step(h: Tensor, labels: Tensor, boxes: Tensor) -> Tensor:
        prob = classify(h).softmax(-1)  # batch x queries x classes
        cost_class = -prob.gather(2, labels.unsqueeze(1).expand(-1, h.shape[1], -1))
        pred = box(h)
        cost_box = torch.cdist(pred, boxes, p=1)
        cost_giou = -giou(corners(pred), corners(boxes))
        return 5 * cost_box + cost_class + 2 * cost_giou

    inputs = [
        (
            torch.randn(batch, queries, d, device=device),
            torch.randint(CLASSES, (batch, targets), device=device),
            torch.rand(batch, targets, 4, device=device) * 0.5 + 0.25,
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"DETR matching cost, {queries} queries x {targets} boxes, b{batch}",
        [classify, box],
    )


if __name__ == "__main__":
    main(build, __doc__)
