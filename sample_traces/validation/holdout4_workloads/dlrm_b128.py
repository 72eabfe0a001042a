"""DLRM-style recommender: bottom MLP 13->512->256->64, 8 embedding tables of 100k x 64 (one
lookup each per sample), pairwise dot interaction (bmm, upper triangle through a fixed index),
top MLP 512->256->1 and sigmoid, batch 128, fp32 (fourth hold-out).

    traceinspect profile dlrm_b128.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

TABLES = 8
DENSE = 13


def mlp(*sizes: int) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for a, b in pairwise(sizes):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return layers


def build(device: torch.device, smoke: bool) -> Built:
    rows, dim, batch = (1000, 8, 4) if smoke else (100_000, 64, 128)
    tables = nn.ModuleList(nn.Embedding(rows, dim) for _ in range(TABLES))
    bottom = nn.Sequential(*mlp(DENSE, 512, 256, dim))
    pairs = (TABLES + 1) * TABLES // 2
    top = nn.Sequential(*mlp(dim + pairs, 512, 256), nn.Linear(256, 1))
    model = nn.ModuleList([tables, bottom, top]).to(device).eval()
    i, j = torch.triu_indices(TABLES + 1, TABLES + 1, offset=1, device=device)
    upper = i * (TABLES + 1) + j  # flat positions of the 36 pairs in the 9x9 products

    @torch.no_grad()
    def step(dense: Tensor, indices: Tensor) -> Tensor:
        x = bottom(dense)
        vectors = torch.stack([x, *(t(indices[:, n]) for n, t in enumerate(tables))], dim=1)
        dots = torch.bmm(vectors, vectors.transpose(1, 2)).flatten(1).index_select(1, upper)
        return torch.sigmoid(top(torch.cat([x, dots], dim=1)))

    inputs = [
        (
            torch.randn(batch, DENSE, device=device),
            torch.randint(0, rows, (batch, TABLES), device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"DLRM, {TABLES} tables of {rows} x {dim}, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
