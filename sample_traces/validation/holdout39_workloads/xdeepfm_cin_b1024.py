"""xDeepFM click-through prediction (Lian et al., 2018, with the Compressed Interaction Network
laid out as DeepCTR-Torch's ``CIN``, split-half and ReLU) at batch 1024 (thirty-ninth
hold-out): 1024 samples of 26 categorical and 13 dense features, bf16 on a GPU (the final
sigmoid in fp32), eval mode, no gradients. The 26 fields have Criteo-like cardinalities, the
larger ones capped at 100,000 (840,543 rows in all), stored as one ``nn.Embedding(840543,
16)`` with per-field row offsets (made at build) and looked up at once: the field embeddings
x0 (1024, 26, 16). The linear part: a second ``nn.Embedding(840543, 1)`` looked up the same
way and summed over the fields, plus ``Linear(13, 1)`` on the dense features. The CIN, layer
sizes 200 / 200 / 200: per layer k the outer product of x^k (1024, H_k, 16) and x0 over the
fields, ``x^k[:, :, None] * x0[:, None]`` reshaped to (1024, 26 H_k, 16), ``Conv1d(26 H_k,
200, 1)`` (H_k = 26, 100, 100) and a ReLU; the first two layers split in half, 100 maps fed
to the next layer and 100 kept, the last layer all kept; the kept 400 maps summed over the
16 dimensions and ``Linear(400, 1, bias=False)``. The DNN: the flattened embeddings (416)
and the dense features concatenated (429), 429 -> 400 -> 400 -> 1 with ReLU. The three
logits summed and a sigmoid in fp32. Inputs: the ids (1024, 26) int64 (each below its field's
cardinality, field-local) and the dense features (1024, 13). Returns the (1024, 1) click
probabilities (fp32).

    traceinspect profile xdeepfm_cin_b1024.py
"""

from __future__ import annotations

from itertools import accumulate

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CARDINALITIES = (
    1460, 583, 100000, 100000, 305, 24, 12517, 633, 3, 93145, 5683, 100000, 3194,
    27, 14992, 100000, 10, 5652, 2173, 4, 100000, 18, 15, 100000, 105, 100000,
)  # fmt: skip
DENSE = 13


class CIN(nn.Module):
    def __init__(self, fields: int, sizes: tuple[int, ...]) -> None:
        super().__init__()
        self.sizes = sizes
        convs: list[nn.Module] = []
        h = fields
        for i, size in enumerate(sizes):
            convs.append(nn.Conv1d(h * fields, size, 1))
            h = size // 2 if i < len(sizes) - 1 else 0
        self.convs = nn.ModuleList(convs)
        kept = sum(s // 2 for s in sizes[:-1]) + sizes[-1]
        self.out = nn.Linear(kept, 1, bias=False)

    def forward(self, x0: Tensor) -> Tensor:
        b, m, d = x0.shape
        xk, kept = x0, []
        for i, conv in enumerate(self.convs):
            z = (xk[:, :, None] * x0[:, None]).reshape(b, -1, d)  # (b, H_k m, d)
            z = torch.relu(conv(z))
            if i < len(self.convs) - 1:
                xk, direct = z.split(z.shape[1] // 2, dim=1)
            else:
                direct = z
            kept.append(direct)
        return self.out(torch.cat(kept, dim=1).sum(dim=2))


class XDeepFM(nn.Module):
    def __init__(self, rows: int, fields: int, d: int, cin: tuple[int, ...], hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(rows, d)
        self.first_order = nn.Embedding(rows, 1)
        self.dense_linear = nn.Linear(DENSE, 1)
        self.cin = CIN(fields, cin)
        self.dnn = nn.Sequential(
            nn.Linear(fields * d + DENSE, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1),
        )  # fmt: skip

    def forward(self, rows: Tensor, dense: Tensor) -> Tensor:
        x0 = self.embed(rows)  # (b, fields, d)
        linear = self.first_order(rows).sum(dim=1) + self.dense_linear(dense)
        deep = self.dnn(torch.cat([x0.flatten(1), dense], dim=1))
        return linear + self.cin(x0) + deep


def build(device: torch.device, smoke: bool) -> Built:
    batch, cap, d, cin, hidden = (
        (8, 50, 4, (8, 8, 8), 16) if smoke else (1024, 100_000, 16, (200, 200, 200), 400)
    )
    cards = [min(c, cap) for c in CARDINALITIES]
    fields = len(cards)
    dtype = low_precision(device)
    model = XDeepFM(sum(cards), fields, d, cin, hidden).to(device, dtype).eval()
    offsets = torch.tensor([0, *accumulate(cards)][:-1], device=device)
    card = torch.tensor(cards, device=device, dtype=torch.float32)

    @torch.no_grad()
    def step(ids: Tensor, dense: Tensor) -> Tensor:
        return model(ids + offsets, dense).float().sigmoid()

    inputs = [
        (
            (torch.rand(batch, fields, device=device) * card).long(),
            torch.randn(batch, DENSE, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"xDeepFM: {fields} fields x {d} dims, CIN {'/'.join(map(str, cin))} (split-half) + "
        f"DNN {hidden}x2 + linear, b{batch}",
        [model, offsets],
    )


if __name__ == "__main__":
    main(build, __doc__)
