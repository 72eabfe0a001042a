"""Serving many LoRA adapters in one batch, as Punica and S-LoRA do (twenty-ninth hold-out): 16
requests of 32 tokens, each naming one of 8 rank-16 adapters (an input index tensor), bf16
on a GPU. For each of 4 projections (q, k, v, o of a 2,048-wide layer) and 2 layers: the base
GEMM, then each request's adapter matrices gathered (``index_select`` of the stacked A and B
weights by request), the shrink ``bmm`` (tokens x 2,048 @ 2,048 x 16) and the expand ``bmm``
(x 16 @ 16 x 2,048), scaled by alpha / r and added; between the projections, causal
scaled-dot-product attention over the 32 tokens and a residual. One stream.

    traceinspect profile multi_lora_bgmv_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, ADAPTERS, RANK, ALPHA = 2, 8, 16, 32


class LoraLinear(nn.Module):
    def __init__(self, d: int, adapters: int, rank: int) -> None:
        super().__init__()
        self.base = nn.Linear(d, d, bias=False)
        self.a = nn.Parameter(torch.randn(adapters, d, rank) * d**-0.5)
        self.b = nn.Parameter(torch.randn(adapters, rank, d) * 0.01)

    def forward(self, x: Tensor, which: Tensor) -> Tensor:
        shrink = torch.bmm(x, self.a.index_select(0, which))
        return self.base(x) + torch.bmm(shrink, self.b.index_select(0, which)) * (ALPHA / RANK)


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (LoraLinear(d, ADAPTERS, RANK) for _ in range(4))

    def forward(self, x: Tensor, which: Tensor) -> Tensor:
        b, t, d = x.shape

        def split(y: Tensor) -> Tensor:
            return y.view(b, t, self.heads, -1).transpose(1, 2)

        q, k, v = split(self.q(x, which)), split(self.k(x, which)), split(self.v(x, which))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
        return x + self.o(y.reshape(b, t, d), which)


def build(device: torch.device, smoke: bool) -> Built:
    batch, t, d, heads = (2, 4, 32, 2) if smoke else (16, 32, 2048, 16)
    dtype = low_precision(device)
    layers = nn.ModuleList([Layer(d, heads) for _ in range(LAYERS)]).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor, which: Tensor) -> Tensor:
        for layer in layers:
            x = layer(x, which)
        return x

    inputs = [
        (
            torch.randn(batch, t, d, device=device, dtype=dtype),
            torch.randint(0, ADAPTERS, (batch,), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{LAYERS} layers d{d}, {ADAPTERS} LoRA adapters r{RANK} per request, b{batch}",
        [layers],
    )


if __name__ == "__main__":
    main(build, __doc__)
