"""Two side streams of memory-bound elementwise chains (12 x multiply-add + tanh on 2M bf16
values each), summed on the current stream: bandwidth, not SMs, limits their overlap.

    traceinspect profile elementwise_chains.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _branches import fork_join, side_streams
from _common import Built, low_precision, main


def build(device: torch.device, smoke: bool) -> Built:
    numel, depth = (64, 2) if smoke else (2 << 20, 12)
    dtype = low_precision(device)
    streams = side_streams(device, 2)

    def chain(x: torch.Tensor, scale: float) -> torch.Tensor:
        for _ in range(depth):
            x = torch.tanh(x * scale + 0.5)
        return x

    @torch.no_grad()
    def step(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        outs = fork_join(streams, [lambda: chain(a, 1.01), lambda: chain(b, 0.99)], device)
        return outs[0] + outs[1]

    inputs = [
        (
            torch.randn(numel, device=device, dtype=dtype),
            torch.randn(numel, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(step, inputs, f"2 streams x {depth} x elementwise on {numel} values")


if __name__ == "__main__":
    main(build, __doc__)
