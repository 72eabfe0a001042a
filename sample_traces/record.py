"""Record the sample traces and unprofiled latencies of the workloads in workloads.py.

Modes
-----
``--mode record`` (default)
    For every workload, eager and graphed: a Kineto trace (``<w>.<mode>.json.gz``), the
    unprofiled per-step latencies, the profiled per-step wall time, the graph's capture
    cost and memory, and the graphed-vs-eager difference. Writes ``latencies.json``
    after every workload, so a failure later keeps what was measured.
``--mode nsys --workload W --variant eager|graphed``
    Warm-up, then a few steps with NVTX ranges only (no torch.profiler), for running
    under ``nsys profile``.
``--mode capture-whole``
    Try to capture the whole ``host_sync`` step as one graph and print what happened
    as JSON (run in its own process: a failed capture can leave CUDA unusable).

``--smoke`` runs everything with tiny sizes and 2 timed steps; on a CPU the graphs are
replaced by a stand-in that re-runs the captured function, so all other paths run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gzip
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import NAMES, Segment, State, Workload, build, region  # noqa: E402

SCHEMA_VERSION = 1
PROFILE_WAIT, PROFILE_WARMUP, PROFILE_ACTIVE = 1, 2, 5  # torch.profiler schedule, in steps


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _us(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1000.0, 3)


def _stats_us(values_ns: list[int]) -> dict[str, Any]:
    if not values_ns:
        return {"p50_us": None, "p95_us": None, "mean_us": None, "min_us": None, "n": 0}
    ordered = sorted(values_ns)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_us": _us(statistics.median(ordered)),
        "p95_us": _us(p95),
        "mean_us": _us(statistics.fmean(ordered)),
        "min_us": _us(ordered[0]),
        "n": len(ordered),
    }


# --------------------------------------------------------------------------------------
# Graphed step: the replay contract


class _CpuGraph:
    """Stand-in for torch.cuda.CUDAGraph on a CPU (smoke runs): replay re-runs the function
    on the static inputs and copies the result into the static outputs."""

    def __init__(self, fn: Callable[[State], State | None], static_in: State):
        self.fn, self.static_in = fn, static_in

    def capture(self) -> State:
        out = self.fn(self.static_in)
        assert out is not None
        self.static_out = tuple(t.clone() for t in out)
        return self.static_out

    def replay(self) -> None:
        out = self.fn(self.static_in)
        assert out is not None
        for dst, src in zip(self.static_out, out, strict=True):
            dst.copy_(src)


class GraphedStep:
    """Each capturable segment captured as one graph; host segments run between replays.

    Calling it follows the replay contract: copy the new inputs into the static input
    buffers, then replay (each replay inside the segment's region when it has one).
    """

    def __init__(self, workload: Workload, example: State, device: torch.device):
        self.workload, self.device = workload, device
        self.static_in = tuple(t.clone() for t in example)
        self.parts: list[tuple[Segment, Any, State | None]] = []
        self.info: dict[str, Any] = {}
        cuda = device.type == "cuda"
        _sync(device)
        t0 = time.perf_counter_ns()
        if cuda:  # warm up on a side stream (lazy init, cuBLAS handles, autotuning)
            side = torch.cuda.Stream(device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(side):
                for _ in range(3):
                    workload.eager_step(self.static_in)
            torch.cuda.current_stream(device).wait_stream(side)
        else:
            workload.eager_step(self.static_in)
        _sync(device)
        t1 = time.perf_counter_ns()
        alloc0 = torch.cuda.memory_allocated(device) if cuda else 0
        reserved0 = torch.cuda.memory_reserved(device) if cuda else 0
        pool = torch.cuda.graph_pool_handle() if cuda else None
        state = self.static_in
        for seg in workload.segments:
            if not seg.capturable:
                self.parts.append((seg, None, None))
                continue
            if cuda:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    out = seg.fn(state)
                assert out is not None
            else:
                graph = _CpuGraph(seg.fn, state)
                out = graph.capture()
            self.parts.append((seg, graph, out))
            state = out
        _sync(device)
        t2 = time.perf_counter_ns()
        self.info = {
            "graph_count": sum(g is not None for _, g, _ in self.parts),
            "warmup_us": _us(t1 - t0),
            "capture_us": _us(t2 - t1),
            "memory_allocated_delta_bytes": (
                torch.cuda.memory_allocated(device) - alloc0 if cuda else None
            ),
            "memory_reserved_delta_bytes": (
                torch.cuda.memory_reserved(device) - reserved0 if cuda else None
            ),
            "graph_pool_bytes": _pool_bytes(pool) if cuda else None,
        }

    def __call__(self, inputs: State) -> State:
        for dst, src in zip(self.static_in, inputs, strict=True):
            dst.copy_(src)
        state = self.static_in
        for seg, graph, out in self.parts:
            with region(seg.name) if seg.name else contextlib.nullcontext():
                if graph is None:
                    if seg.fn(state) is None:
                        break
                else:
                    graph.replay()
                    assert out is not None
                    state = out
        return state


def _pool_bytes(pool: Any) -> int | None:
    """Bytes of the segments the caching allocator holds for this graph pool."""
    try:
        segments = torch.cuda.memory_snapshot()
        sizes = [
            int(s["total_size"])
            for s in segments
            if tuple(s.get("segment_pool_id", ())) == tuple(pool)
        ]
        return sum(sizes) if sizes else None
    except Exception:  # the snapshot's layout is private to torch and may change
        return None


# --------------------------------------------------------------------------------------
# Measurements


def time_steps(
    step: Callable[[State], State],
    inputs: list[State],
    device: torch.device,
    warmup: int,
    min_steps: int,
    soft_cap_s: float,
    hard_cap_s: float,
    max_steps: int,
) -> dict[str, Any]:
    """Unprofiled host wall time of step + synchronize, then CUDA-event spans per step."""
    k = len(inputs)
    with torch.no_grad():
        for i in range(warmup):
            step(inputs[i % k])
        _sync(device)
        walls: list[int] = []
        start = time.perf_counter()
        while len(walls) < max_steps:
            elapsed = time.perf_counter() - start
            if elapsed > hard_cap_s or (len(walls) >= min_steps and elapsed > soft_cap_s):
                break
            x = inputs[len(walls) % k]
            t0 = time.perf_counter_ns()
            step(x)
            _sync(device)
            walls.append(time.perf_counter_ns() - t0)
        spans: list[int] = []
        if device.type == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start = time.perf_counter()
            for i in range(min(len(walls), max(min_steps, 1))):
                if time.perf_counter() - start > hard_cap_s:
                    break
                begin.record()
                step(inputs[i % k])
                end.record()
                end.synchronize()
                spans.append(round(begin.elapsed_time(end) * 1e6))
    wall = {f"wall_{key}": v for key, v in _stats_us(walls).items()}
    span = {f"event_span_{key}": v for key, v in _stats_us(spans).items()}
    return {**wall, **span}


def profile_steps(
    step: Callable[[State], State], inputs: list[State], device: torch.device, path: Path
) -> list[int]:
    """Kineto trace of PROFILE_ACTIVE steps, gzipped to ``path``; returns their wall times."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    total = PROFILE_WAIT + PROFILE_WARMUP + PROFILE_ACTIVE
    raw = Path(tempfile.mkdtemp()) / "trace.json"

    def ready(prof: torch.profiler.profile) -> None:
        prof.export_chrome_trace(str(raw))

    walls: list[int] = []
    with (
        torch.no_grad(),
        torch.profiler.profile(
            activities=activities,
            record_shapes=True,
            with_stack=False,
            schedule=torch.profiler.schedule(
                wait=PROFILE_WAIT, warmup=PROFILE_WARMUP, active=PROFILE_ACTIVE, repeat=1
            ),
            on_trace_ready=ready,
        ) as prof,
    ):
        for i in range(total):
            t0 = time.perf_counter_ns()
            with region("step"):
                step(inputs[i % len(inputs)])
            _sync(device)
            walls.append(time.perf_counter_ns() - t0)
            prof.step()
    with raw.open("rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    shutil.rmtree(raw.parent, ignore_errors=True)
    return walls[PROFILE_WAIT + PROFILE_WARMUP :]


def trace_summary(path: Path, steps: int) -> dict[str, Any]:
    """Counts per step from a gzipped Kineto trace (all its GPU work belongs to the
    ``steps`` active steps, each of which ended with a synchronize)."""
    with gzip.open(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    memcpy = sum(e.get("cat") == "gpu_memcpy" for e in events)
    memset = sum(e.get("cat") == "gpu_memset" for e in events)
    launches = [
        e
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver")
        and e.get("name", "").startswith(("cudaGraphLaunch", "cuGraphLaunch"))
    ]
    graph_corr = {e.get("args", {}).get("correlation") for e in launches}
    in_graph = sum(e.get("args", {}).get("correlation") in graph_corr for e in kernels)
    step_marks = sum(str(e.get("name", "")).startswith("ProfilerStep#") for e in events)
    kernel_ns = sum(round(float(e.get("dur", 0)) * 1000) for e in kernels)
    return {
        "profiled_steps": steps,
        "profiler_step_events": step_marks,
        "kernels_per_step": len(kernels) / steps if steps else None,
        "memcpy_per_step": memcpy / steps if steps else None,
        "memset_per_step": memset / steps if steps else None,
        "graph_launches_per_step": len(launches) / steps if steps else None,
        "kernels_from_graph_launch_per_step": in_graph / steps if steps else None,
        "kernel_time_per_step_us": _us(kernel_ns / steps) if steps else None,
        "trace_bytes": path.stat().st_size,
    }


def _max_abs_diff(a: State, b: State) -> float:
    return max(float((x.float() - y.float()).abs().max()) for x, y in zip(a, b, strict=True))


def _conditions(device: torch.device, args: argparse.Namespace) -> dict[str, Any]:
    cuda = device.type == "cuda"
    driver = None
    if cuda:
        with contextlib.suppress(Exception):
            driver = (
                subprocess.run(
                    ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                    capture_output=True,
                    text=True,
                    timeout=20,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[0]
            )
    return {
        "gpu": torch.cuda.get_device_name(device) if cuda else None,
        "device": str(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "driver": driver,
        "python": platform.python_version(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "smoke": args.smoke,
        "host_timer": "time.perf_counter_ns around step() + torch.cuda.synchronize()",
        "warmup_steps": args.warmup,
        "min_timed_steps": args.min_steps,
        "soft_time_cap_s": args.soft_cap,
        "hard_time_cap_s": args.hard_cap,
        "max_timed_steps": args.max_steps,
        "profiler": {
            "activities": "CPU+CUDA" if cuda else "CPU",
            "record_shapes": True,
            "with_stack": False,
            "schedule": {"wait": PROFILE_WAIT, "warmup": PROFILE_WARMUP, "active": PROFILE_ACTIVE},
        },
        "field_notes": {
            "wall_*_us": "unprofiled host wall per step (step + synchronize), no profiler",
            "event_span_*_us": "CUDA events recorded on the current stream before and after "
            "the step: GPU span including idle gaps between kernels",
            "profiled_wall_*_us": "same host wall, measured inside the torch.profiler run "
            "(active steps only): the profiler's inflation",
            "kernels_per_step": "kernel activities in the Kineto trace / profiled steps",
            "saving_pct": "(eager wall_p50 - graphed wall_p50) / eager wall_p50 * 100",
        },
    }


def _measure_mode(
    name: str,
    mode: str,
    step: Callable[[State], State],
    work: Workload,
    device: torch.device,
    out: Path,
    args: argparse.Namespace,
) -> dict[str, Any]:
    trace = out / f"{name}.{mode}.json.gz"
    profiled = profile_steps(step, work.inputs, device, trace)
    result: dict[str, Any] = {"trace": trace.name}
    result.update(trace_summary(trace, PROFILE_ACTIVE))
    result.update({f"profiled_wall_{k}": v for k, v in _stats_us(profiled).items()})
    result.update(
        time_steps(
            step,
            work.inputs,
            device,
            args.warmup,
            args.min_steps,
            args.soft_cap,
            args.hard_cap,
            args.max_steps,
        )
    )
    return result


def record_workload(
    name: str, device: torch.device, out: Path, args: argparse.Namespace
) -> dict[str, Any]:
    entry: dict[str, Any] = {"errors": {}, "notes": []}
    work = build(name, device, args.smoke)
    entry["description"] = work.description
    with torch.no_grad():
        try:
            entry["eager"] = _measure_mode(name, "eager", work.eager_step, work, device, out, args)
        except Exception as exc:
            entry["eager"] = None
            entry["errors"]["eager"] = traceback.format_exc(limit=4)
            print(f"[{name}] eager failed: {exc!r}", flush=True)
        try:
            graphed = GraphedStep(work, work.inputs[0], device)
            _sync(device)
            t0 = time.perf_counter_ns()
            graphed(work.inputs[1])
            _sync(device)
            first = time.perf_counter_ns() - t0
            reference = work.eager_step(work.inputs[1])
            replayed = graphed(work.inputs[1])
            _sync(device)
            info = dict(graphed.info)
            info["first_replay_us"] = _us(first)
            info["max_abs_diff_vs_eager"] = _max_abs_diff(reference, replayed)
            info.update(_measure_mode(name, "graphed", graphed, work, device, out, args))
            entry["graphed"] = info
        except Exception as exc:
            entry["graphed"] = None
            entry["errors"]["graphed"] = traceback.format_exc(limit=4)
            print(f"[{name}] graphed failed: {exc!r}", flush=True)
    eager, graphed_r = entry.get("eager"), entry.get("graphed")
    entry["saving_pct"] = None
    if eager and graphed_r and eager["wall_p50_us"] and graphed_r["wall_p50_us"] is not None:
        entry["saving_pct"] = round(
            100.0 * (eager["wall_p50_us"] - graphed_r["wall_p50_us"]) / eager["wall_p50_us"], 2
        )
    if eager and graphed_r:
        ek, gk = eager["kernels_per_step"], graphed_r["kernels_per_step"]
        if ek != gk:
            entry["notes"].append(f"kernels per step differ: eager {ek}, graphed {gk}")
        em, gm = eager["memcpy_per_step"], graphed_r["memcpy_per_step"]
        if em != gm:
            entry["notes"].append(
                f"memcpy per step: eager {em}, graphed {gm} (the graphed step copies its "
                "new inputs into the static input buffers before the replay)"
            )
    return entry


def capture_whole(device: torch.device, smoke: bool) -> dict[str, Any]:
    """Try to capture the whole host_sync step (it calls .item()) as one graph."""
    work = build("host_sync", device, smoke)
    static_in = tuple(t.clone() for t in work.inputs[0])
    with torch.no_grad():
        for _ in range(3):
            work.eager_step(static_in)
        _sync(device)
        result: dict[str, Any] = {"workload": "host_sync", "captured": False}
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                work.eager_step(static_in)
            result["captured"] = True
        except Exception as exc:
            result["error_type"] = type(exc).__name__
            result["error"] = str(exc)
            if exc.__context__ is not None:
                ctx = exc.__context__
                result["error_context"] = f"{type(ctx).__name__}: {ctx}"
        try:
            _sync(device)
            result["cuda_usable_after"] = float((torch.ones(4, device=device) * 2).sum()) == 8.0
        except Exception as exc:
            result["cuda_usable_after"] = False
            result["error_after"] = f"{type(exc).__name__}: {exc}"
    return result


# --------------------------------------------------------------------------------------
# Nsight Systems mode


def nsys_run(
    name: str, variant: str, device: torch.device, steps: int, smoke: bool, warmup: int = 3
) -> None:
    """``warmup`` steps inside an NVTX range ``warmup``, then ``steps`` NVTX ``step`` ranges,
    each synchronized after its range; prints one JSON line with each step's time (ns, the
    range and the synchronize: as ``--mode record`` times the unprofiled step)."""
    work = build(name, device, smoke)
    times = []
    with torch.no_grad():
        step: Callable[[State], State]
        step = (
            GraphedStep(work, work.inputs[0], device) if variant == "graphed" else (work.eager_step)
        )
        with region("warmup"):
            for i in range(warmup):
                step(work.inputs[i % len(work.inputs)])
            _sync(device)
        for i in range(steps):
            began = time.perf_counter_ns()
            with region("step"):
                step(work.inputs[i % len(work.inputs)])
            _sync(device)
            times.append(time.perf_counter_ns() - began)
    nsys = bool(
        os.environ.get("NSYS_PROFILING_SESSION_ID") or os.environ.get("NVTX_INJECTION64_PATH")
    )
    print(
        json.dumps(
            {
                "workload": name,
                "variant": variant,
                "nsys": nsys,
                "warmup": warmup,
                "step_p50_ns": statistics.median(times),
                "steps_ns": times,
            }
        ),
        flush=True,
    )


# --------------------------------------------------------------------------------------


def _device(args: argparse.Namespace) -> torch.device:
    if args.device:
        return torch.device(args.device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("record", "nsys", "capture-whole"), default="record")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--workloads", default=",".join(NAMES))
    ap.add_argument("--workload", help="for --mode nsys")
    ap.add_argument("--variant", choices=("eager", "graphed"), default="eager")
    ap.add_argument("--steps", type=int, default=5, help="for --mode nsys")
    ap.add_argument(
        "--nsys-warmup", type=int, default=3, help="for --mode nsys: steps before the ranges"
    )
    ap.add_argument("--device")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--min-steps", type=int, default=100)
    ap.add_argument("--max-steps", type=int, default=1000)
    ap.add_argument("--soft-cap", type=float, default=1.5, help="seconds per timed loop")
    ap.add_argument("--hard-cap", type=float, default=4.0, help="seconds per timed loop")
    args = ap.parse_args(argv)
    if args.smoke:
        args.warmup, args.min_steps, args.max_steps = 2, 2, 2
    device = _device(args)

    if args.mode == "nsys":
        nsys_run(args.workload, args.variant, device, args.steps, args.smoke, args.nsys_warmup)
        return 0
    if args.mode == "capture-whole":
        print(json.dumps(capture_whole(device, args.smoke)))
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    latencies: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "conditions": _conditions(device, args),
        "workloads": {},
    }
    target = args.out / "latencies.json"
    for name in args.workloads.split(","):
        t0 = time.perf_counter()
        try:
            latencies["workloads"][name] = record_workload(name, device, args.out, args)
        except Exception:
            latencies["workloads"][name] = {"errors": {"build": traceback.format_exc(limit=4)}}
        entry = latencies["workloads"][name]
        print(
            f"[{name}] {time.perf_counter() - t0:.1f} s; saving {entry.get('saving_pct')} %; "
            f"errors: {list(entry.get('errors', {}))}",
            flush=True,
        )
        target.write_text(json.dumps(latencies, indent=1) + "\n")
        if device.type == "cuda":
            torch.cuda.empty_cache()

    if "host_sync" in latencies["workloads"] and device.type == "cuda":
        try:
            proc = subprocess.run(
                [sys.executable, __file__, "--mode", "capture-whole", "--device", str(device)]
                + (["--smoke"] if args.smoke else []),
                capture_output=True,
                text=True,
                timeout=120,
                env=os.environ.copy(),
            )
            lines = proc.stdout.strip().splitlines()
            whole = json.loads(lines[-1]) if lines else {"stderr": proc.stderr[-2000:]}
        except Exception:
            whole = {"error_running": traceback.format_exc(limit=2)}
        latencies["workloads"]["host_sync"]["whole_step_capture"] = whole
        target.write_text(json.dumps(latencies, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
