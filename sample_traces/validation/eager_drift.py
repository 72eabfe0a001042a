"""Does eager latency in one process change after a profiler session or a graph capture?

`traceinspect profile --repeats 5` on the H200 showed every launch-bound workload's first
eager round 20-30 % faster than rounds 2-5 (graphed rounds flat). Between round 1 and the
others the collector records an eager and a graphed trace (two profiler sessions) and
captures a graph. This script separates the two: for each workload script (``build(device,
smoke)``), in one process, it times ``--rounds`` eager rounds of ``--steps`` synchronized
steps in each phase, in order:

1. ``fresh``: no profiler has run in this process yet;
2. ``after_capture``: after capturing the step as a CUDA graph and replaying it;
3. ``after_profiler_1``: after one torch.profiler session (CPU+CUDA, 5 steps) like the
   collector's per-bucket trace;
4. ``after_profiler_2``: after a second one.

    python eager_drift.py --out drift.json workloads/mlp_narrow_fp32.py workloads/decoder_b1.py
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import torch
from _harness import capture, load_workload, synchronized_ns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    result: dict[str, Any] = {"torch": torch.__version__, "steps": args.steps, "workloads": {}}
    for script in args.scripts:
        built = load_workload(script).build(device, args.smoke)
        inputs = built.inputs[0]

        def step(built: Any = built, inputs: Any = inputs) -> Any:
            return built.fn(*inputs)

        def rounds(step: Any = step) -> list[int]:
            p50s = []
            for _ in range(args.rounds):
                times = synchronized_ns(step, args.steps, sync)
                p50s.append(int(statistics.median(times)))
            return p50s

        def profile_session(step: Any = step) -> None:
            acts = [torch.profiler.ProfilerActivity.CPU]
            if cuda:
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            with torch.profiler.profile(activities=acts):
                for _ in range(5):
                    step()
                sync()

        for _ in range(5):
            step()
        sync()
        phases: dict[str, list[int]] = {"fresh": rounds()}
        if cuda:
            graph, _ = capture(built.fn, inputs)
            for _ in range(20):
                graph.replay()
            sync()
        phases["after_capture"] = rounds()
        profile_session()
        phases["after_profiler_1"] = rounds()
        profile_session()
        phases["after_profiler_2"] = rounds()
        result["workloads"][script.stem] = {"description": built.description, "p50_ns": phases}
        print(script.stem, json.dumps(phases), flush=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
