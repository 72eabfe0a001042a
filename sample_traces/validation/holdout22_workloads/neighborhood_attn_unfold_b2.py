"""Neighborhood attention on a feature map through ``unfold`` (twenty-second hold-out), two
layers: each pixel of a 2 x 64 x 48 x 48 map attends over its 7 x 7 neighbourhood with 4
heads — 1 x 1 convolutions for queries, keys and values, keys and values unfolded into
49-column patches (a 2 x 64 x 49 x 2304 gather), scores by broadcast multiply and sum,
softmax over the window, the weighted sum, an output 1 x 1 convolution and the residual.
fp32.

    traceinspect profile neighborhood_attn_unfold_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

WINDOW, HEADS, LAYERS = 7, 4, 2


class NeighborhoodAttention(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.qkv, self.out = nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=1)
        pad = WINDOW // 2
        k = F.unfold(k, WINDOW, padding=pad).view(b, HEADS, c // HEADS, WINDOW * WINDOW, h * w)
        v = F.unfold(v, WINDOW, padding=pad).view(b, HEADS, c // HEADS, WINDOW * WINDOW, h * w)
        q = q.reshape(b, HEADS, c // HEADS, 1, h * w) * (c // HEADS) ** -0.5
        att = torch.softmax((q * k).sum(dim=2, keepdim=True), dim=3)
        y = (att * v).sum(dim=3).reshape(b, c, h, w)
        return x + self.out(y)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, side = (1, 8, 8) if smoke else (2, 64, 48)
    model = nn.Sequential(*[NeighborhoodAttention(c) for _ in range(LAYERS)]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, side, side, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{LAYERS} neighborhood attention layers {c}x{side}x{side}", [model])


if __name__ == "__main__":
    main(build, __doc__)
