"""A triplet-loss embedding model (Schroff et al., 2015, "FaceNet") evaluated on 32 triplets
of 3 x 32 x 32 images, fp32 (seventeenth hold-out), inference (the loss value only, no
backward). The anchors, the positives and the negatives each go, one after the other,
through ONE shared small conv encoder: Conv 3->32 3x3 (padding 1), ReLU, 2x2 max pool, Conv
32->64 3x3, ReLU, 2x2 max pool, flatten (64 x 8 x 8 = 4096), Linear 4096->128; each output
L2-normalized (``F.normalize``); then ``F.triplet_margin_loss`` with margin 0.2 (the two
pairwise L2 distances, the hinge and the mean). The convs on cuDNN (TF32 by torch's default
for convolutions). About 12 kernels per encoder pass (the two convs with their bias, two
ReLUs, two pools, the GEMM, the normalization) and 10 for the loss, some 45 in all, the
largest over 32 x 32 x 32 x 32 values (4 MB): launch-bound. Inputs: the anchors, the
positives and the negatives (32 x 3 x 32 x 32 each). Returns the loss (a 0-d fp32 tensor)
and the anchors' embeddings (32 x 128).

    traceinspect profile triplet_loss_3in_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

EMBED, MARGIN = 128, 0.2


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (2, 8) if smoke else (32, 32)
    encoder = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (size // 4) ** 2, EMBED),
    ).to(device).eval()  # fmt: skip

    def embed(x: Tensor) -> Tensor:
        return F.normalize(encoder(x), dim=-1)

    @torch.no_grad()
    def step(anchor: Tensor, positive: Tensor, negative: Tensor) -> tuple[Tensor, Tensor]:
        za, zp, zn = embed(anchor), embed(positive), embed(negative)
        return F.triplet_margin_loss(za, zp, zn, margin=MARGIN), za

    def make() -> tuple[Tensor, ...]:
        anchor = torch.randn(batch, 3, size, size, device=device)
        positive = anchor + 0.3 * torch.randn_like(anchor)  # a perturbed view of the anchor
        negative = torch.randn(batch, 3, size, size, device=device)
        return anchor, positive, negative

    inputs = [make() for _ in range(2)]
    description = (
        f"triplet loss, shared conv encoder (2 convs + pools + Linear -> {EMBED}) on anchor, "
        f"positive and negative (3 inputs), L2-normalized, margin {MARGIN}, batch {batch} x 3 x "
        f"{size}x{size}"
    )
    return Built(step, inputs, description, [encoder])


if __name__ == "__main__":
    main(build, __doc__)
