"""Independent chains of GEMM + ReLU on side streams: the size decides whether concurrent
GEMMs overlap (latency-bound) or queue (throughput-bound)."""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _branches import fork_join, side_streams
from _common import Built, low_precision


def gemm_chains(count: int, m: int, k: int, depth: int, device: torch.device, smoke: bool) -> Built:
    """``count`` side streams, each ``depth`` x (``m``x``k`` @ ``k``x``k`` bf16 GEMM + ReLU),
    summed on the current stream."""
    if smoke:
        m, k, depth = 4, 16, 2
    dtype = low_precision(device)
    weights = [torch.randn(k, k, device=device, dtype=dtype) / k**0.5 for _ in range(count)]
    streams = side_streams(device, count)

    def chain(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _ in range(depth):
            x = torch.relu(x @ w)
        return x

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        outs = fork_join(streams, [lambda w=w: chain(x, w) for w in weights], device)
        return torch.stack(outs).sum(0)

    inputs = [(torch.randn(m, k, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{count} streams x {depth} x ({m}x{k} @ {k}x{k}) + ReLU", weights)
