"""A one-stage detector's training loss (RetinaNet, Lin et al., 2017) over 4 images of 2000
anchors and 80 classes fed four inputs, fp32 (eighteenth hold-out), the loss value only (no
backward). The classification loss is the sigmoid focal loss (alpha 0.25, gamma 2) over all
4 x 2000 x 80 logits, written out as torchvision's ``sigmoid_focal_loss`` is: the sigmoid,
``binary_cross_entropy_with_logits`` (no reduction), p_t = p t + (1 - p)(1 - t), the loss
times (1 - p_t)^2 and alpha_t = 0.25 t + 0.75 (1 - t), summed. The box loss is the smooth L1
(beta 1/9, no reduction) of the 4 box deltas, summed per anchor and kept only at the
positive anchors (those whose one-hot row has a 1, found with ``amax`` and a comparison and
applied as a multiplication: no boolean indexing, no data-dependent shape), summed. Both are
divided by the number of positive anchors, clamped to at least 1 (a device tensor, no
``.item()``). About 30 kernels (the sigmoid, the BCE's few kernels, some fifteen elementwise
ops over the logits, the sums, the box loss's five, the normalization), most over 4 x 2000 x
80 values (2.6 MB): launch-bound, with memory-bound kernels of a few us. Inputs: the class
logits (4 x 2000 x 80), the box predictions (4 x 2000 x 4), the target classes as a float
one-hot (4 x 2000 x 80, about 5 % of the anchors positive, the others all zeros) and the
target boxes (4 x 2000 x 4). Returns the total loss, the classification loss and the box
loss (0-d fp32 tensors).

    traceinspect profile focal_loss_detection_4in_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

ALPHA, GAMMA, BETA, POSITIVE = 0.25, 2.0, 1 / 9, 0.05


def focal_loss(logits: Tensor, targets: Tensor) -> Tensor:
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    negatives = 1 - targets
    p_t = p * targets + (1 - p) * negatives
    loss = ce * (1 - p_t) ** GAMMA
    alpha_t = ALPHA * targets + (1 - ALPHA) * negatives
    return (alpha_t * loss).sum()


def build(device: torch.device, smoke: bool) -> Built:
    batch, anchors, classes = (2, 50, 8) if smoke else (4, 2000, 80)

    @torch.no_grad()
    def step(
        logits: Tensor, boxes: Tensor, target_classes: Tensor, target_boxes: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        positive = target_classes.amax(dim=-1) > 0.5  # (B, A)
        num_positive = positive.sum().clamp(min=1)
        cls_loss = focal_loss(logits, target_classes) / num_positive
        box = F.smooth_l1_loss(boxes, target_boxes, reduction="none", beta=BETA).sum(-1)
        box_loss = (box * positive).sum() / num_positive
        return cls_loss + box_loss, cls_loss, box_loss

    def make() -> tuple[Tensor, ...]:
        labels = torch.randint(0, classes, (batch, anchors), device=device)
        is_positive = torch.rand(batch, anchors, device=device) < POSITIVE
        one_hot = F.one_hot(labels, classes).float() * is_positive.unsqueeze(-1)
        return (
            torch.randn(batch, anchors, classes, device=device) - 2,  # a detector's prior bias
            torch.randn(batch, anchors, 4, device=device),
            one_hot,
            torch.randn(batch, anchors, 4, device=device),
        )

    inputs = [make() for _ in range(2)]
    description = (
        f"RetinaNet loss, sigmoid focal (alpha {ALPHA}, gamma {GAMMA:g}) over {anchors} "
        f"anchors x {classes} classes + smooth L1 boxes at the positives, 4 inputs, batch "
        f"{batch}"
    )
    return Built(step, inputs, description, [])


if __name__ == "__main__":
    main(build, __doc__)
