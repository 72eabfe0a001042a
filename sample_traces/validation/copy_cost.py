"""What an input copy costs a synchronized graphed step, in a process that never ran a
profiler: the host time of each ``copy_`` (first after a synchronize, then warm) under
several process states, and the wall of ``copies + replay() + synchronize`` against
``replay() + synchronize`` for a one-kernel graph fed 0 to 8 inputs.

    python copy_cost.py --out copy_cost.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import torch


def p50(values: list[int]) -> float:
    return round(statistics.median(values) / 1e3, 2)


def copy_calls(pairs: list[tuple[Any, Any]], reps: int) -> list[float]:
    """Host time of each copy_ in turn after a synchronize (µs, p50 over reps)."""
    per: list[list[int]] = [[] for _ in pairs]
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter_ns()
        for i, (dst, src) in enumerate(pairs):
            dst.copy_(src)
            now = time.perf_counter_ns()
            per[i].append(now - t)
            t = now
    torch.cuda.synchronize()
    return [p50(v) for v in per]


def wall(fn: Any, reps: int) -> float:
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize()
        out.append(time.perf_counter_ns() - t0)
    return p50(out)


def pairs_of(n: int, nbytes: int, dtype: torch.dtype = torch.uint8) -> list[tuple[Any, Any]]:
    numel = nbytes // torch.empty((), dtype=dtype).element_size()
    return [
        (
            torch.empty(numel, dtype=dtype, device="cuda"),
            torch.ones(numel, dtype=dtype, device="cuda"),
        )
        for _ in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=300)
    args = ap.parse_args()
    reps = args.reps
    out: dict[str, Any] = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    torch.ones(1, device="cuda").add_(1)
    states: dict[str, Any] = {}
    states["fresh uint8 4KB x4"] = copy_calls(pairs_of(4, 4096), reps)
    states["fresh bf16 32KB x4"] = copy_calls(pairs_of(4, 32768, torch.bfloat16), reps)
    states["fresh fp32 1MB x4"] = copy_calls(pairs_of(4, 1 << 20, torch.float32), reps)
    keep = [torch.empty(256 * (1 + i % 64), device="cuda") for i in range(4000)]
    states["after 4000 allocations, uint8 4KB x4"] = copy_calls(pairs_of(4, 4096), reps)
    # graphs of 1 kernel fed n inputs (copies into static buffers first)
    steps: dict[str, Any] = {}
    for n in (0, 1, 2, 4, 8):
        static = pairs_of(n, 65536, torch.float32)
        x = torch.zeros(1, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x.add_(1)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            x.add_(1)

        def copies(static: Any = static) -> None:
            for dst, src in static:
                dst.copy_(src)

        def step(copies: Any = copies, graph: Any = graph) -> None:
            copies()
            graph.replay()

        for _ in range(20):
            step()
        steps[str(n)] = {
            "replay_wall_us": wall(graph.replay, reps),
            "copies_wall_us": wall(copies, reps),
            "step_wall_us": wall(step, reps),
            "copy_calls_us": copy_calls(static, reps) if n else [],
        }
        print(n, steps[str(n)], flush=True)
    states["after captures, uint8 4KB x4"] = copy_calls(pairs_of(4, 4096), reps)
    out["copy_calls_us"] = states
    out["steps"] = steps
    del keep
    print(json.dumps(states, indent=1))
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
