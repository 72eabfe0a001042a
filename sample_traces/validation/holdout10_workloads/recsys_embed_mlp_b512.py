"""Click-through recommender scoring 512 (user, item) pairs from 9 separate input tensors,
fp32 (tenth hold-out). Inputs: 32 dense features (512 x 32), and int64 ids: user (512, of
100,000), item (512, of 50,000), category (512, of 1,000), brand (512, of 10,000), hour of
day (512, of 24), the user's last 50 items (512 x 50) with their recency weights (512 x 50,
fp32), and 16 query tokens (512 x 16, of 30,000). The five single ids are looked up in their
own ``nn.Embedding`` tables (64, 64, 32, 32 and 8 wide); the history is pooled through the
item table with ``F.embedding_bag`` (sum weighted by the recency weights,
``per_sample_weights``); the query tokens are averaged by an ``nn.EmbeddingBag`` (mean, 32
wide). Fixed-length bags are passed as 2-D index tensors, so no offsets. The dense features
go through a bottom MLP 32->128->64 (ReLU). Two dot products (user . item and history .
item) join the 8 pooled vectors (360 values) for a 362-wide row, then a top MLP
362->512->256->1 with ReLU and a sigmoid. Returns 512 x 1 click probabilities.

    traceinspect profile recsys_embed_mlp_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

DENSE, HISTORY, QUERY = 32, 50, 16


class Recommender(nn.Module):
    def __init__(self, rows: dict[str, int], div: int) -> None:
        super().__init__()
        self.user = nn.Embedding(rows["user"], 64 // div)
        self.item = nn.Embedding(rows["item"], 64 // div)
        self.category = nn.Embedding(rows["category"], 32 // div)
        self.brand = nn.Embedding(rows["brand"], 32 // div)
        self.hour = nn.Embedding(24, 8)
        self.query = nn.EmbeddingBag(rows["query"], 32 // div, mode="mean")
        self.bottom = nn.Sequential(
            nn.Linear(DENSE, 128 // div), nn.ReLU(), nn.Linear(128 // div, 64 // div), nn.ReLU()
        )
        width = (64 * 4 + 32 * 3) // div + 8 + 2
        self.top = nn.Sequential(
            nn.Linear(width, 512 // div), nn.ReLU(), nn.Linear(512 // div, 256 // div), nn.ReLU(),
            nn.Linear(256 // div, 1),
        )  # fmt: skip

    def forward(
        self,
        dense: Tensor,
        user: Tensor,
        item: Tensor,
        category: Tensor,
        brand: Tensor,
        hour: Tensor,
        history: Tensor,
        recency: Tensor,
        query: Tensor,
    ) -> Tensor:
        u, i = self.user(user), self.item(item)
        h = F.embedding_bag(history, self.item.weight, mode="sum", per_sample_weights=recency)
        pooled = [
            self.bottom(dense), u, i, h, self.category(category), self.brand(brand),
            self.hour(hour), self.query(query),
        ]  # fmt: skip
        dots = [(u * i).sum(-1, keepdim=True), (h * i).sum(-1, keepdim=True)]
        return torch.sigmoid(self.top(torch.cat(pooled + dots, dim=1)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        rows = {"user": 100, "item": 50, "category": 10, "brand": 20, "query": 30}
        batch, div = 4, 8
    else:
        rows = {"user": 100_000, "item": 50_000, "category": 1_000, "brand": 10_000,
                "query": 30_000}  # fmt: skip
        batch, div = 512, 1
    model = Recommender(rows, div).to(device).eval()

    @torch.no_grad()
    def step(*features: Tensor) -> Tensor:
        return model(*features)

    def ids(high: int, *shape: int) -> Tensor:
        return torch.randint(0, high, (batch, *shape), device=device)

    inputs = [
        (
            torch.randn(batch, DENSE, device=device),
            ids(rows["user"]),
            ids(rows["item"]),
            ids(rows["category"]),
            ids(rows["brand"]),
            ids(24),
            ids(rows["item"], HISTORY),
            torch.softmax(torch.randn(batch, HISTORY, device=device), dim=-1),
            ids(rows["query"], QUERY),
        )
        for _ in range(2)
    ]
    description = (
        f"recommender, 9 inputs: 5 embeddings + 2 bags ({HISTORY}, {QUERY}) + {DENSE} dense "
        f"-> MLP, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
