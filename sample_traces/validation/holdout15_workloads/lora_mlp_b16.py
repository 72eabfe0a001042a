"""Four transformer MLP blocks with LoRA adapters (Hu et al., 2021) on every Linear, 16
sequences of 128 tokens, d 1024, hidden 4096, bf16 (fifteenth hold-out), inference, the
adapters kept separate from the base weights (not merged), as PEFT runs them. Per block
(pre-norm): ``LayerNorm``, the up projection, GELU, the down projection and the residual
add, where each of the two projections is a base Linear (with bias) plus its adapter of rank
16: x A^T B^T (a GEMM down to 16 features and a GEMM back up, no bias) scaled by alpha / r =
32 / 16 = 2 and added to the base output. The adapters are random (as if trained; PEFT
starts B at zero). Per block two big GEMMs (2048 x 1024 by 1024 x 4096 and back) beside
four thin ones (inner dimension or output 16), 13 kernels, 52 in all. Input: 16 x 128
x 1024. Returns 16 x 128 x 1024.

    traceinspect profile lora_mlp_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, RANK, ALPHA = 4, 16, 32


class LoRALinear(nn.Module):
    """A Linear plus a low-rank adapter: base(x) + (x A^T B^T) alpha / r."""

    def __init__(self, cin: int, cout: int, rank: int, alpha: float) -> None:
        super().__init__()
        self.base = nn.Linear(cin, cout)
        self.lora_a = nn.Parameter(torch.randn(rank, cin) / cin**0.5)
        self.lora_b = nn.Parameter(torch.randn(cout, rank) * 0.01)
        self.scale = alpha / rank

    def forward(self, x: Tensor) -> Tensor:
        return self.base(x) + F.linear(F.linear(x, self.lora_a), self.lora_b) * self.scale


class LoRAMLPBlock(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = LoRALinear(d, hidden, RANK, ALPHA)
        self.down = LoRALinear(hidden, d, RANK, ALPHA)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.down(F.gelu(self.up(self.norm(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden = (2, 8, 32, 128) if smoke else (16, 128, 1024, 4096)
    dtype = low_precision(device)
    model = nn.Sequential(*(LoRAMLPBlock(d, hidden) for _ in range(BLOCKS)))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"{BLOCKS} MLP blocks d{d}-{hidden}, LoRA rank {RANK} on each Linear, batch {batch} x {seq}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
