"""Is a replayed CUDA graph faster while the profiler records CUDA activity?

On some H200 machines the unprofiled replay of a graph takes 0.6-1.0 µs per node more than
the same graph's profiled replay shows (its span in the Kineto trace) and more than on other
machines of the same type. For each workload script (``build(device, smoke)``), in one
process, this captures the step once and times ``--steps`` synchronized replays (host wall
p50, and the GPU time between CUDA events) in phases: ``unprofiled``, ``cuda_profiler``
(inside a torch.profiler session recording CPU+CUDA), ``cpu_profiler`` (recording CPU only),
``after`` (after both sessions).

    python replay_under_profiler.py --out replay.json holdout2_workloads/decoder_b8.py ...
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import torch
from _harness import capture, event_ns, load_workload, synchronized_ns


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
        graph, _ = capture(built.fn, built.inputs[0])
        for _ in range(20):
            graph.replay()
        torch.cuda.synchronize()

        def timed(graph: Any = graph) -> dict[str, float]:
            host = synchronized_ns(graph.replay, args.steps)
            gpu = event_ns(graph.replay, args.steps // 4)
            return {
                "host_p50_us": round(statistics.median(host) / 1e3, 1),
                "gpu_p50_us": round(statistics.median(gpu) / 1e3, 1),
            }

        phases = {"unprofiled": timed()}
        acts = torch.profiler.ProfilerActivity
        with torch.profiler.profile(activities=[acts.CPU, acts.CUDA]):
            phases["cuda_profiler"] = timed()
        with torch.profiler.profile(activities=[acts.CPU]):
            phases["cpu_profiler"] = timed()
        phases["after"] = timed()
        result["workloads"][script.stem] = phases
        print(script.stem, json.dumps(phases), flush=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
