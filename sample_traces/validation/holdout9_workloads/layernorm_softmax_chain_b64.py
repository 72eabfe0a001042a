"""A memory-bound chain of 24 normalizations over one 64 x 4096 bf16 tensor (eighth
hold-out): 12 rounds of a LayerNorm (its own affine weights, made at build with random gains
and biases) added back to the running tensor as a residual, then a softmax over the 4096
columns with temperature T_i = 0.5 + 0.25 i (a multiply by 1/T_i, then softmax), scaled by
2048 and added back as a second residual: per round LayerNorm, add, multiply, softmax,
multiply, add, every op reading and writing the 512 KiB tensor. Returns 64 x 4096.

    traceinspect profile layernorm_softmax_chain_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    rows, width, rounds = (4, 64, 12) if smoke else (64, 4096, 12)
    dtype = low_precision(device)
    norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(rounds))
    for norm in norms:
        nn.init.normal_(norm.weight, 1.0, 0.1)
        nn.init.normal_(norm.bias, 0.0, 0.1)
    norms = norms.to(device=device, dtype=dtype).eval()
    inv_temps = [1.0 / (0.5 + 0.25 * i) for i in range(rounds)]
    scale = width / 2

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for norm, inv_t in zip(norms, inv_temps, strict=True):
            x = x + norm(x)
            x = x + torch.softmax(x * inv_t, dim=-1) * scale
        return x

    inputs = [(torch.randn(rows, width, device=device, dtype=dtype),) for _ in range(2)]
    description = f"LayerNorm/softmax chain, {2 * rounds} ops over {rows}x{width}"
    return Built(step, inputs, description, [norms])


if __name__ == "__main__":
    main(build, __doc__)
