"""Per-sample histograms as features for a small classifier: 64 samples of 4096 values, fp32
(fifteenth hold-out), inference. Each value is put in one of 256 bins by ``torch.bucketize``
against 255 fixed boundaries (made at build: -4 to 4 evenly spaced, values below the first or
above the last go to the end bins), and the counts are accumulated per sample into a
zero-initialized 64 x 256 buffer (``torch.zeros``, on the GPU a fill kernel in torch 2.11, not
a memset, as the earlier sets' traces show; then ``scatter_add_`` of ones along the bins:
atomic adds of 1.0, exact in fp32, so the counts do not depend on the order of the adds). A
second histogram of a derived feature, the squared values, is made the same way against
boundaries from 0 to 16. Both are normalized to frequencies (divided by 4096), concatenated (64
x 512) and fed to an MLP, Linear 512->256, ReLU, Linear 256->10. About 15 kernels, the two
bucketizes and the two scatters over 262,144 values each the largest. Input: the samples (64 x
4096, fp32). Returns the logits (64 x 10) and the concatenated frequencies (64 x 512).

    traceinspect profile scatter_histogram_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

BINS, CLASSES = 256, 10


def histogram(x: Tensor, boundaries: Tensor, ones: Tensor) -> Tensor:
    """(B, N) values -> (B, BINS) frequencies: bucketize, zeros + scatter_add_, normalize."""
    bins = torch.bucketize(x, boundaries)  # (B, N) int64 in [0, BINS)
    counts = torch.zeros(x.shape[0], BINS, device=x.device, dtype=x.dtype)
    counts.scatter_add_(1, bins, ones)
    return counts / x.shape[1]


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, hidden = (4, 64, 16) if smoke else (64, 4096, 256)
    values = torch.linspace(-4, 4, BINS - 1, device=device)
    squares = torch.linspace(0, 16, BINS - 1, device=device)
    mlp = nn.Sequential(nn.Linear(2 * BINS, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES))
    mlp = mlp.to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        ones = torch.ones_like(x)
        features = torch.cat((histogram(x, values, ones), histogram(x * x, squares, ones)), 1)
        return mlp(features), features

    inputs = [(torch.randn(batch, n, device=device),) for _ in range(2)]
    description = (
        f"2 per-sample histograms ({BINS} bins, bucketize + scatter_add_) + MLP "
        f"{2 * BINS}-{hidden}-{CLASSES}, batch {batch} x {n}"
    )
    return Built(step, inputs, description, [values, squares, mlp])


if __name__ == "__main__":
    main(build, __doc__)
