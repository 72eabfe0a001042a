"""Three streams of medium GEMMs joined by events.

The input is forked to three side streams (an event recorded on the current stream, waited
on by each); each branch runs 6 x (256x1024 @ 1024x1024 bf16 GEMM + ReLU); the current
stream waits on each branch's event and sums the results.

    traceinspect profile multistream_events.py
"""

from __future__ import annotations

import torch
from _common import Built, low_precision, main


def build(device: torch.device, smoke: bool) -> Built:
    m, n, depth = (8, 16, 2) if smoke else (256, 1024, 6)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    weights = [torch.randn(n, n, device=device, dtype=dtype) / n**0.5 for _ in range(3)]
    streams = [torch.cuda.Stream(device) for _ in range(3)] if cuda else []

    def branch(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        for _ in range(depth):
            x = torch.relu(x @ w)
        return x

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        if not cuda:
            return sum((branch(x, w) for w in weights), torch.zeros_like(x))
        main_stream = torch.cuda.current_stream(device)
        forked = torch.cuda.Event()
        forked.record(main_stream)
        outs, done = [], []
        for s, w in zip(streams, weights, strict=True):
            s.wait_event(forked)
            with torch.cuda.stream(s):
                outs.append(branch(x, w))
                ev = torch.cuda.Event()
                ev.record(s)
            done.append(ev)
        for ev in done:
            main_stream.wait_event(ev)
        if not torch.cuda.is_current_stream_capturing():
            for o in outs:
                o.record_stream(main_stream)
        return outs[0] + outs[1] + outs[2]

    inputs = [(torch.randn(m, n, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"3 streams x {depth} x ({m}x{n} @ {n}x{n})", weights)


if __name__ == "__main__":
    main(build, __doc__)
