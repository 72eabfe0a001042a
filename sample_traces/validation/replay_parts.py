"""Where does a synchronized graphed step's time go, in a process that never ran a profiler?

``traceinspect profile`` times a graphed step as: copy each new input into the graph's
static inputs, ``replay()``, synchronize. For each workload script (``build(device,
smoke)``) this captures the step once and times, with ``--steps`` synchronized repetitions
each (p50, µs): ``copies`` (the input copies alone: host wall and host time of the issuing
loop), ``replay`` (``replay()`` alone: host wall with synchronize, host time of the call,
CUDA-event GPU time) and ``step`` (copies then replay, as the collector does).

    python replay_parts.py --out parts.json holdout4_workloads/rmsprop_loop.py ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from _harness import capture, event_ns, load_workload


def _p50_us(values: list[int]) -> float:
    return round(statistics.median(values) / 1e3, 1)


def _timed(fn: Callable[[], Any], steps: int) -> dict[str, float]:
    """Host wall (fn + synchronize), host time of fn alone, and CUDA-event GPU time."""
    wall, call = [], []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn()
        t1 = time.perf_counter_ns()
        torch.cuda.synchronize()
        wall.append(time.perf_counter_ns() - t0)
        call.append(t1 - t0)
    gpu = [round(ns) for ns in event_ns(fn, steps)]
    return {"wall_us": _p50_us(wall), "call_us": _p50_us(call), "gpu_us": _p50_us(gpu)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    device = torch.device("cuda")
    result: dict[str, Any] = {"torch": torch.__version__, "steps": args.steps, "workloads": {}}
    for script in args.scripts:
        built = load_workload(script).build(device, False)
        graph, static = capture(built.fn, built.inputs[0])
        fresh = built.inputs[1 % len(built.inputs)]
        pairs = [
            (s, v)
            for s, v in zip(static, fresh, strict=True)
            if isinstance(s, torch.Tensor)
        ]

        def copies(pairs: list[tuple[Any, Any]] = pairs) -> None:
            for buffer, value in pairs:
                buffer.copy_(value)

        def step(graph: Any = graph, copies: Callable[[], None] = copies) -> None:
            copies()
            graph.replay()

        for _ in range(20):
            step()
        torch.cuda.synchronize()
        result["workloads"][script.stem] = {
            "inputs": len(pairs),
            "input_bytes": sum(int(s.numel() * s.element_size()) for s, _ in pairs),
            "copies": _timed(copies, args.steps),
            "replay": _timed(graph.replay, args.steps),
            "step": _timed(step, args.steps),
        }
        print(script.stem, json.dumps(result["workloads"][script.stem]), flush=True)
        del graph, static, built
        torch.cuda.empty_cache()
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
