"""A Deep Interest Network click-through-rate model (Zhou et al., 2018) on 256 samples fed seven
separate inputs (thirty-seventh hold-out): fp32 (explicitly, also on a GPU), eval mode, no
gradients, a small step with many small inputs. Embeddings: ``nn.Embedding(20000, 32)`` for
items, ``nn.Embedding(500, 16)`` for categories and ``nn.Embedding(10000, 32)`` for users, all
scaled by 0.1 at build; an item is its item and category embeddings concatenated (48). The
target item (256, 48) and the 50 history items (256, 50, 48) are looked up that way (four
gathers), the user (256, 32) in its own table. The activation unit, as the released DIN code
writes it: per history item the features [h, t, h - t, h * t] (256, 50, 192), ``Linear(192,
80)`` + sigmoid, ``Linear(80, 40)`` + sigmoid, ``Linear(40, 1)``, the scores divided by
sqrt(48), set to -1e9 where the history mask is False, softmax over the 50 positions, and the
user interest as the attention-weighted sum of the history (256, 48, one ``bmm``). Then the
concatenation [user, target, interest, dense] (256, 136) through ``Linear(136, 200)`` + Dice,
``Linear(200, 80)`` + Dice, ``Linear(80, 1)`` and a sigmoid. Dice written out: p = sigmoid of
a ``BatchNorm1d(affine=False, eps 1e-9)`` in eval mode (running statistics set at build), out
= p x + (1 - p) alpha x, alpha a per-feature parameter set at build to 0.25. Inputs: user ids
(256,), target item ids (256,), target category ids (256,), history item ids (256, 50) and
history category ids (256, 50), all int64 in range, the history mask (256, 50) bool (True on
the first 5..50 positions, a random length per sample) and 8 dense context features (256, 8)
fp32. Returns the click probabilities (256, 1) fp32.

    traceinspect profile din_target_attention_7in_b256.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

ITEMS, CATEGORIES, USERS, ITEM_DIM, CAT_DIM, USER_DIM, DENSE = 20000, 500, 10000, 32, 16, 32, 8


class Dice(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(width, eps=1e-9, affine=False)
        self.alpha = nn.Parameter(torch.full((width,), 0.25))

    def forward(self, x: Tensor) -> Tensor:
        p = torch.sigmoid(self.norm(x))
        return p * x + (1 - p) * self.alpha * x


class DIN(nn.Module):
    def __init__(self, att: tuple[int, int], mlp: tuple[int, int]) -> None:
        super().__init__()
        self.items = nn.Embedding(ITEMS, ITEM_DIM)
        self.categories = nn.Embedding(CATEGORIES, CAT_DIM)
        self.users = nn.Embedding(USERS, USER_DIM)
        d = ITEM_DIM + CAT_DIM
        self.scale = 1.0 / math.sqrt(d)
        self.unit = nn.Sequential(
            nn.Linear(4 * d, att[0]), nn.Sigmoid(),
            nn.Linear(att[0], att[1]), nn.Sigmoid(),
            nn.Linear(att[1], 1),
        )  # fmt: skip
        self.mlp = nn.Sequential(
            nn.Linear(USER_DIM + 2 * d + DENSE, mlp[0]), Dice(mlp[0]),
            nn.Linear(mlp[0], mlp[1]), Dice(mlp[1]),
            nn.Linear(mlp[1], 1),
        )  # fmt: skip

    def forward(
        self,
        user: Tensor,
        item: Tensor,
        category: Tensor,
        hist_items: Tensor,
        hist_categories: Tensor,
        hist_mask: Tensor,
        dense: Tensor,
    ) -> Tensor:
        target = torch.cat([self.items(item), self.categories(category)], dim=-1)  # (b, d)
        hist = torch.cat([self.items(hist_items), self.categories(hist_categories)], dim=-1)
        t = target[:, None, :].expand_as(hist)
        scores = self.unit(torch.cat([hist, t, hist - t, hist * t], dim=-1)).squeeze(-1)
        scores = (scores * self.scale).masked_fill(~hist_mask, -1e9)
        weights = torch.softmax(scores, dim=-1)  # (b, history)
        interest = torch.bmm(weights[:, None, :], hist).squeeze(1)  # (b, d)
        z = torch.cat([self.users(user), target, interest, dense], dim=-1)
        return torch.sigmoid(self.mlp(z))


def build(device: torch.device, smoke: bool) -> Built:
    batch, history, att, mlp = (
        (4, 6, (16, 8), (24, 12)) if smoke else (256, 50, (80, 40), (200, 80))
    )
    model = DIN(att, mlp)
    with torch.no_grad():
        for table in (model.items, model.categories, model.users):
            table.weight.mul_(0.1)
        for m in model.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.normal_(0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model = model.to(device, torch.float32).eval()
    positions = torch.arange(history, device=device)

    @torch.no_grad()
    def step(
        user: Tensor,
        item: Tensor,
        category: Tensor,
        hist_items: Tensor,
        hist_categories: Tensor,
        hist_mask: Tensor,
        dense: Tensor,
    ) -> Tensor:
        return model(user, item, category, hist_items, hist_categories, hist_mask, dense)

    def make() -> tuple[Tensor, ...]:
        lengths = torch.randint(min(5, history), history + 1, (batch, 1), device=device)
        return (
            torch.randint(0, USERS, (batch,), device=device),
            torch.randint(0, ITEMS, (batch,), device=device),
            torch.randint(0, CATEGORIES, (batch,), device=device),
            torch.randint(0, ITEMS, (batch, history), device=device),
            torch.randint(0, CATEGORIES, (batch, history), device=device),
            positions[None, :] < lengths,
            torch.randn(batch, DENSE, device=device),
        )

    inputs = [make() for _ in range(2)]
    return Built(
        step,
        inputs,
        f"DIN CTR model, target attention over {history} history items (activation unit "
        f"{4 * (ITEM_DIM + CAT_DIM)}-{att[0]}-{att[1]}-1), Dice MLP {mlp[0]}-{mlp[1]}-1, "
        f"7 inputs, batch {batch}",
        [model, positions],
    )


if __name__ == "__main__":
    main(build, __doc__)
