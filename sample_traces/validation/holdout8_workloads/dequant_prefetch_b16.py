"""Weights dequantized on a side stream while the current stream computes (eighth hold-out):
4 MLP layers of 1024 x 1024 stored as int8 values (held as bf16) with per-row bf16 scales.
The side stream dequantizes layer i+1 (values times scales) while the current stream runs
layer i (matmul + GELU) with the weights dequantized before; each layer waits on an event
the side stream recorded after dequantizing it. Batch 16 tokens x 1024. On a CPU all runs
on one stream.

    traceinspect profile dequant_prefetch_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    d, layers, tokens = (16, 2, 2) if smoke else (1024, 4, 16)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    q = [torch.randint(-127, 128, (d, d), device=device).to(dtype) for _ in range(layers)]
    scales = [torch.rand(d, 1, device=device, dtype=dtype) / 127 / d**0.5 for _ in range(layers)]
    side = torch.cuda.Stream(device) if cuda else None

    def dequant(i: int) -> Tensor:
        return q[i] * scales[i]

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        if side is None:
            for i in range(layers):
                x = F.gelu(x @ dequant(i))
            return x
        current = torch.cuda.current_stream(device)
        side.wait_stream(current)
        weights, ready = [], []
        for i in range(layers):
            with torch.cuda.stream(side):
                weights.append(dequant(i))
                event = torch.cuda.Event()
                event.record(side)
            ready.append(event)
        for i in range(layers):
            current.wait_event(ready[i])
            if not torch.cuda.is_current_stream_capturing():
                weights[i].record_stream(current)
            x = F.gelu(x @ weights[i])
        return x

    inputs = [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{layers} int8 layers {d}x{d} dequantized on a side stream")


if __name__ == "__main__":
    main(build, __doc__)
