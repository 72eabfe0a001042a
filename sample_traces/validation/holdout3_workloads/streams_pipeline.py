"""Two streams in a pipeline: stream A computes 6 chunks (256x4096 @ 4096x1024 bf16 GEMM +
tanh), stream B post-processes each chunk (1024x1024 GEMM) after waiting on A's event for
it (third hold-out).

    traceinspect profile streams_pipeline.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main


def build(device: torch.device, smoke: bool) -> Built:
    m, k, n, chunks = (4, 16, 8, 2) if smoke else (256, 4096, 1024, 6)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    w1 = torch.randn(k, n, device=device, dtype=dtype) / k**0.5
    w2 = torch.randn(n, n, device=device, dtype=dtype) / n**0.5
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        if not cuda:
            return torch.stack([torch.tanh(c @ w1) @ w2 for c in x.chunk(chunks)]).sum(0)
        current = torch.cuda.current_stream(device)
        a, b = streams
        a.wait_stream(current)
        b.wait_stream(current)
        outs = []
        for c in x.chunk(chunks):
            with torch.cuda.stream(a):
                h = torch.tanh(c @ w1)
                ready = torch.cuda.Event()
                ready.record(a)
            b.wait_event(ready)
            with torch.cuda.stream(b):
                outs.append(h @ w2)
            if not torch.cuda.is_current_stream_capturing():
                h.record_stream(b)
        current.wait_stream(b)
        total = torch.stack(outs).sum(0)
        return total

    inputs = [(torch.randn(m * chunks, k, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"2-stream pipeline, {chunks} chunks", [w1, w2])


if __name__ == "__main__":
    main(build, __doc__)
