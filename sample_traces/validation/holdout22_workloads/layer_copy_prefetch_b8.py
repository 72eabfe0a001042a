"""Layer weights copied in ahead on a side stream (twenty-second hold-out): 6 MLP layers of
1024 x 1024 bf16 kept in a store buffer and copied device-to-device into working buffers,
the way offloading code stages weights. The side stream copies every layer's weights and
records an event after each; the current stream then waits on layer i's event before
layer i (matmul + bias + SiLU). Batch 8 tokens x 1024. On a CPU all runs on one stream.

    traceinspect profile layer_copy_prefetch_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    d, layers, tokens = (16, 2, 2) if smoke else (1024, 6, 8)
    dtype = low_precision(device)
    store = [torch.randn(d, d, device=device, dtype=dtype) / d**0.5 for _ in range(layers)]
    bias = [torch.randn(d, device=device, dtype=dtype) / 10 for _ in range(layers)]
    work = [torch.empty_like(w) for w in store]
    side = torch.cuda.Stream(device) if device.type == "cuda" else None

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        if side is None:
            for i in range(layers):
                work[i].copy_(store[i])
                x = F.silu(torch.addmm(bias[i], x, work[i]))
            return x
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        ready = []
        for i in range(layers):
            with torch.cuda.stream(side):
                work[i].copy_(store[i])
                event = torch.cuda.Event()
                event.record(side)
            ready.append(event)
        for i in range(layers):
            current.wait_event(ready[i])
            x = F.silu(torch.addmm(bias[i], x, work[i]))
        current.wait_stream(side)
        return x

    inputs = [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{layers} layers {d}x{d}, weights copied in on a side stream")


if __name__ == "__main__":
    main(build, __doc__)
