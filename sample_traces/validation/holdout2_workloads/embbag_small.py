"""Recommender with 8 embedding bags of 32 dims at batch 256 (second hold-out).

    traceinspect profile embbag_small.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import nn

TABLES = 8
LOOKUPS = 20


def build(device: torch.device, smoke: bool) -> Built:
    rows, dim, batch = (100, 8, 4) if smoke else (200_000, 32, 256)
    bags = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="mean") for _ in range(TABLES))
    bottom = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Linear(128, dim))
    top = nn.Sequential(nn.Linear(dim * (TABLES + 1), 256), nn.ReLU(), nn.Linear(256, 1))
    model = nn.ModuleList([bags, bottom, top]).to(device).eval()
    offsets = torch.arange(0, batch * LOOKUPS, LOOKUPS, device=device)

    @torch.no_grad()
    def step(dense: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        pooled = [bag(indices[t], offsets) for t, bag in enumerate(bags)]
        return torch.sigmoid(top(torch.cat([bottom(dense), *pooled], dim=1)))

    inputs = [
        (
            torch.randn(batch, 16, device=device),
            torch.randint(0, rows, (TABLES, batch * LOOKUPS), device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"{TABLES} EmbeddingBags({dim}) + MLPs, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
