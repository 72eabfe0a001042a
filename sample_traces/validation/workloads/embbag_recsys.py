"""Embedding-bag recommender (DLRM-like) inference at batch 512.

26 nn.EmbeddingBag tables (50,000 x 64, sum pooling, 4 lookups per bag at fixed offsets),
a bottom MLP on 13 dense features (13-512-256-64), interaction by concatenation and a top
MLP (1728-512-256-1), fp32.

    traceinspect profile embbag_recsys.py
"""

from __future__ import annotations

import torch
from _common import Built, main
from torch import nn

TABLES, LOOKUPS = 26, 4


def build(device: torch.device, smoke: bool) -> Built:
    rows, dim, batch = (100, 8, 4) if smoke else (50_000, 64, 512)
    bags = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(TABLES))
    bottom = nn.Sequential(
        nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, dim)
    )
    top = nn.Sequential(
        nn.Linear(dim * (TABLES + 1), 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
        nn.Linear(256, 1),
    )  # fmt: skip
    model = nn.ModuleList([bags, bottom, top]).to(device).eval()
    offsets = torch.arange(0, batch * LOOKUPS, LOOKUPS, device=device)

    @torch.no_grad()
    def step(dense: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        pooled = [bag(indices[t], offsets) for t, bag in enumerate(bags)]
        x = torch.cat([bottom(dense), *pooled], dim=1)
        return torch.sigmoid(top(x))

    inputs = [
        (
            torch.randn(batch, 13, device=device),
            torch.randint(0, rows, (TABLES, batch * LOOKUPS), device=device),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"{TABLES} EmbeddingBags + MLPs, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
