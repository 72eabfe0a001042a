"""Gradient buckets reduced on a side stream while the backward pass goes on, the way DDP
overlaps its all-reduce with backward (thirty-first hold-out; the all-reduce replaced by the
work a single GPU does around it): a hand-written backward through 8 Linear layers of
1024 x 1024 at batch 32 x 16 tokens (512 rows), fp32. Per layer, from the last: the weight
gradient (a 1024 x 512 @ 512 x 1024 GEMM) and the gradient into the layer below (a GEMM and
the ReLU mask) on the current stream, then an event recorded; a side stream waits on that
event and copies the weight gradient into its bucket of a flat buffer, scales it by 1/8 and
takes its norm. Eight records on the current stream, eight waits on the side stream, each
on its own event; the current stream joins the side stream at the end and combines the
eight norms into the total one. Returns the flat buffer and the total norm.

    traceinspect profile grad_bucket_side_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LAYERS = 8


def build(device: torch.device, smoke: bool) -> Built:
    rows, width = (8, 16) if smoke else (512, 1024)
    weights = [torch.randn(width, width, device=device) / width**0.5 for _ in range(LAYERS)]
    flat = torch.zeros(LAYERS, width * width, device=device)
    side = torch.cuda.Stream(device) if device.type == "cuda" else None

    def step(acts: Tensor, dy: Tensor) -> tuple[Tensor, Tensor]:
        norms: list[Tensor] = [dy.new_zeros(())] * LAYERS
        current = torch.cuda.current_stream(device) if side is not None else None
        capturing = side is not None and torch.cuda.is_current_stream_capturing()
        for i in reversed(range(LAYERS)):
            grad = dy.t() @ acts[i]
            dy = (dy @ weights[i]) * (acts[i] > 0)
            if side is None or current is None:
                flat[i].copy_(grad.flatten()).mul_(1.0 / LAYERS)
                norms[i] = torch.linalg.vector_norm(flat[i])
                continue
            done = torch.cuda.Event()
            done.record(current)
            side.wait_event(done)
            with torch.cuda.stream(side):
                flat[i].copy_(grad.flatten()).mul_(1.0 / LAYERS)
                norms[i] = torch.linalg.vector_norm(flat[i])
            if not capturing:
                grad.record_stream(side)
        if side is not None and current is not None:
            current.wait_stream(side)
            if not capturing:
                for norm in norms:
                    norm.record_stream(current)
        return flat, torch.linalg.vector_norm(torch.stack(norms))

    inputs = [
        (
            torch.relu(torch.randn(LAYERS, rows, width, device=device)),
            torch.randn(rows, width, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"backward of {LAYERS} Linear {width}x{width}, gradient buckets on a side stream, "
        f"{rows} rows",
        [weights, flat],
    )


if __name__ == "__main__":
    main(build, __doc__)
