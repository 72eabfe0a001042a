"""A dense (soft) mixture of experts computed with batched matmuls (twenty-third hold-out):
8 experts' FFNs (512 -> 1024 -> 512, SiLU) stacked into one weight tensor, every token run
through every expert with two ``bmm`` calls, the router's softmax weights mixing the
outputs (an ``einsum``), then the residual and a LayerNorm. 16 sequences of 32 tokens,
bf16, two layers.

    traceinspect profile dense_moe_bmm_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

EXPERTS, LAYERS = 8, 2


class DenseMoe(nn.Module):
    def __init__(self, d: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.router, self.norm = nn.Linear(d, EXPERTS), nn.LayerNorm(d)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, d, hidden, dtype=dtype) / d**0.5)
        self.w2 = nn.Parameter(torch.randn(EXPERTS, hidden, d, dtype=dtype) / hidden**0.5)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        tokens = x.reshape(1, b * n, d).expand(EXPERTS, -1, -1)
        out = torch.bmm(F.silu(torch.bmm(tokens, self.w1)), self.w2)  # E x T x d
        gate = torch.softmax(self.router(x.reshape(b * n, d)), dim=-1)  # T x E
        mixed = torch.einsum("te,etd->td", gate, out).reshape(b, n, d)
        return self.norm(x + mixed)


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, hidden = (2, 4, 8, 16) if smoke else (16, 32, 512, 1024)
    dtype = low_precision(device)
    model = nn.Sequential(*[DenseMoe(d, hidden, dtype) for _ in range(LAYERS)])
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, n, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step, inputs, f"{LAYERS} dense MoE layers, {EXPERTS} experts, b{batch}x{n}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
