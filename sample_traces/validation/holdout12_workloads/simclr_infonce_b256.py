"""A SimCLR contrastive (NT-Xent / InfoNCE) evaluation step over 256 images in two augmented
views: 512 ResNet-50 pooled feature vectors of 2048, the projection head in bf16 and the
loss in fp32 (twelfth hold-out), inference. The projection head, SimCLRv2's three layers:
Linear 2048->2048 (no bias), BatchNorm1d, ReLU; Linear 2048->2048 (no bias), BatchNorm1d,
ReLU; Linear 2048->128 (no bias), BatchNorm1d; eval mode, every BatchNorm its own kernel
(running statistics set to random values at build). The loss: the 512 projections
L2-normalised (``F.normalize``) in fp32, the 512 x 512 cosine similarities (``z @ z.T``)
divided by the temperature 0.1, the diagonal (self-similarity) filled with -inf by a
boolean mask made at build, each row's positive, the other view of the same image (row i +
256 modulo 512, indices made at build), picked with ``gather``; the loss is the mean of
``logsumexp`` over the row minus the positive. Plus the retrieval accuracies the SimCLR
code logs: top-1 (``argmax`` equals the positive) and top-5 (the positive among
``topk(5)``). Inputs: the features of the first views stacked over those of the second
(512 x 2048, random and non-negative, as pooled post-ReLU features are). Returns the loss,
the top-1 and the top-5 accuracy (0-d fp32 tensors each).

    traceinspect profile simclr_infonce_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

TEMPERATURE = 0.1


def projection_head(features: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(features, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(),
        nn.Linear(hidden, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(),
        nn.Linear(hidden, out, bias=False), nn.BatchNorm1d(out),
    )  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    batch, features, hidden, out = (8, 32, 32, 16) if smoke else (256, 2048, 2048, 128)
    rows = 2 * batch
    dtype = low_precision(device)
    head = projection_head(features, hidden, out)
    for m in head.modules():  # _models.random_batch_norm_stats, for BatchNorm1d
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    head = head.to(device=device, dtype=dtype).eval()
    self_mask = torch.eye(rows, dtype=torch.bool, device=device)
    positives = (torch.arange(rows, device=device) + batch) % rows  # the other view

    @torch.no_grad()
    def step(h: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        z = F.normalize(head(h).float(), dim=1)
        sim = (z @ z.T / TEMPERATURE).masked_fill(self_mask, float("-inf"))
        pos = sim.gather(1, positives[:, None]).squeeze(1)
        loss = (torch.logsumexp(sim, dim=1) - pos).mean()
        top1 = (sim.argmax(1) == positives).float().mean()
        top5 = (sim.topk(5, dim=1).indices == positives[:, None]).any(1).float().mean()
        return loss, top1, top5

    inputs = [(torch.randn(rows, features, device=device, dtype=dtype).relu(),) for _ in range(2)]
    description = (
        f"SimCLR NT-Xent loss, projection head {features}-{hidden}-{hidden}-{out} with "
        f"BatchNorm, batch {batch} x 2 views"
    )
    return Built(step, inputs, description, [head, self_mask, positives])


if __name__ == "__main__":
    main(build, __doc__)
