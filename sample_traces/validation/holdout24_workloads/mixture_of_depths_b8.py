"""Mixture-of-depths routing (Raposo et al., 2024) (twenty-fourth hold-out): 8 sequences of
512 tokens, d 512, fp32, two layers. In each, a router (Linear 512 -> 1) scores every
token, ``torch.topk`` keeps 128 tokens per sequence (a fixed k, so every shape is static),
``torch.gather`` collects them, a Transformer-style MLP block (LayerNorm, 512 -> 2048, GELU,
2048 -> 512) runs on those 1,024 tokens only, its output is scaled by the sigmoid of the
router's score and added back into the residual stream at the tokens' positions with
``scatter_add``; the other tokens pass through unchanged. Top-k, gather and scatter kernels
beside two GEMMs of 1,024 rows per layer; one stream.

    traceinspect profile mixture_of_depths_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

LAYERS = 2


class MoDLayer(nn.Module):
    def __init__(self, d: int, hidden: int, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.router = nn.Linear(d, 1)
        self.block = nn.Sequential(
            nn.LayerNorm(d), nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d)
        )

    def forward(self, x: Tensor) -> Tensor:
        scores = self.router(x).squeeze(-1)  # batch x tokens
        weight, idx = torch.topk(scores, self.capacity, dim=1)
        idx = idx.unsqueeze(-1).expand(-1, -1, x.shape[-1])
        picked = torch.gather(x, 1, idx)
        out = self.block(picked) * torch.sigmoid(weight).unsqueeze(-1)
        return torch.scatter_add(x, 1, idx, out)


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, hidden, capacity = (2, 16, 8, 32, 4) if smoke else (8, 512, 512, 2048, 128)
    model = nn.Sequential(*[MoDLayer(d, hidden, capacity) for _ in range(LAYERS)])
    model = model.to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, n, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{LAYERS} mixture-of-depths layers, top {capacity} of {n} tokens, d{d}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
