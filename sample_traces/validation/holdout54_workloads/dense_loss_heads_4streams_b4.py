"""The four loss heads of a multi-task dense-prediction detector on 4 images of 512 x 512, each
loss on its own side stream (fifty-fourth hold-out: four concurrent chains of medium elementwise
and reduction kernels, most of them some 5 to 30 us on an H100 over fp32 maps of 4 to 21 MB,
memory-bound and side by side, the chains of unequal length), as a CenterNet-style detector
(Zhou et al., 2019) trained with a semantic head, a depth-and-normal head and Panoptic-DeepLab's
instance heads (Cheng et al., 2020) computes its losses. Side stream 1, the detection heatmap
loss: CenterNet's penalty-reduced pixel-wise focal loss (``_neg_loss`` in
``src/lib/models/losses.py``) over the class heatmaps (4, 80, 128, 128) at stride 4: pred =
clamp(sigmoid(logits), 1e-4, 1 - 1e-4) (CenterNet's ``_sigmoid``, out of place here since the
logits are an input), pos = gt == 1, neg = gt < 1, pos_loss = sum(log(pred) (1 - pred)^2 pos),
neg_loss = sum(log(1 - pred) pred^2 (1 - gt)^4 neg), loss = -(pos_loss + neg_loss) /
max(num_pos, 1) (CenterNet's ``if num_pos == 0`` branch, which reads the count on the host,
written as the clamp, which gives the same value without a sync). Side stream 2, the semantic
loss: ``F.cross_entropy`` with ``ignore_index=255`` and ``label_smoothing=0.1`` over the
semantic logits (4, 19, 256, 256) at stride 2 (Cityscapes' 19 classes; PyTorch's composite:
log-softmax over the classes, ``nll_loss2d``, the smoothing term's class sum masked at the
ignored pixels and averaged over the kept ones). Side stream 3, the geometry loss: smooth-L1
(``F.smooth_l1_loss``, beta 0.1, reduction none) between the predicted and target depth and
surface normals (4, 4, 512, 512), times the validity mask where the target depth is positive,
summed and divided by 4 x the valid pixel count (at least 1). Side stream 4, Panoptic-DeepLab's
instance losses at full resolution: the centre heatmap's MSE (4, 1, 512, 512) times its pixel
weights, and the centre offsets' L1 (4, 2, 512, 512) times the instance-pixel weights expanded
over the two channels, each summed and divided by its weights' sum (at least 1, where
Panoptic-DeepLab's ``if weights.sum() > 0`` reads it on the host), weighted 200 and 0.01 as its
config. Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on
the branch outputs outside capture). After the join, on the current stream: the four losses
stacked, their sum the total. The targets are made at build: 32 objects per image, each an
(untruncated) Gaussian peak of exactly 1 at an integer centre with sigma 1 to 6 on its class's
map, overlapping peaks merged by their maximum (CenterNet's ``draw_umich_gaussian``), and the
centre targets likewise on one map; the semantic labels uniform over the classes with 5 %
ignored (255); the depths 1 to 80 m with 30 % missing (0), the normals unit vectors; the
offsets uniform in +-20 pixels; the centre weights 1 on 95 % of the pixels, the offset weights
on 40 %. The predictions: the heatmap and semantic logits Gaussian (the heatmap's around -2),
the others their targets plus Gaussian noise. fp32, no gradients. Inputs (two input sets): the
heatmap logits and targets, the semantic logits and labels (int64), the geometry predictions
and targets, the centre predictions, targets and weights, the offset predictions, targets and
weights: 12 tensors, 130 MB. Returns the total and the four heads' losses (5,).

    traceinspect profile dense_loss_heads_4streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor

CLASSES, SEM_CLASSES, IGNORE, OBJECTS = 80, 19, 255, 32
SMOOTHING, GEOMETRY_BETA, CENTER_WEIGHT, OFFSET_WEIGHT = 0.1, 0.1, 200.0, 0.01


def heatmap_focal_loss(logits: Tensor, gt: Tensor) -> Tensor:
    """CenterNet's _neg_loss after its _sigmoid, the num_pos branch as a clamp."""
    pred = torch.clamp(logits.sigmoid(), min=1e-4, max=1 - 1e-4)
    pos_inds = gt.eq(1).float()
    neg_inds = gt.lt(1).float()
    neg_weights = torch.pow(1 - gt, 4)
    pos_loss = torch.log(pred) * torch.pow(1 - pred, 2) * pos_inds
    neg_loss = torch.log(1 - pred) * torch.pow(pred, 2) * neg_weights * neg_inds
    num_pos = pos_inds.sum()
    return -(pos_loss.sum() + neg_loss.sum()) / num_pos.clamp(min=1)


def semantic_loss(logits: Tensor, labels: Tensor) -> Tensor:
    return F.cross_entropy(logits, labels, ignore_index=IGNORE, label_smoothing=SMOOTHING)


def geometry_loss(pred: Tensor, target: Tensor) -> Tensor:
    valid = (target[:, :1] > 0).float()
    loss = F.smooth_l1_loss(pred, target, reduction="none", beta=GEOMETRY_BETA) * valid
    return loss.sum() / (valid.sum() * pred.shape[1]).clamp(min=1)


def instance_loss(
    center: Tensor,
    center_gt: Tensor,
    center_w: Tensor,
    offset: Tensor,
    offset_gt: Tensor,
    offset_w: Tensor,
) -> Tensor:
    """Panoptic-DeepLab's centre (MSE) and offset (L1) losses, weighted."""
    center_loss = F.mse_loss(center, center_gt, reduction="none") * center_w
    center_loss = center_loss.sum() / center_w.sum().clamp(min=1)
    w = offset_w.expand_as(offset)
    offset_loss = F.l1_loss(offset, offset_gt, reduction="none") * w
    offset_loss = offset_loss.sum() / w.sum().clamp(min=1)
    return CENTER_WEIGHT * center_loss + OFFSET_WEIGHT * offset_loss


def gaussian_heatmaps(
    batch: int, classes: int, size: int, objects: int, device: torch.device
) -> Tensor:
    """Per object a Gaussian peak of 1 at an integer centre on its class's map, overlapping
    peaks merged by their maximum: (batch, classes, size, size)."""
    ys = torch.arange(size, device=device).view(1, 1, size, 1)
    xs = torch.arange(size, device=device).view(1, 1, 1, size)
    cy, cx = (torch.randint(0, size, (batch, objects, 1, 1), device=device) for _ in range(2))
    sigma = 1 + 5 * torch.rand(batch, objects, 1, 1, device=device)
    peaks = torch.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * sigma**2))
    cls = torch.randint(0, classes, (batch, objects, 1, 1), device=device)
    heat = torch.zeros(batch, classes, size, size, device=device)
    return heat.scatter_reduce_(1, cls.expand(-1, -1, size, size), peaks, reduce="amax")


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, classes = (2, 32, 8) if smoke else (4, 512, CLASSES)
    streams = side_streams(device, 4)

    @torch.no_grad()
    def step(
        hm_logits: Tensor,
        hm_gt: Tensor,
        sem_logits: Tensor,
        sem_labels: Tensor,
        geo_pred: Tensor,
        geo_gt: Tensor,
        center: Tensor,
        center_gt: Tensor,
        center_w: Tensor,
        offset: Tensor,
        offset_gt: Tensor,
        offset_w: Tensor,
    ) -> Tensor:
        losses = fork_join(
            device,
            streams,
            [
                lambda: heatmap_focal_loss(hm_logits, hm_gt),
                lambda: semantic_loss(sem_logits, sem_labels),
                lambda: geometry_loss(geo_pred, geo_gt),
                lambda: instance_loss(center, center_gt, center_w, offset, offset_gt, offset_w),
            ],
        )
        terms = torch.stack(losses)
        return torch.cat((terms.sum().view(1), terms))

    def make() -> tuple[Tensor, ...]:
        hm, sem, full = size // 4, size // 2, size
        hm_gt = gaussian_heatmaps(batch, classes, hm, OBJECTS, device)
        hm_logits = torch.randn(batch, classes, hm, hm, device=device) - 2.0
        sem_logits = torch.randn(batch, SEM_CLASSES, sem, sem, device=device)
        sem_labels = torch.randint(0, SEM_CLASSES, (batch, sem, sem), device=device)
        sem_labels[torch.rand(batch, sem, sem, device=device) < 0.05] = IGNORE
        depth = 1 + 79 * torch.rand(batch, 1, full, full, device=device)
        depth = depth * (torch.rand(batch, 1, full, full, device=device) > 0.3)
        normals = F.normalize(torch.randn(batch, 3, full, full, device=device), dim=1)
        geo_gt = torch.cat((depth, normals), dim=1)
        geo_pred = geo_gt + 0.5 * torch.randn_like(geo_gt)
        center_gt = gaussian_heatmaps(batch, 1, full, OBJECTS, device)
        center = center_gt + 0.1 * torch.randn_like(center_gt)
        center_w = (torch.rand(batch, 1, full, full, device=device) > 0.05).float()
        offset_gt = 20 * (2 * torch.rand(batch, 2, full, full, device=device) - 1)
        offset = offset_gt + 2 * torch.randn_like(offset_gt)
        offset_w = (torch.rand(batch, 1, full, full, device=device) > 0.6).float()
        return (
            hm_logits, hm_gt, sem_logits, sem_labels, geo_pred, geo_gt,
            center, center_gt, center_w, offset, offset_gt, offset_w,
        )  # fmt: skip

    inputs = [make() for _ in range(2)]
    description = (
        f"4 loss heads on 4 side streams: CenterNet focal ({classes}x{size // 4}^2), CE + label "
        f"smoothing ({SEM_CLASSES}x{size // 2}^2), smooth-L1 depth+normals (4x{size}^2), "
        f"Panoptic-DeepLab centre MSE + offset L1 ({size}^2), fp32, b{batch}"
    )
    return Built(step, inputs, description)


if __name__ == "__main__":
    main(build, __doc__)
