"""A stack of pre-norm SwiGLU MLP blocks over 32 x 64 tokens (thirty-sixth hold-out): bf16
on a GPU, eval mode, no gradients. 8 blocks of width 512, each x + down(silu(gate) * up)
on RMSNorm(x): an RMSNorm written out (no fused op: the input upcast to fp32, ``pow(2)``,
``mean`` over the last dim, ``+ 1e-6``, ``rsqrt``, the product cast back and scaled by its
weight, set at build to values in [0.5, 1.5]), one fused ``Linear(512, 2 x 1408,
bias=False)`` chunked into gate and up, SiLU of the gate times up, ``Linear(1408, 512,
bias=False)`` and the residual add. Input: the (32, 64, 512) hidden states; returns the
output hidden states of the same shape.

    traceinspect profile rmsnorm_swiglu_mlp_stack_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, EPS = 8, 1e-6


class RMSNorm(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: Tensor) -> Tensor:
        xf = x.float()
        var = xf.pow(2).mean(dim=-1, keepdim=True)
        return (xf * torch.rsqrt(var + EPS)).to(x.dtype) * self.weight


class SwiGLUBlock(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.norm = RMSNorm(d)
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        gate, up = self.gate_up(self.norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden = (2, 8, 64, 176) if smoke else (32, 64, 512, 1408)
    dtype = low_precision(device)
    model = nn.Sequential(*(SwiGLUBlock(d, hidden) for _ in range(BLOCKS)))
    for m in model.modules():
        if isinstance(m, RMSNorm):
            m.weight.data.uniform_(0.5, 1.5)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{BLOCKS} x RMSNorm + SwiGLU MLP {d} -> 2 x {hidden} -> {d}, b{batch} x {seq} tokens",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
