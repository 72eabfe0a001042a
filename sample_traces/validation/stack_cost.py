"""What recording Python stacks costs, and whole-script traces with stacks.

``cost``: for each workload script (one of ``workloads/*.py``: it defines ``build(device,
smoke)``), time its step unprofiled, then under ``torch.profiler`` with ``record_shapes``
as ``traceinspect profile`` records it, with and without ``with_stack`` — interleaved over
``--rounds`` rounds — and write one JSON with the per-step wall p50 of each.

    python stack_cost.py cost --out stack_cost.json workloads/mlp_narrow_fp32.py ...

``trace``: run a script as ``python SCRIPT ARGS`` would, under the profiler with
``record_shapes`` and ``with_stack``, and export its trace (what a stacks option of
``traceinspect profile`` would record).

    python stack_cost.py trace --out trace.stacks.json.gz unannotated/decode_gpt.py -- ARGS
"""

from __future__ import annotations

import argparse
import json
import runpy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from _harness import load_workload


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(step: Callable[[], Any], steps: int, device: torch.device) -> list[int]:
    times = []
    for _ in range(steps):
        start = time.perf_counter_ns()
        step()
        _sync(device)
        times.append(time.perf_counter_ns() - start)
    return times


def _profiled(
    step: Callable[[], Any], steps: int, device: torch.device, with_stack: bool
) -> tuple[list[int], int]:
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    prof = torch.profiler.profile(activities=acts, record_shapes=True, with_stack=with_stack)
    prof.start()
    try:
        times = _timed(step, steps, device)
    finally:
        start = time.perf_counter_ns()
        prof.stop()
        stop_ns = time.perf_counter_ns() - start
    return times, stop_ns


def cost(args: argparse.Namespace) -> None:
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    result: dict[str, Any] = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "steps_per_round": args.steps,
        "rounds": args.rounds,
        "profiler": "CPU+CUDA activities, record_shapes=True; with_stack False vs True",
        "workloads": {},
    }
    for script in args.scripts:
        built = load_workload(script).build(device, args.smoke)
        inputs = built.inputs[0]

        def step(built: Any = built, inputs: Any = inputs) -> Any:
            return built.fn(*inputs)

        for _ in range(5):
            step()
        _sync(device)
        rows: dict[str, list[int]] = {"unprofiled": [], "stacks_off": [], "stacks_on": []}
        stop: dict[str, list[int]] = {"stacks_off": [], "stacks_on": []}
        for _ in range(args.rounds):
            rows["unprofiled"].append(int(statistics.median(_timed(step, args.steps, device))))
            for key, flag in (("stacks_off", False), ("stacks_on", True)):
                times, stop_ns = _profiled(step, args.steps, device, flag)
                rows[key].append(int(statistics.median(times[1:])))  # the first pays set-up
                stop[key].append(stop_ns)
        entry = {
            "description": built.description,
            "round_p50_ns": rows,
            "p50_ns": {k: int(statistics.median(v)) for k, v in rows.items()},
            "profiler_stop_ns": stop,
        }
        p50 = entry["p50_ns"]
        entry["stacks_cost_vs_profiled"] = p50["stacks_on"] / p50["stacks_off"] - 1
        entry["profiled_inflation"] = {
            "stacks_off": p50["stacks_off"] / p50["unprofiled"],
            "stacks_on": p50["stacks_on"] / p50["unprofiled"],
        }
        result["workloads"][script.stem] = entry
        print(script.stem, json.dumps(entry["p50_ns"]), flush=True)
        del built
        if device.type == "cuda":
            torch.cuda.empty_cache()
    args.out.write_text(json.dumps(result, indent=1) + "\n")


def trace(args: argparse.Namespace) -> None:
    cuda = torch.cuda.is_available()
    acts = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    script = args.scripts[0]
    prof = torch.profiler.profile(activities=acts, record_shapes=True, with_stack=True)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [str(script), *args.script_args]
    sys.path.insert(0, str(script.resolve().parent))
    prof.start()
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        if cuda:
            torch.cuda.synchronize()
        prof.stop()
        sys.argv, sys.path[:] = saved_argv, saved_path
        prof.export_chrome_trace(str(args.out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("cost", "trace"))
    ap.add_argument("scripts", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    argv = sys.argv[1:]
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    args = ap.parse_args(argv)
    args.script_args = script_args
    cost(args) if args.mode == "cost" else trace(args)


if __name__ == "__main__":
    main()
