"""Feature preprocessing for a tabular model on the GPU, as recommender serving stacks do it
before the model (thirty-first hold-out): 4,096 rows of 16 numeric and 8 categorical
features. Each numeric feature is clamped, ``log1p``-scaled and ``torch.bucketize``-d
against its own 32 boundaries; the bucket ids of all 16 are offset into one shared
embedding of 512 x 16, the scaled values standardized; each categorical id is hashed
(multiplied by a large odd number, taken modulo its table's size) and looked up in its own
embedding (10,000-100,000 rows of 16); everything concatenated (4,096 x 400) and passed
through a Linear 400 -> 256 and a ReLU. About 100 tiny kernels, one stream: the launches,
not the GPU, set the pace.

    traceinspect profile bucketize_preprocess_b4096.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

NUMERIC, CATEGORICAL, BUCKETS, DIM = 16, 8, 32, 16
HASH = 2_654_435_761


def build(device: torch.device, smoke: bool) -> Built:
    rows = 64 if smoke else 4096
    sizes = (
        [1000 + 10 * i for i in range(CATEGORICAL)]
        if smoke
        else [10_000 * (1 + i) + 20_000 * (i % 3) for i in range(CATEGORICAL)]
    )
    boundaries = [
        torch.linspace(0.0, 6.0 + 0.25 * i, BUCKETS, device=device) for i in range(NUMERIC)
    ]
    means = torch.rand(NUMERIC, device=device)
    stds = torch.rand(NUMERIC, device=device) + 0.5
    buckets = nn.Embedding(NUMERIC * (BUCKETS + 1), DIM)
    tables = nn.ModuleList(nn.Embedding(n, DIM) for n in sizes)
    width = NUMERIC * DIM + NUMERIC + CATEGORICAL * DIM
    head = nn.Linear(width, 256)
    model = nn.ModuleList([buckets, tables, head]).to(device).eval()

    @torch.no_grad()
    def step(numeric: Tensor, ids: Tensor) -> Tensor:
        scaled = torch.log1p(numeric.clamp(min=0.0, max=1e6))
        bucket_ids = [
            torch.bucketize(scaled[:, i], boundaries[i]) + i * (BUCKETS + 1) for i in range(NUMERIC)
        ]
        parts = [buckets(torch.stack(bucket_ids, dim=1)).flatten(1), (scaled - means) / stds]
        for j, table in enumerate(tables):
            parts.append(table((ids[:, j] * HASH) % sizes[j]))
        return torch.relu(head(torch.cat(parts, dim=1)))

    inputs = [
        (
            torch.rand(rows, NUMERIC, device=device) * 500.0,
            torch.randint(0, 2**31 - 1, (rows, CATEGORICAL), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"GPU feature preprocessing: {NUMERIC} bucketized + {CATEGORICAL} hashed features, "
        f"{rows} rows",
        [model, boundaries, means, stds],
    )


if __name__ == "__main__":
    main(build, __doc__)
