"""A segmentation loss as medical and instance-segmentation pipelines write it (thirtieth
hold-out): 8 predicted masks of 4 classes at 512 x 512, fp32, against integer label maps.
The soft Dice loss per class (softmax over the class channels, the labels one-hot encoded by
``F.one_hot`` and permuted, intersections and sums per class reduced over the pixels, smooth
1.0), the focal loss (gamma 2, alpha 0.25, from the log-softmax gathered at the label), a
boundary-weighted cross-entropy (the label edges from a 3 x 3 max-pool minus min-pool of the
one-hot maps, weight 1 + 4 x edge), their weighted sum, and per-class IoU of the argmax
prediction. Memory-bound reductions and elementwise kernels over 8M-element tensors; one
stream.

    traceinspect profile seg_dice_focal_loss_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor

CLASSES, GAMMA, ALPHA = 4, 2.0, 0.25


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (2, 16) if smoke else (8, 512)

    @torch.no_grad()
    def step(logits: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
        probs = logits.softmax(dim=1)
        onehot = F.one_hot(labels, CLASSES).permute(0, 3, 1, 2).float()
        inter = (probs * onehot).sum(dim=(0, 2, 3))
        total = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
        dice = 1 - ((2 * inter + 1) / (total + 1)).mean()
        logp = logits.log_softmax(dim=1).gather(1, labels[:, None]).squeeze(1)
        focal = (-ALPHA * (1 - logp.exp()) ** GAMMA * logp).mean()
        edges = F.max_pool2d(onehot, 3, 1, 1) + F.max_pool2d(-onehot, 3, 1, 1)
        weight = 1 + 4 * edges.amax(dim=1)
        ce = (F.cross_entropy(logits, labels, reduction="none") * weight).mean()
        pred = logits.argmax(dim=1)
        pred1 = F.one_hot(pred, CLASSES).permute(0, 3, 1, 2).float()
        iou = (pred1 * onehot).sum(dim=(0, 2, 3)) / (
            (pred1 + onehot).clamp(max=1).sum(dim=(0, 2, 3)) + 1e-6
        )
        return dice + focal + 0.5 * ce, iou

    inputs = [
        (
            torch.randn(batch, CLASSES, size, size, device=device),
            torch.randint(0, CLASSES, (batch, size, size), device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"Dice + focal + boundary CE, {CLASSES} classes {size}^2, b{batch}")


if __name__ == "__main__":
    main(build, __doc__)
