"""torch.compile'd stack of 6 SwiGLU MLP blocks with RMSNorm, batch 16, bf16 (second
hold-out): Triton kernels launched through the driver API.

    traceinspect profile compiled_swiglu.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, d: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.norm = RMSNorm(d, dtype)
        self.gate = nn.Linear(d, hidden, bias=False, dtype=dtype)
        self.up = nn.Linear(d, hidden, bias=False, dtype=dtype)
        self.down = nn.Linear(hidden, d, bias=False, dtype=dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


def build(device: torch.device, smoke: bool) -> Built:
    blocks, d, hidden, batch = (2, 32, 64, 4) if smoke else (6, 1024, 2816, 16)
    dtype = low_precision(device)
    model = nn.Sequential(*(SwiGLU(d, hidden, dtype) for _ in range(blocks))).to(device).eval()
    compiled = torch.compile(model, mode="default")

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return compiled(x)

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    step(*inputs[0])  # compile now, not inside the measured steps
    return Built(step, inputs, f"compiled {blocks} x SwiGLU({d}, {hidden})", [model])


if __name__ == "__main__":
    main(build, __doc__)
