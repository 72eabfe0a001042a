"""Measure the launch and graph-replay constants of one GPU (``traceinspect calibrate``).

Everything is measured without the profiler except what can only be seen with it (the
device duration of a single short kernel or copy, and the profiler's own launch cost), and
everything unprofiled is measured before the first profiler session: such a session leaves
its process's later launches and replays slower (the same graphs replayed 25-39 % slower in
the profiled process than in a fresh one on the H200: ``sample_traces/validation/
holdout2_fresh``), and a calibration taken after one charged every replayed node that much.
torch is imported inside the functions: this module imports without torch.

Result fields (integers in nanoseconds unless the name says otherwise):

``eager_launch_host_ns``
    median host cost of one tiny-op launch from Python (``x.add_(1)`` in a loop of
    :data:`EAGER_LOOP_LAUNCHES`, no synchronize, total / launches).
``eager_launch_host_ns_profiled``
    the same under ``torch.profiler`` (CPU+CUDA activities).
``kernel_sizes``
    rows ``{size, numel, kernel_ns, eager_loop_ns}`` for the three kernels used below:
    ``kernel_ns`` is the median device duration the profiler reports for one
    ``x.add_(1)`` of ``numel`` float32 elements; ``eager_loop_ns`` is CUDA-event time
    around an eager loop divided by its length (launch-bound for the tiny kernel).
``node_overhead_table``
    rows ``{size, nodes, kernel_ns, graph_host_ns, graph_wall_ns, graph_gpu_ns,
    per_node_ns}`` for graphs of ``nodes`` such kernels: host time of ``replay()``,
    host wall of replay + synchronize, CUDA-event time of the replay, and
    ``per_node_ns = (graph_gpu_ns - nodes * kernel_ns) / nodes`` (may be negative when
    consecutive nodes overlap their launch latency).
``graph_node_overhead_ns``
    ``per_node_ns`` of the largest graph of tiny kernels.
``graph_node_gpu_ns``
    ``graph_gpu_ns / nodes`` of that graph: GPU time per tiny node, kernel included.
``graph_launch_host_ns``
    host time of one ``replay()`` of a 1-node graph; ``graph_launch_host_table`` has
    rows ``{nodes, host_ns}`` for every node count.
``graph_launch_latency_ns``
    1-node tiny graph: wall(replay + synchronize) - ``kernel_ns``.
``sync_ns``
    ``torch.cuda.synchronize()`` on an idle device.
``profiler_bare_op_ns``, ``profiler_bare_call_ns``, ``profiler_bare_op_shapes_ns``,
``profiler_bare_python_ns``
    what ``torch.profiler`` adds to host time per bare recorded CPU operator, per CUDA call,
    per operator when shapes are recorded and per Python frame when stacks are: loops of
    ``x.view(-1)`` (an operator, no CUDA call) and ``x.add_(1)`` (an operator and a kernel
    launch) timed unprofiled, profiled, profiled with ``record_shapes`` and with
    ``with_stack``, per call (:func:`_profiler_costs`). Evidence only: on real steps the
    profiler costs far more per operator than on a bare one (0.8-3 µs on eight H200 leases),
    so the eager model keeps its fitted costs (``DEFAULT_PROFILER_COST``); read as its costs,
    one lease's bare ones (3 µs per operator, 0.6 µs per call) put the eager time of 132 H200
    recordings a median 31 % off (11 % with the fitted ones).
``copy_warm_host_ns``
    host time of one 4 KiB device-to-device ``copy_`` issued right after another (loops of
    :data:`COPY_LOOP_CALLS`, no synchronize): what the copies into a graph's static inputs
    after the first cost.
``copy_table``, ``copy_fixed_ns``, ``copy_bandwidth_bytes_per_us``
    device-to-device ``copy_`` of 4 KiB, 1 MiB and 64 MiB: host time of the call and the
    copy's device duration (profiler); fixed cost and bandwidth fitted from them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
EAGER_LOOP_LAUNCHES = 2000  # tiny launches per timed loop: long enough to swamp timer cost
NODE_COUNTS = (1, 10, 100, 1000)  # graph sizes whose replay cost is measured
KERNEL_TARGETS_NS = {"tiny": 0, "medium": 15_000, "large": 100_000}  # 0: a 1-element add
COPY_SIZES_BYTES = (4 * 1024, 1024 * 1024, 64 * 1024 * 1024)  # static-input copy sizes
REPLAY_BUDGET_NS = 300_000_000  # wall time spent replaying one graph, per measurement
COPY_LOOP_CALLS = 500  # back-to-back small copies per timed loop (copy_warm_host_ns)
SIZING_PROBE_NUMEL = 1 << 24  # float32 elements of the probe used to size medium/large


def _median_int(values: list[int]) -> int:
    return round(statistics.median(values))


@contextlib.contextmanager
def _profiled(cuda: bool) -> Iterator[list[dict[str, Any]]]:
    """Runs the body under torch.profiler; the list fills with the trace's events."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    events: list[dict[str, Any]] = []
    folder = Path(tempfile.mkdtemp())
    try:
        with torch.profiler.profile(activities=activities) as prof:
            yield events
            if cuda:
                torch.cuda.synchronize()
        prof.export_chrome_trace(str(folder / "t.json"))
        with (folder / "t.json").open() as f:
            events.extend(json.load(f)["traceEvents"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _device_durations_ns(fn: Callable[[], None], repeats: int, cats: tuple[str, ...]) -> int:
    """Median device duration (ns) of the GPU activities ``fn`` issues, from the profiler."""
    import torch

    torch.cuda.synchronize()
    with _profiled(cuda=True) as events:
        for _ in range(repeats):
            fn()
            torch.cuda.synchronize()  # one at a time: no queueing effects on the duration
    durs = [round(float(e["dur"]) * 1000) for e in events if e.get("cat") in cats]
    if not durs:
        raise RuntimeError(f"the profiler recorded no {'/'.join(cats)} activity")
    return _median_int(durs)


def _per_call_ns(fn: Callable[[], Any], reps: int, calls: int = EAGER_LOOP_LAUNCHES) -> int:
    """Median over ``reps`` loops of the host time of one ``fn()`` call (no synchronize)."""
    import torch

    per_call: list[int] = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter_ns() - t0) // calls)
    torch.cuda.synchronize()
    return _median_int(per_call)


def _profiler_costs(x: Any, reps: int) -> dict[str, int]:
    """What torch.profiler adds per recorded operator, CUDA call, shapes record and Python
    frame: ``x.view(-1)`` records one operator and makes no CUDA call, ``x.add_(1)`` one
    operator and one kernel launch; each loop body is one Python frame (a lambda)."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    loops: dict[str, Callable[[], Any]] = {"view": lambda: x.view(-1), "add": lambda: x.add_(1)}
    plain = {name: _per_call_ns(fn, reps) for name, fn in loops.items()}
    profiled: dict[str, dict[str, int]] = {}
    for mode, shapes, stack in (
        ("plain", False, False),
        ("shapes", True, False),
        ("stack", False, True),
    ):
        with torch.profiler.profile(activities=activities, record_shapes=shapes, with_stack=stack):
            profiled[mode] = {name: _per_call_ns(fn, 3, 500) for name, fn in loops.items()}
    op = profiled["plain"]["view"] - plain["view"]
    with_shapes = profiled["shapes"]["view"] - profiled["plain"]["view"]
    return {
        "profiler_bare_op_ns": max(0, op),
        "profiler_bare_call_ns": max(0, profiled["plain"]["add"] - plain["add"] - op),
        "profiler_bare_op_shapes_ns": max(0, with_shapes),
        "profiler_bare_python_ns": max(0, profiled["stack"]["view"] - profiled["plain"]["view"]),
    }


def _kernel_ns(x: Any, repeats: int) -> int:
    return _device_durations_ns(lambda: x.add_(1), repeats, ("kernel",))


def _eager_launch_host_ns(x: Any, reps: int) -> int:
    import torch

    per_launch: list[int] = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(EAGER_LOOP_LAUNCHES):
            x.add_(1)
        per_launch.append((time.perf_counter_ns() - t0) // EAGER_LOOP_LAUNCHES)
        torch.cuda.synchronize()
    return _median_int(per_launch)


def _eager_loop_ns(x: Any, launches: int) -> int:
    import torch

    begin = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    torch.cuda.synchronize()
    begin.record()
    for _ in range(launches):
        x.add_(1)
    end.record()
    end.synchronize()
    return round(float(begin.elapsed_time(end)) * 1e6 / launches)


def _event_kernel_ns(x: Any, launches: int = 50) -> int:
    """Device time of one ``x.add_(1)`` from CUDA events around ``launches`` queued ones (no
    profiler): for kernels longer than a launch the loop is GPU-bound, so this is the kernel
    plus the small gap between queued kernels, close enough to size a tensor by."""
    x.add_(1)
    return _eager_loop_ns(x, launches)


def _sized_tensor(target_ns: int, device: Any) -> Any:
    """A float32 tensor whose in-place add takes about ``target_ns`` on the device, sized
    without the profiler (:func:`_event_kernel_ns`): a profiler session would leave the
    process's later replays slower, and the replay tables come next."""
    import torch

    if target_ns == 0:
        return torch.zeros(1, device=device)
    numel = SIZING_PROBE_NUMEL
    for _ in range(3):  # rescale twice: caches make the time non-linear in the size
        x = torch.zeros(numel, device=device)
        ns = _event_kernel_ns(x)
        if abs(ns - target_ns) < 0.1 * target_ns:
            break
        numel = max(1024, round(numel * target_ns / max(ns, 1)))
    return torch.zeros(numel, device=device)


def _replay_timings(graph: Any, expected_ns: int, quick: bool) -> tuple[int, int, int]:
    """Median host time of replay(), wall of replay + synchronize, CUDA-event time."""
    import torch

    budget = REPLAY_BUDGET_NS // (4 if quick else 1)
    reps = max(3, min(200, budget // max(expected_ns, 1)))
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    host, wall, gpu = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        graph.replay()
        t1 = time.perf_counter_ns()
        torch.cuda.synchronize()
        t2 = time.perf_counter_ns()
        host.append(t1 - t0)
        wall.append(t2 - t0)
    begin = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
    for _ in range(reps):
        begin.record()
        graph.replay()
        end.record()
        end.synchronize()
        gpu.append(round(float(begin.elapsed_time(end)) * 1e6))
    return _median_int(host), _median_int(wall), _median_int(gpu)


def _graph_of(x: Any, nodes: int) -> Any:
    import torch

    side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(nodes):
            x.add_(1)
    return graph


def _copy_pairs(device: Any) -> list[tuple[Any, Any]]:
    import torch

    pairs = []
    for size in COPY_SIZES_BYTES:
        src = torch.ones(size, dtype=torch.uint8, device=device)
        dst = torch.empty_like(src)
        dst.copy_(src)
        pairs.append((dst, src))
    return pairs


def _copy_host_ns(pairs: list[tuple[Any, Any]], quick: bool) -> list[int]:
    """Host time of one synchronized-then-issued ``copy_`` per size (no profiler)."""
    import torch

    out = []
    for dst, src in pairs:
        host: list[int] = []
        for _ in range(10 if quick else 50):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            dst.copy_(src)
            host.append(time.perf_counter_ns() - t0)
        torch.cuda.synchronize()
        out.append(_median_int(host))
    return out


def _copy_device_ns(pairs: list[tuple[Any, Any]], quick: bool) -> list[int]:
    """Device duration of each size's copy, from the profiler."""
    out = []
    for dst, src in pairs:

        def copy(dst: Any = dst, src: Any = src) -> None:
            dst.copy_(src)

        out.append(_device_durations_ns(copy, 10 if quick else 30, ("gpu_memcpy", "kernel")))
    return out


def _driver_version() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.strip().splitlines()
    return lines[0].strip() if lines else None


def measure(device_index: int = 0, quick: bool = False) -> dict[str, Any]:
    """Measure the calibration constants on CUDA device ``device_index``."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("calibration needs a CUDA GPU; torch.cuda.is_available() is False")
    device = torch.device("cuda", device_index)
    torch.cuda.set_device(device)
    reps = 3 if quick else 7

    # Everything timed without the profiler comes first: a torch.profiler session leaves
    # the process's later launches and replays slower (by 0.2-1 µs per replayed node on the
    # H200), so nothing unprofiled may follow one. The profiler then gives what only it can
    # see: the kernels' and copies' device durations and its own costs.
    tiny = torch.zeros(1, device=device)
    for _ in range(100):
        tiny.add_(1)
    torch.cuda.synchronize()
    eager_host = _eager_launch_host_ns(tiny, reps)

    sync: list[int] = []
    for _ in range(200):
        t0 = time.perf_counter_ns()
        torch.cuda.synchronize()
        sync.append(time.perf_counter_ns() - t0)

    sizes = ("tiny", "medium") if quick else tuple(KERNEL_TARGETS_NS)
    counts = NODE_COUNTS[:3] if quick else NODE_COUNTS
    tensors = {size: _sized_tensor(KERNEL_TARGETS_NS[size], device) for size in sizes}
    loops: dict[str, int] = {}
    replays: list[tuple[str, int, tuple[int, int, int]]] = []
    for size, x in tensors.items():
        loops[size] = _eager_loop_ns(x, 200 if size == "tiny" else 20)
        expected = max(_event_kernel_ns(x, 20), 1000)
        for nodes in counts:
            graph = _graph_of(x, nodes)
            replays.append((size, nodes, _replay_timings(graph, nodes * expected, quick)))
            del graph
    pairs = _copy_pairs(device)
    copy_host = _copy_host_ns(pairs, quick)
    small_dst, small_src = pairs[0]
    copy_warm_host = _per_call_ns(lambda: small_dst.copy_(small_src), reps, COPY_LOOP_CALLS)

    # Profiled from here on.
    kernel_ns = {size: _kernel_ns(x, 50 if size == "tiny" else 20) for size, x in tensors.items()}
    kernel_rows = [
        {
            "size": size,
            "numel": x.numel(),
            "kernel_ns": kernel_ns[size],
            "eager_loop_ns": loops[size],
        }
        for size, x in tensors.items()
    ]
    table: list[dict[str, Any]] = [
        {
            "size": size,
            "nodes": nodes,
            "kernel_ns": kernel_ns[size],
            "graph_host_ns": host,
            "graph_wall_ns": wall,
            "graph_gpu_ns": gpu,
            "per_node_ns": round((gpu - nodes * kernel_ns[size]) / nodes),
        }
        for size, nodes, (host, wall, gpu) in replays
    ]
    del tensors
    copies = [
        {"bytes": size, "host_ns": host, "device_ns": dev}
        for size, host, dev in zip(
            COPY_SIZES_BYTES, copy_host, _copy_device_ns(pairs, quick), strict=True
        )
    ]
    del pairs
    with _profiled(cuda=True):
        eager_host_profiled = _eager_launch_host_ns(tiny, 3)
    profiler_costs = _profiler_costs(tiny, reps)

    tiny_rows = [r for r in table if r["size"] == "tiny"]
    largest, single = tiny_rows[-1], tiny_rows[0]
    (b_mid, t_mid), (b_big, t_big) = [(r["bytes"], r["device_ns"]) for r in copies[-2:]]
    bytes_per_ns = (b_big - b_mid) / max(t_big - t_mid, 1)
    props = torch.cuda.get_device_properties(device)
    return {
        "schema_version": SCHEMA_VERSION,
        "device_name": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "driver": _driver_version(),
        "measured_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": quick,
        "eager_launch_host_ns": eager_host,
        "eager_launch_host_ns_profiled": eager_host_profiled,
        "sync_ns": _median_int(sync),
        "kernel_sizes": kernel_rows,
        "graph_launch_host_ns": single["graph_host_ns"],
        "graph_launch_host_table": [
            {"nodes": r["nodes"], "host_ns": r["graph_host_ns"]} for r in tiny_rows
        ],
        "graph_launch_latency_ns": single["graph_wall_ns"] - single["kernel_ns"],
        "graph_node_overhead_ns": largest["per_node_ns"],
        "graph_node_gpu_ns": round(largest["graph_gpu_ns"] / largest["nodes"]),
        "node_overhead_table": table,
        "copy_table": copies,
        "copy_warm_host_ns": copy_warm_host,
        "copy_fixed_ns": max(0, round(copies[0]["device_ns"] - copies[0]["bytes"] / bytes_per_ns)),
        "copy_bandwidth_bytes_per_us": round(bytes_per_ns * 1000),
        **profiler_costs,
    }


def write(path: Path | str, device_index: int = 0, quick: bool = False) -> dict[str, Any]:
    """Measure and write the result as JSON to ``path``; returns it."""
    result = measure(device_index, quick)
    Path(path).write_text(json.dumps(result, indent=1) + "\n")
    return result


def _main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Measure GPU launch/graph calibration constants.")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    result = write(args.out, args.device, args.quick)
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, list)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
