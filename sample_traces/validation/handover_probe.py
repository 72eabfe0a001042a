"""Two questions about graph replay that profiled traces cannot settle, timed in a process
that never runs a profiler (CUDA events around ``replay()``, the GPU idle before each):

1. **Hand-over.** Does a branch captured after N nodes of another stream start only once the
   launch has handed those N nodes over? Each graph holds N tiny kernels on the capturing
   stream and one long single-block kernel (``torch.cuda._sleep``) on a side stream that
   depends on none of them, captured either *before* the N nodes (``early``) or *after*
   them (``late``). The long kernel outlasts the chain, so ``late - early`` is the wait.
   With four side branches, branch i (from 1) is captured after i*N/4 of the nodes. The
   branches are roots of the graph, or fork after the capturing stream's first node
   (``forked``).
2. **Many branches.** K root branches of one long single-block kernel each, K = 1 to 16:
   do they all run at once, or do branches beyond the device's hardware queues
   (``CUDA_DEVICE_MAX_CONNECTIONS``, 8 by default) wait behind others?
3. **Twin chains.** Do two chains of small kernels on two streams slow each other? A chain
   of M (small GEMM, elementwise) pairs replayed alone on one stream, two such chains on
   two streams joined at the end, and the two chains one after the other on one stream.

    python handover_probe.py --out handover_probe.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def time_replay(graph: Any, reps: int) -> dict[str, float]:
    """Event-timed replay on an idle GPU: p50, p10 and p90 in µs over ``reps``."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(5):
        graph.replay()
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) * 1e3)
    out.sort()
    return {
        "p50_us": round(statistics.median(out), 2),
        "p10_us": round(out[len(out) // 10], 2),
        "p90_us": round(out[(len(out) * 9) // 10], 2),
    }


def capture(body: Callable[[], None]) -> Any:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    torch.cuda.synchronize()
    return graph


def sleep_cycles_for(us: float) -> int:
    """Cycles of ``torch.cuda._sleep`` that take about ``us`` µs here (timed in a graph)."""
    cycles = 100_000
    graph = capture(lambda: torch.cuda._sleep(cycles))
    took = time_replay(graph, 20)["p50_us"]
    return int(cycles * us / took)


def handover(
    n: int, branches: int, late: bool, forked: bool, cycles: int, reps: int
) -> dict[str, float]:
    """``forked``: the branches fork after one node of the capturing stream (each depends
    on it) instead of from the graph's start (roots)."""
    x = torch.zeros(8, device="cuda")
    streams = [torch.cuda.Stream() for _ in range(branches)]

    # late: branch i is captured after (i + 1) * n / branches of the chain's nodes
    after = [(i + 1) * n // branches if late else 0 for i in range(branches)]

    def body() -> None:
        main = torch.cuda.current_stream()
        if forked:
            x.add_(1)
        for s in streams:
            s.wait_stream(main)
        for i in range(n + 1):
            for s, at in zip(streams, after, strict=True):
                if at == i:
                    with torch.cuda.stream(s):
                        torch.cuda._sleep(cycles)
            if i < n:
                x.add_(1)
        for s in streams:
            main.wait_stream(s)

    return time_replay(capture(body), reps)


def wide(branches: int, cycles: int, reps: int) -> dict[str, float]:
    streams = [torch.cuda.Stream() for _ in range(branches)]

    def body() -> None:
        main = torch.cuda.current_stream()
        for s in streams:
            s.wait_stream(main)
            with torch.cuda.stream(s):
                torch.cuda._sleep(cycles)
        for s in streams:
            main.wait_stream(s)

    return time_replay(capture(body), reps)


def chains(m: int, layout: str, reps: int, width: int, batch: int) -> dict[str, float]:
    """M (GEMM, tanh) pairs: ``one`` chain, ``two`` chains on two streams, ``serial`` both
    chains on one stream."""
    dev = "cuda"
    w = [torch.randn(width, width, device=dev, dtype=torch.bfloat16) / width**0.5 for _ in range(2)]
    h = [torch.randn(batch, width, device=dev, dtype=torch.bfloat16) for _ in range(2)]
    side = torch.cuda.Stream()

    def chain(k: int) -> None:
        y = h[k]
        for _ in range(m):
            y = torch.tanh(y @ w[k])
        h[k].copy_(y)

    def body() -> None:
        main = torch.cuda.current_stream()
        if layout == "one":
            chain(0)
        elif layout == "serial":
            chain(0)
            chain(1)
        else:
            side.wait_stream(main)
            with torch.cuda.stream(side):
                chain(1)
            chain(0)
            main.wait_stream(side)

    return time_replay(capture(body), reps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--sleep-us", type=float, default=600.0)
    args = ap.parse_args()
    torch.ones(1, device="cuda").add_(1)
    out: dict[str, Any] = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
    }
    cycles = sleep_cycles_for(args.sleep_us)
    out["sleep_cycles"] = cycles
    out["sleep_alone"] = time_replay(capture(lambda: torch.cuda._sleep(cycles)), args.reps)
    rows: dict[str, Any] = {}
    for forked in (False, True):
        for branches in (1, 4):
            for n in (0, 25, 50, 100, 200, 400):
                for late in (False, True):
                    key = (
                        f"{'forked' if forked else 'roots'}, {branches} "
                        f"branch{'es' if branches > 1 else ''}, {n} nodes, "
                        + ("late" if late else "early")
                    )
                    rows[key] = handover(n, branches, late, forked, cycles, args.reps)
                    print(key, rows[key], flush=True)
    out["handover"] = rows
    many: dict[str, Any] = {}
    for branches in (1, 2, 4, 7, 8, 9, 12, 16):
        many[str(branches)] = wide(branches, cycles // 4, args.reps // 2)
        print(f"{branches} root branches", many[str(branches)], flush=True)
    out["many_branches"] = many
    twin: dict[str, Any] = {}
    for width, batch in ((256, 16), (512, 64), (1024, 64)):
        for layout in ("one", "two", "serial"):
            key = f"{batch}x{width} @ {width}x{width} bf16, 40 pairs, {layout}"
            twin[key] = chains(40, layout, args.reps, width, batch)
            print(key, twin[key], flush=True)
    out["twin_chains"] = twin
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
