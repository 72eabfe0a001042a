"""A throughput-bound branch (2 x 1024x4096 @ 4096x4096 bf16 GEMM) beside a latency-bound
one (40 small elementwise ops on 64K values) on two side streams, joined on the current
stream: the small kernels can hide under the big ones.

    traceinspect profile big_and_small.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _branches import fork_join, side_streams
from _common import Built, low_precision, main


def build(device: torch.device, smoke: bool) -> Built:
    m, k, numel, ops = (4, 16, 32, 4) if smoke else (1024, 4096, 1 << 16, 40)
    dtype = low_precision(device)
    w = torch.randn(k, k, device=device, dtype=dtype) / k**0.5
    streams = side_streams(device, 2)

    def big(x: torch.Tensor) -> torch.Tensor:
        return ((x @ w) @ w).sum()

    def small(y: torch.Tensor) -> torch.Tensor:
        for i in range(ops):
            y = y * 0.999 + (0.001 if i % 2 else -0.001)
        return y.sum()

    @torch.no_grad()
    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        outs = fork_join(streams, [lambda: big(x), lambda: small(y)], device)
        return outs[0] + outs[1]

    inputs = [
        (
            torch.randn(m, k, device=device, dtype=dtype),
            torch.randn(numel, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"GEMM {m}x{k}@{k}x{k} x2 beside {ops} small ops", [w])


if __name__ == "__main__":
    main(build, __doc__)
