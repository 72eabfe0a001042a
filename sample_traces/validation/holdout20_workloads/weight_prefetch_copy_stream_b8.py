"""Layer weights staged by device-to-device copies on a side stream one layer ahead of the
compute, as offloading runtimes stage weights into a working buffer, 8 x 64 tokens, d 2048,
bf16 (twentieth hold-out), inference: six MLP layers (Linear 2048->2048 and GELU, the
residual add) whose weights (8 MB each) live in a "cold" pool; before layer ``i`` runs, its
weights are copied (``copy_``, a 8 MB DtoD memcpy) into one of two working buffers on the
side stream, which records an event; the current stream waits on the event, runs the layer
from that buffer, and records an event the side stream waits on before it overwrites the
buffer two layers later. Twelve copies and some 20 kernels, the copies overlapping the
previous layer's GEMM. Input: 8 x 64 x 2048. Returns 8 x 64 x 2048.

    traceinspect profile weight_prefetch_copy_stream_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor

LAYERS = 6


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d = (2, 4, 16) if smoke else (8, 64, 2048)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    cold_w = [0.02 * torch.randn(d, d, device=device, dtype=dtype) for _ in range(LAYERS)]
    cold_b = [torch.zeros(d, device=device, dtype=dtype) for _ in range(LAYERS)]
    work_w = [torch.empty(d, d, device=device, dtype=dtype) for _ in range(2)]
    work_b = [torch.empty(d, device=device, dtype=dtype) for _ in range(2)]
    side = torch.cuda.Stream(device) if cuda else None

    def stage(i: int) -> None:
        work_w[i % 2].copy_(cold_w[i])
        work_b[i % 2].copy_(cold_b[i])

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        if side is None:
            for i in range(LAYERS):
                stage(i)
                x = x + F.gelu(F.linear(x, work_w[i % 2], work_b[i % 2]))
            return x
        current = torch.cuda.current_stream(device)
        staged: list[torch.cuda.Event] = []
        used: list[torch.cuda.Event | None] = [None, None]

        def prefetch(i: int) -> None:
            if i < 2:  # the side stream joins the step (and its capture)
                side.wait_stream(current)
            if used[i % 2] is not None:
                side.wait_event(used[i % 2])
            with torch.cuda.stream(side):
                stage(i)
                ready = torch.cuda.Event()
                ready.record(side)
            staged.append(ready)

        prefetch(0)
        for i in range(LAYERS):
            if i + 1 < LAYERS:
                prefetch(i + 1)
            current.wait_event(staged[i])
            x = x + F.gelu(F.linear(x, work_w[i % 2], work_b[i % 2]))
            done = torch.cuda.Event()
            done.record(current)
            used[i % 2] = done
        current.wait_stream(side)
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"{LAYERS} layers d{d}, weights staged by DtoD copies on a side stream"
    return Built(step, inputs, description, [cold_w, cold_b, work_w, work_b])


if __name__ == "__main__":
    main(build, __doc__)
