"""A memory-bound chain (eighth hold-out): 12 rounds of LayerNorm, a residual add, softmax
of the result times 0.5 and a scaled residual add, over a 64 x 4096 bf16 tensor (about 72
small kernels per step).

    traceinspect profile norm_softmax_chain_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    rows, width, rounds = (4, 32, 2) if smoke else (64, 4096, 12)
    dtype = low_precision(device)
    weight = torch.ones(width, device=device, dtype=dtype)
    bias = torch.zeros(width, device=device, dtype=dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for _ in range(rounds):
            h = F.layer_norm(x, (width,), weight, bias)
            x = x + h
            p = torch.softmax(x * 0.5, dim=-1)
            x = x + p * 0.1
        return x

    inputs = [(torch.randn(rows, width, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{rounds} x (LayerNorm, softmax) on {rows}x{width}")


if __name__ == "__main__":
    main(build, __doc__)
