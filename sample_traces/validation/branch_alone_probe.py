"""How much the branches of a fork-join step slow each other down when replayed as one graph.

The H100's multi-stream misses (docs/validation.md, *What the model still gets wrong*) are steps
whose branches on side streams are memory-bound or fill the device — gradient clipping beside a
weight EMA (``holdout53``, -20 %), a Ladder side network, MobileNetV2 towers, an AMP step. The
schedule charges branches that overlap a share of the bandwidth and of the SMs; a profiled replay
cannot tell whether the branch captured last starts with the graph or only as its launch call
returns. This probe times, without the profiler, one workload's step captured as a CUDA graph

* ``all``: as the workload runs it, every branch on its own side stream;
* ``only_K``: with branch K alone (the others' outputs taken from an eager run beforehand);
* ``serial``: every branch in turn on one side stream, the same kernels without concurrency,

so that ``all`` against the sum of the ``only_K`` spans and against ``serial`` says how much
running side by side gained, and how long each branch takes alone in replay. Each graph is timed
two ways, the median of ``REPEATS``: ``gpu_us``, CUDA events around a replay queued behind a GPU
sleep (the GPU's span, the launch hidden), and ``wall_us``, a synchronized replay as the
validation times it (``time.perf_counter`` around ``replay()`` and ``synchronize()``).

    python sample_traces/validation/branch_alone_probe.py WORKLOAD.py OUT.json

WORKLOAD.py is any validation workload whose step calls ``fork_join`` (``_streams.py``). With
``--device cpu --smoke`` it only checks that every variant runs (no graphs, no timings).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from _harness import load_workload

REPEATS = 30
WARMUP = 3
#: Cycles the GPU sleeps before a timed replay, so that the replay is queued before it starts.
SLEEP_CYCLES = 8_000_000


def load(path: Path) -> Any:
    """The workload's module (:func:`_harness.load_workload`), which must call fork_join."""
    module = load_workload(path)
    if not hasattr(module, "fork_join"):
        sys.exit(f"{path}: its step does not call fork_join")
    return module


class Variant:
    """A stand-in for ``fork_join`` that runs the branches as ``mode`` says.

    ``mode`` is ``"all"``, ``"serial"`` or a branch's index; a branch left out returns what it
    returned in the eager run ``record`` kept (``saved``)."""

    def __init__(self, original: Callable[..., list[Any]]) -> None:
        self.original = original
        self.mode: str | int = "all"
        self.saved: list[Any] | None = None
        self.branches = 0

    def __call__(
        self,
        device: torch.device,
        streams: Sequence[Any],
        branches: Sequence[Callable[[], Any]],
    ) -> list[Any]:
        self.branches = len(branches)
        if self.mode == "all" or not streams:
            if self.mode == "all" or isinstance(self.mode, str):
                outs = self.original(device, streams, branches)
            else:
                outs = [
                    branch() if k == self.mode else self._saved(k)
                    for k, branch in enumerate(branches)
                ]
            if self.saved is None:
                self.saved = outs
            return outs
        if self.mode == "serial":
            current = torch.cuda.current_stream(device)
            streams[0].wait_stream(current)
            with torch.cuda.stream(streams[0]):
                outs = [branch() for branch in branches]
            current.wait_stream(streams[0])
            return outs
        k = int(self.mode)
        outs = self.original(device, streams[k : k + 1], branches[k : k + 1])
        return [outs[0] if j == k else self._saved(j) for j in range(len(branches))]

    def _saved(self, k: int) -> Any:
        assert self.saved is not None, "run the step once with every branch first"
        return self.saved[k]


def capture(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> torch.cuda.CUDAGraph:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(WARMUP):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(*inputs)
    torch.cuda.synchronize()
    return graph


def timings(graph: torch.cuda.CUDAGraph) -> dict[str, float]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(WARMUP):
        graph.replay()
    torch.cuda.synchronize()
    gpu, wall = [], []
    for _ in range(REPEATS):
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        gpu.append(start.elapsed_time(end) * 1000)
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - t0) * 1e6)
    return {
        "gpu_us": round(statistics.median(gpu), 1),
        "gpu_min_us": round(min(gpu), 1),
        "gpu_max_us": round(max(gpu), 1),
        "wall_us": round(statistics.median(wall), 1),
        "wall_min_us": round(min(wall), 1),
        "wall_max_us": round(max(wall), 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    ap.add_argument("workload", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (for a CPU check)")
    args = ap.parse_args()
    module = load(args.workload)
    variant = Variant(module.fork_join)
    module.fork_join = variant
    device = torch.device(args.device)
    torch.manual_seed(0)
    built = module.build(device, args.smoke)
    example = built.inputs[0]
    with torch.no_grad():
        built.fn(*example)  # every branch, eagerly: the outputs a left-out branch returns
    modes: list[str | int] = ["all", *range(variant.branches), "serial"]
    rows: dict[str, Any] = {}
    for mode in modes:
        variant.mode = mode
        name = mode if isinstance(mode, str) else f"only_{mode}"
        if device.type != "cuda":
            built.fn(*example)
            rows[name] = {}
            continue
        graph = capture(built.fn, example)
        rows[name] = timings(graph)
        del graph
        torch.cuda.synchronize()
        print(name, rows[name], flush=True)
    result: dict[str, Any] = {
        "workload": args.workload.name,
        "description": built.description,
        "branches": variant.branches,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "repeats": REPEATS,
        "graphs": rows,
    }
    if device.type == "cuda" and variant.branches:
        alone = [rows[f"only_{k}"]["gpu_us"] for k in range(variant.branches)]
        result["all_over_sum_of_alone"] = round(rows["all"]["gpu_us"] / sum(alone), 3)
        result["all_over_longest_alone"] = round(rows["all"]["gpu_us"] / max(alone), 3)
        result["all_over_serial"] = round(rows["all"]["gpu_us"] / rows["serial"]["gpu_us"], 3)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "graphs"}))


if __name__ == "__main__":
    main()
