"""Robust statistics and a quantile (pinball) loss over 256 feature vectors of 512, fp32
(eleventh hold-out): many small sorts, scans and reductions, launch-bound. Inputs: the
features (256 x 512), a target per row (256) and the predicted 0.1, 0.25, 0.5, 0.75 and 0.9
quantiles of the target (256 x 5). The features are split into 4 groups of 128 columns
(each copied contiguous) and per group: ``torch.quantile`` at the 5 levels (a device tensor
made at build) along the row; ``torch.sort`` of the row, its ``cumsum`` normalised by the
row total of absolute values (a Lorenz curve) and the curve at 8 fixed fractions;
``torch.searchsorted`` of 8 fixed thresholds into the sorted row (an empirical CDF); a 10%
trimmed mean (slice of the sorted row); the median absolute deviation (``median`` of
|x - median|); and a 16-bin histogram of the row through ``torch.bucketize`` against 15
fixed edges and ``scatter_add_`` of ones into a zero count tensor. The per-group
statistics are concatenated into 256 x 160 features. The pinball loss of the predicted
quantiles against the target, max(q (y - p), (q - 1) (y - p)), is averaged over rows and
levels, plus a penalty on crossed quantiles (relu of each level's prediction minus the next
one's). Every size is fixed by the shapes; nothing is read back. Returns the statistics
(256 x 160) and the loss (a 0-d tensor).

    traceinspect profile quantile_loss_ops_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)
GROUPS, FRACTIONS, BINS, TRIM = 4, 8, 16, 0.1


def build(device: torch.device, smoke: bool) -> Built:
    batch, features = (4, 32) if smoke else (256, 512)
    width = features // GROUPS
    trim = int(width * TRIM)
    levels = torch.tensor(LEVELS, device=device)
    lorenz_at = (torch.linspace(0, 1, FRACTIONS + 2, device=device)[1:-1] * (width - 1)).long()
    thresholds = torch.linspace(-2, 2, FRACTIONS, device=device).expand(batch, -1).contiguous()
    edges = torch.linspace(-3, 3, BINS - 1, device=device)

    def group_stats(x: Tensor) -> Tensor:  # x: (batch, width)
        q = torch.quantile(x, levels, dim=1).t()  # (batch, levels)
        ordered, _ = torch.sort(x, dim=1)
        curve = torch.cumsum(ordered.abs(), dim=1)
        curve = curve / curve[:, -1:].clamp_min(1e-12)
        lorenz = curve.index_select(1, lorenz_at)
        ecdf = torch.searchsorted(ordered, thresholds).float() / width
        trimmed = ordered[:, trim : width - trim].mean(dim=1, keepdim=True)
        median = x.median(dim=1, keepdim=True).values
        mad = (x - median).abs().median(dim=1, keepdim=True).values
        bins = torch.bucketize(x, edges)
        hist = torch.zeros(batch, BINS, device=x.device).scatter_add_(1, bins, torch.ones_like(x))
        return torch.cat((q, lorenz, ecdf, trimmed, median, mad, hist / width), dim=1)

    @torch.no_grad()
    def step(x: Tensor, target: Tensor, predicted: Tensor) -> tuple[Tensor, Tensor]:
        stats = torch.cat([group_stats(g.contiguous()) for g in x.split(width, dim=1)], dim=1)
        err = target[:, None] - predicted  # (batch, levels)
        pinball = torch.maximum(levels * err, (levels - 1) * err).mean()
        crossing = torch.relu(predicted[:, :-1] - predicted[:, 1:]).mean()
        return stats, pinball + crossing

    inputs = [
        (
            torch.randn(batch, features, device=device),
            torch.randn(batch, device=device),
            torch.sort(torch.randn(batch, len(LEVELS), device=device), dim=1).values,
        )
        for _ in range(2)
    ]
    description = (
        f"quantile / sort / cumsum / searchsorted statistics over {GROUPS} groups + pinball "
        f"loss, batch {batch} x {features}"
    )
    return Built(step, inputs, description, [levels, lorenz_at, thresholds, edges])


if __name__ == "__main__":
    main(build, __doc__)
