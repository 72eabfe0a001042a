"""Weight dequantization prefetched on a side stream: 16 tokens of d 1024 through 4 layers,
each with an int8-quantized 1024 x 1024 weight (integers in [-127, 127] held in a bf16
tensor, made at build) and a per-row bf16 scale (ninth hold-out). The side stream
dequantizes the weights in order (one multiply by the row scales per layer) and records one
event after each; the current stream runs layer i, x + GELU(Linear(LayerNorm(x), W_i))
(LayerNorm without affine, Linear without bias), after waiting on event i, so the side
stream dequantizes the next layer's weight while the current layer runs. The side stream
first waits on an event recorded on the current stream (the fork); the current stream's
waits on the four events join it back. Outside graph capture each dequantized weight is
marked with ``record_stream`` for the current stream. On a CPU everything runs in order on
the default stream. Returns 16 x 1024.

    traceinspect profile two_stream_prefetch_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    tokens, d, layers = (4, 32, 4) if smoke else (16, 1024, 4)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    quantized = [torch.randint(-127, 128, (d, d), device=device).to(dtype) for _ in range(layers)]
    scales = [
        torch.rand(d, 1, device=device).mul_(0.5 / (127 * d**0.5)).to(dtype) for _ in range(layers)
    ]
    side = torch.cuda.Stream(device) if cuda else None

    def dequant(i: int) -> Tensor:
        return quantized[i] * scales[i]

    def layer(x: Tensor, w: Tensor) -> Tensor:
        return x + F.gelu(F.linear(F.layer_norm(x, (d,)), w))

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        if side is None:
            for i in range(layers):
                x = layer(x, dequant(i))
            return x
        current = torch.cuda.current_stream(device)
        forked = torch.cuda.Event()
        forked.record(current)
        side.wait_event(forked)
        weights, ready = [], []
        with torch.cuda.stream(side):
            for i in range(layers):
                weights.append(dequant(i))
                event = torch.cuda.Event()
                event.record(side)
                ready.append(event)
        for w, event in zip(weights, ready, strict=True):
            current.wait_event(event)
            if not torch.cuda.is_current_stream_capturing():
                w.record_stream(current)
            x = layer(x, w)
        return x

    inputs = [(torch.randn(tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"dequant prefetch on a side stream, {layers} layers of {d}x{d}, {tokens} tokens"
    return Built(step, inputs, description, [*quantized, *scales])


if __name__ == "__main__":
    main(build, __doc__)
