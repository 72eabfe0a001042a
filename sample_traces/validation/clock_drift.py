"""Why does a synchronized eager step's latency move between rounds of one process?

`traceinspect profile --repeats 5` showed eager rounds 2-5 of launch-bound workloads 20-40 %
slower than round 1 (and once 5x: `holdout2/embbag_small`, 277 µs then 1,266-1,452 µs),
graphed rounds flat. `eager_drift.py` tied it to profiler sessions in one lease but not in
another. This script records, per round, what the GPU's clock was: for each workload script
(``build(device, smoke)``), in one process, it runs phases of synchronized eager (and
replayed) rounds and, after each round, a *probe*: 20 back-to-back tiny kernels timed with
CUDA events (their duration follows the SM clock), while ``nvidia-smi`` logs the SM clock
every 20 ms in the background.

Phases, in order: ``fresh`` (3 eager rounds), ``graphed`` (1 replay round), ``after_capture``
(2 eager), ``after_profiler`` (2 eager, after one torch.profiler CPU+CUDA session of 5
steps), ``after_busy`` (2 eager, each right after 200 ms of large matmuls that raise the
clock), ``graphed_2`` (1 replay round).

    python clock_drift.py --out clocks.json workloads/mlp_narrow_fp32.py ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import torch
from _harness import capture, load_workload, synchronized_ns


def _smi_log(path: Path) -> subprocess.Popen[bytes] | None:
    try:
        return subprocess.Popen(
            [
                "nvidia-smi",
                "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate,utilization.gpu",
                "--format=csv,noheader,nounits",
                "-lms",
                "20",
            ],
            stdout=path.open("wb"),
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    smi = _smi_log(args.out.with_suffix(".smi.csv")) if cuda else None

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    probe_x = torch.ones(4096, device=device)
    big = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16 if cuda else torch.float32)

    def probe_ns() -> float:
        """Mean GPU time of one tiny kernel, 20 back to back (follows the SM clock)."""
        if not cuda:
            return 0.0
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(20):
            probe_x.mul_(1.0)
        end.record()
        end.synchronize()
        return begin.elapsed_time(end) * 1e6 / 20

    def busy(seconds: float = 0.2) -> None:
        stop = time.perf_counter() + seconds
        while time.perf_counter() < stop:
            for _ in range(4):
                big @ big
            sync()

    log: list[dict[str, Any]] = []
    result: dict[str, Any] = {"torch": torch.__version__, "steps": args.steps, "rounds": log}
    for script in args.scripts:
        built = load_workload(script).build(device, args.smoke)
        inputs = built.inputs[0]

        def eager(built: Any = built, inputs: Any = inputs) -> Any:
            return built.fn(*inputs)

        def timed(phase: str, step: Any, name: str = script.stem) -> None:
            t0 = time.time()
            times = synchronized_ns(step, args.steps, sync)
            entry = {
                "workload": name,
                "phase": phase,
                "start_unix": t0,
                "end_unix": time.time(),
                "p50_ns": int(statistics.median(times)),
                "probe_kernel_ns": round(probe_ns(), 1),
            }
            log.append(entry)
            print(json.dumps(entry), flush=True)

        for _ in range(5):
            eager()
        sync()
        for _ in range(3):
            timed("fresh", eager)
        replay: Any = None
        if cuda:
            graph, static = capture(built.fn, inputs)

            def replay(graph: Any = graph, static: Any = static, inputs: Any = inputs) -> None:
                for buffer, value in zip(static, inputs, strict=True):
                    if isinstance(buffer, torch.Tensor):
                        buffer.copy_(value)
                graph.replay()

            timed("graphed", replay)
        for _ in range(2):
            timed("after_capture", eager)
        acts = [torch.profiler.ProfilerActivity.CPU]
        if cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts):
            for _ in range(5):
                eager()
            sync()
        for _ in range(2):
            timed("after_profiler", eager)
        for _ in range(2):
            busy()
            timed("after_busy", eager)
        if replay is not None:
            timed("graphed_2", replay)
    if smi is not None:
        smi.terminate()
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
