"""Two side streams forked and joined with ``wait_stream`` (second hold-out).

The current stream's input is handed to two side streams (``s.wait_stream(current)``);
each runs 4 x (512x2048 @ 2048x2048 bf16 GEMM + GELU); the current stream waits for both
(``current.wait_stream(s)``) and adds the results.

    traceinspect profile fork_join_streams.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main


def build(device: torch.device, smoke: bool) -> Built:
    m, n, depth = (8, 16, 2) if smoke else (512, 2048, 4)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    weights = [torch.randn(n, n, device=device, dtype=dtype) / n**0.5 for _ in range(2)]
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    def branch(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _ in range(depth):
            x = torch.nn.functional.gelu(x @ w)
        return x

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        if not cuda:
            return branch(x, weights[0]) + branch(x, weights[1])
        current = torch.cuda.current_stream(device)
        outs = []
        for s, w in zip(streams, weights, strict=True):
            s.wait_stream(current)
            with torch.cuda.stream(s):
                outs.append(branch(x, w))
        for s, o in zip(streams, outs, strict=True):
            current.wait_stream(s)
            if not torch.cuda.is_current_stream_capturing():
                o.record_stream(current)
        return outs[0] + outs[1]

    inputs = [(torch.randn(m, n, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"2 streams x {depth} x ({m}x{n} @ {n}x{n}) + GELU", weights)


if __name__ == "__main__":
    main(build, __doc__)
