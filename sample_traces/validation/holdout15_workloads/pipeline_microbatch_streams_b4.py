"""Two pipeline stages on two side streams over 4 micro-batches, bf16 (fifteenth hold-out),
inference, as a one-device pipeline schedule overlaps them: the input (16 x 256 x 512) is
split into 4 micro-batches of 4 x 256 x 512 (views). Stage 1 is Linear 512->512, GELU,
Linear 512->512, GELU; stage 2 is Linear 512->512 and ``LayerNorm``. Side stream A is forked
from the current stream once, with ``wait_stream``, at the start; for micro-batch k it runs
stage 1 and records event E_k. Side stream B runs stage 2 of micro-batch k after
``B.wait_event(E_k)``: stream B waits on stream A's events only, never on the current
stream, so stage 2 of micro-batch k overlaps stage 1 of micro-batch k + 1; B records an
event after each micro-batch, and the current stream waits on B's last one (B runs in
order, so that covers all four) and on A's last one (already covered through B; it joins A
to the capture's origin stream explicitly) and concatenates the four outputs
(``torch.cat``). Every
stage-1 output stays referenced until that join, so no block of the memory pool is reused
while stream B may still read it (in eager runs and in the capture alike); outside graph
capture the stage-1 outputs are also marked with ``record_stream`` for stream B and the
stage-2 outputs for the current stream. On a CPU everything runs in order on the default
stream. Stage 1 is 4 kernels and stage 2 is 2 per micro-batch, over 1024 x 512 activations:
launch-bound. Input: 16 x 256 x 512. Returns 16 x 256 x 512.

    traceinspect profile pipeline_microbatch_streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

MICRO_BATCHES = 4


def build(device: torch.device, smoke: bool) -> Built:
    micro, seq, d = (2, 8, 32) if smoke else (4, 256, 512)
    dtype = low_precision(device)
    cuda = device.type == "cuda"
    stage1 = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.GELU())
    stage1 = stage1.to(device=device, dtype=dtype).eval()
    stage2 = nn.Sequential(nn.Linear(d, d), nn.LayerNorm(d)).to(device=device, dtype=dtype).eval()
    streams = [torch.cuda.Stream(device) for _ in range(2)] if cuda else []

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        chunks = x.chunk(MICRO_BATCHES, dim=0)
        if not cuda:
            return torch.cat([stage2(stage1(c)) for c in chunks], dim=0)
        side_a, side_b = streams
        current = torch.cuda.current_stream(device)
        capturing = torch.cuda.is_current_stream_capturing()
        side_a.wait_stream(current)
        hidden, outs = [], []
        for c in chunks:
            with torch.cuda.stream(side_a):
                h = stage1(c)
                stage1_done = torch.cuda.Event()
                stage1_done.record(side_a)
            hidden.append(h)  # referenced until the join
            side_b.wait_event(stage1_done)
            with torch.cuda.stream(side_b):
                outs.append(stage2(h))
                stage2_done = torch.cuda.Event()
                stage2_done.record(side_b)
            if not capturing:
                h.record_stream(side_b)
        current.wait_event(stage2_done)
        current.wait_event(stage1_done)
        if not capturing:
            for out in outs:
                out.record_stream(current)
        return torch.cat(outs, dim=0)

    batch = micro * MICRO_BATCHES
    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"2-stage pipeline, {MICRO_BATCHES} micro-batches of {micro} x {seq} x {d}, stage 1 "
        f"(2 x Linear + GELU) on side stream A, stage 2 (Linear + LN) on side stream B "
        f"waiting on A's events"
    )
    return Built(step, inputs, description, [stage1, stage2])


if __name__ == "__main__":
    main(build, __doc__)
