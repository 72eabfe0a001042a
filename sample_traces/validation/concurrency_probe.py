"""How much two streams of the same kernel gain by running side by side, on this GPU.

Two of the model's open questions (docs/validation.md, *What the model still gets wrong*):

* cuDNN's fp32 GRU (``holdout45``) runs its two layers' recurrent GEMMs, each
  (16 x 768) @ (768 x 2304) on the FP32 pipes, on two streams; in the replay they overlapped
  at about 1.08x their time alone, where the schedule keeps them apart until the first is 90 %
  done. ``gemm`` cases time a chain of such GEMMs on one stream, then the same chain on two
  streams at once.
* On an H100, short memory-bound kernels on two streams ran 1.5-1.75x their time alone beside
  each other, where the shared-bandwidth rule charges 1.16-1.33x. ``stream`` cases time chains
  of elementwise adds of 0.25-64 MB per operand alone and on two streams at once.

Each case: ``KERNELS`` kernels per chain; the chain alone on one stream (``alone_us``), two such
chains one after the other on one stream (``serial_us``), and two chains started together on
two streams (``pair_us``), each the median of ``REPEATS`` timings by CUDA events around the
whole span; ``pair_over_serial`` is what running side by side keeps of the serial time (1.0:
no gain, 0.5: perfect overlap).

    python sample_traces/validation/concurrency_probe.py OUT.json
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable

import torch

KERNELS = 40
REPEATS = 15
#: Cycles the GPU sleeps before each timed span, so that the host has queued every launch of
#: the span before its first kernel runs (the chains then time the GPU, not the launches).
SLEEP_CYCLES = 8_000_000


def timed(device: torch.device, run: Callable[[], None]) -> float:
    """Median wall of ``run`` on the GPU in microseconds (CUDA events on the current stream,
    which ``run`` joins before it returns), its launches queued behind a sleep."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(REPEATS):
        torch.cuda.synchronize(device)
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


def case(
    device: torch.device, name: str, chain: Callable[[int], None], streams: list[torch.cuda.Stream]
) -> dict[str, float | str]:
    """``chain(k)`` launches one chain of kernels on the current stream, on the k-th set of
    buffers."""
    here = torch.cuda.current_stream(device)

    def on(stream: torch.cuda.Stream, k: int) -> None:
        stream.wait_stream(here)
        with torch.cuda.stream(stream):
            chain(k)
        here.wait_stream(stream)

    for _ in range(3):  # warm up every path
        on(streams[0], 0)
        on(streams[1], 1)
    alone = timed(device, lambda: on(streams[0], 0))

    def serial_run() -> None:
        on(streams[0], 0)
        on(streams[0], 1)

    serial = timed(device, serial_run)

    def pair() -> None:
        for s in streams:
            s.wait_stream(here)
        with torch.cuda.stream(streams[0]):
            chain(0)
        with torch.cuda.stream(streams[1]):
            chain(1)
        for s in streams:
            here.wait_stream(s)

    pair_us = timed(device, pair)
    row: dict[str, float | str] = {
        "case": name,
        "alone_us": round(alone, 1),
        "serial_us": round(serial, 1),
        "pair_us": round(pair_us, 1),
        "pair_over_serial": round(pair_us / serial, 3),
    }
    print(row, flush=True)
    return row


def main() -> None:
    out = sys.argv[1]
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    streams = [torch.cuda.Stream(device), torch.cuda.Stream(device)]
    rows = []

    for m in (16, 64):
        x = [torch.randn(m, 768, device=device) for _ in range(2)]
        w = [torch.randn(768, 2304, device=device) for _ in range(2)]
        y = [torch.empty(m, 2304, device=device) for _ in range(2)]

        def gemms(
            k: int, x: list[torch.Tensor] = x, w: list[torch.Tensor] = w, y: list[torch.Tensor] = y
        ) -> None:
            for _ in range(KERNELS):
                torch.mm(x[k], w[k], out=y[k])

        rows.append(case(device, f"gemm fp32 ({m} x 768) @ (768 x 2304)", gemms, streams))

    for mb in (0.25, 1, 4, 16, 64):
        n = int(mb * 2**20 / 4)
        a = [torch.randn(n, device=device) for _ in range(2)]
        b = [torch.randn(n, device=device) for _ in range(2)]
        c = [torch.empty(n, device=device) for _ in range(2)]

        def adds(
            k: int, a: list[torch.Tensor] = a, b: list[torch.Tensor] = b, c: list[torch.Tensor] = c
        ) -> None:
            for _ in range(KERNELS):
                torch.add(a[k], b[k], out=c[k])

        rows.append(case(device, f"stream add fp32 {mb} MB per operand", adds, streams))

    props = torch.cuda.get_device_properties(device)
    result = {
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "kernels_per_chain": KERNELS,
        "repeats": REPEATS,
        "rows": rows,
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
