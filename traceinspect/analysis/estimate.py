"""Predict a region's time if its GPU work were captured once as a CUDA graph and replayed.

The model, per occurrence of a region (all times integer ns):

1. **Graph nodes.** Every GPU activity the occurrence launched becomes a node, except the
   *input copies*: host-to-device copies that run before the occurrence's first kernel.
   A static-input graph cannot take fresh inputs inside itself; the user copies them into
   the static buffers before ``replay()``, so they stay eager (see 4).
2. **Replay on the GPU.** Nodes keep the order of their stream and run back to back: each
   costs its traced duration plus a per-node overhead that depends on the kernel's
   duration (:meth:`Calibration.node_overhead_for`: about 0.9 µs for tiny kernels on the
   H200, near zero for long ones whose successor is prepared while they run). Streams
   overlap as they would in the graph; a node waits for the nodes it depends on
   (:func:`infer_dependencies`). The replayed GPU time is the longest path through this DAG.
3. **Host.** ``replay()`` costs ``graph_launch_host_for(nodes)`` on the host; the first node
   starts ``graph_launch_latency_ns`` after the call begins; the synchronizing caller sees
   completion ``sync_ns`` after the later of the host and the GPU finishing.
4. **Input copies.** Each input copy costs the host one eager ``copy_`` launch and the GPU
   its traced duration, before the graph on the same stream. When the trace shows none,
   one small device-to-device copy into a static buffer is assumed
   (``copy_launch_host_ns`` + ``copy_gpu_ns`` from the calibration) unless the caller says
   the graph takes no inputs.

The result is the wall time a synchronized, unprofiled request would see. Kernel
durations in a profiled trace are close to unprofiled ones, so they are used as traced;
host costs come from the calibration, never from the trace (the profiler inflates them).

Range: ``low``/``high`` scale every calibrated overhead by ``1 ∓ spread_frac``; across
occurrences the region's range also spans the 10th–90th percentile of the occurrences'
ranges, which carries the kernels' duration variance.

Eager time, for savings: the unprofiled eager time when the caller measured it
(``eager_source="measured"``); else the traced wall time deflated by the profiler's
launch inflation — ``wall − launches × (profiled − unprofiled launch cost)`` — but never
below the eager GPU lower bound (``"trace-deflated"``); ``"trace"`` when the calibration
gives no inflation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt

from traceinspect.calibration import Calibration
from traceinspect.model import Timeline

IntArray = npt.NDArray[np.int64]
EagerSource = Literal["measured", "trace", "trace-deflated"]

#: A node on another stream whose end precedes an activity's start by at most this much is
#: a dependency candidate, ns: a cross-stream event wait resolves on the GPU in ~1–3 µs.
DEPENDENCY_WINDOW_NS: Final = 4_000

#: Tolerance for the two timestamps of one GPU being compared across streams, ns.
CLOCK_SLACK_NS: Final = 500

#: Percentiles of the per-occurrence ranges spanned by a region's low/high.
RANGE_PERCENTILES: Final = (10.0, 90.0)

#: Host API names that record an event / make a stream wait for one.
EVENT_RECORD_APIS: Final = frozenset(
    {
        "cudaEventRecord",
        "cudaEventRecordWithFlags",
        "cuEventRecord",
        "cuEventRecordWithFlags",
        "hipEventRecord",
    }
)
STREAM_WAIT_APIS: Final = frozenset(
    {"cudaStreamWaitEvent", "cuStreamWaitEvent", "hipStreamWaitEvent"}
)

#: Host call kinds that put work on the GPU (each counts as one eager launch).
LAUNCH_KINDS: Final = frozenset({"launch", "memcpy", "memset", "graph_launch"})


@dataclass(frozen=True)
class OccurrenceEstimate:
    """Predicted graphed wall time of one occurrence, with its range and breakdown (ns)."""

    graphed_ns: int
    low_ns: int
    high_ns: int
    #: ``input_copies``, ``launch``, ``gpu_work``, ``node_overhead``, ``completion`` sum to
    #: ``graphed_ns``; ``gpu_busy`` (all node durations summed) is informational.
    parts: Mapping[str, int]
    nodes: int = 0
    streams: int = 0
    dependencies: int = 0
    input_copies: int = 0


@dataclass(frozen=True)
class RegionEstimate:
    """Medians over a region's occurrences of the graphed prediction and the saving."""

    graphed_ns: int
    low_ns: int
    high_ns: int
    eager_ns: int
    eager_source: EagerSource
    saving_ns: int
    saving_frac: float
    calibration: Calibration
    parts: Mapping[str, int]
    occurrences: int
    nodes: int
    streams: int
    dependencies: int
    input_copies: int
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "graphed_us": _us(self.graphed_ns),
            "low_us": _us(self.low_ns),
            "high_us": _us(self.high_ns),
            "saving_us": _us(self.saving_ns),
            "saving_frac": round(self.saving_frac, 4),
            "eager_us": _us(self.eager_ns),
            "eager_source": self.eager_source,
            "calibration": self.calibration.name,
            "calibration_note": self.calibration.fallback_note,
            "parts": {k: _us(v) for k, v in self.parts.items()},
            "occurrences": self.occurrences,
            "graph": {
                "nodes": self.nodes,
                "streams": self.streams,
                "cross_stream_dependencies": self.dependencies,
                "input_copies": self.input_copies,
            },
            "notes": list(self.notes),
        }


def estimate_region(
    timeline: Timeline,
    occurrence_rows: Sequence[IntArray],
    eager_wall_ns: Sequence[int],
    calibration: Calibration,
    *,
    eager_unprofiled_ns: int | None = None,
    assume_input_copy: bool = True,
) -> RegionEstimate | None:
    """Estimate one region from its occurrences; ``None`` when none launched GPU work.

    ``occurrence_rows[i]`` are positions in ``timeline.gpu`` of the activities occurrence
    ``i`` launched, ``eager_wall_ns[i]`` its traced wall time. ``eager_unprofiled_ns``, when
    known (measured without the profiler), is the eager time savings are computed from.
    """
    if len(occurrence_rows) != len(eager_wall_ns):
        raise ValueError("occurrence_rows and eager_wall_ns differ in length")
    kept = [
        (np.asarray(rows, np.int64), int(wall))
        for rows, wall in zip(occurrence_rows, eager_wall_ns, strict=True)
        if len(rows)
    ]
    if not kept:
        return None
    estimates = [
        estimate_occurrence(timeline, rows, calibration, assume_input_copy=assume_input_copy)
        for rows, _ in kept
    ]
    graphed = _median([e.graphed_ns for e in estimates])
    low = min(graphed, int(np.percentile([e.low_ns for e in estimates], RANGE_PERCENTILES[0])))
    high = max(graphed, int(np.percentile([e.high_ns for e in estimates], RANGE_PERCENTILES[1])))
    notes: list[str] = []
    source: EagerSource
    if eager_unprofiled_ns is not None:
        eager = int(eager_unprofiled_ns)
        source = "measured"
    else:
        eager = _median(
            [
                deflated_eager_ns(timeline, rows, wall, calibration, estimate)
                for (rows, wall), estimate in zip(kept, estimates, strict=True)
            ]
        )
        inflation = calibration.eager_launch_host_ns_profiled - calibration.eager_launch_host_ns
        source = "trace-deflated" if inflation > 0 else "trace"
        notes.append(
            "eager time estimated from the profiled trace (no unprofiled measurement given)"
        )
    if calibration.is_fallback:
        notes.append(f"calibration {calibration.name}: {calibration.fallback_note}")
    parts = {key: _median([e.parts[key] for e in estimates]) for key in estimates[0].parts}
    saving = eager - graphed
    return RegionEstimate(
        graphed_ns=graphed,
        low_ns=low,
        high_ns=high,
        eager_ns=eager,
        eager_source=source,
        saving_ns=saving,
        saving_frac=saving / eager if eager > 0 else 0.0,
        calibration=calibration,
        parts=parts,
        occurrences=len(estimates),
        nodes=_median([e.nodes for e in estimates]),
        streams=max(e.streams for e in estimates),
        dependencies=_median([e.dependencies for e in estimates]),
        input_copies=_median([e.input_copies for e in estimates]),
        notes=tuple(notes),
    )


def estimate_occurrence(
    timeline: Timeline,
    rows: IntArray,
    calibration: Calibration,
    *,
    assume_input_copy: bool = True,
) -> OccurrenceEstimate:
    """Predicted graphed wall time of the activities at ``rows`` of ``timeline.gpu``."""
    gpu = timeline.gpu
    rows = np.asarray(rows, np.int64)
    order = np.argsort(gpu["start_ns"].to_numpy()[rows], kind="stable")
    rows = rows[order]
    start = gpu["start_ns"].to_numpy()[rows]
    end = gpu["end_ns"].to_numpy()[rows]
    kind = gpu["kind"].to_numpy()[rows]
    duration = end - start

    is_input = _input_copies(kind, gpu["copy_kind"].to_numpy()[rows])
    node = ~is_input
    copy_durations = [int(d) for d in duration[is_input]]
    if not copy_durations and assume_input_copy:
        copy_durations = [calibration.copy_gpu_ns]

    stream_key = _stream_keys(
        gpu["device"].to_numpy()[rows[node]], gpu["stream"].to_numpy()[rows[node]]
    )
    deps = infer_dependencies(timeline, rows[node])
    node_kind = kind[node]
    node_dur = duration[node]
    # A whole-graph activity (graph nodes hidden) already contains its nodes' overheads.
    overhead = np.where(node_kind == "graph", 0.0, calibration.node_overhead_for(node_dur))
    bare_path = critical_path_ns(stream_key, node_dur.astype(np.float64), deps)

    def wall(scale: float) -> tuple[int, dict[str, int]]:
        path = critical_path_ns(stream_key, node_dur + overhead * scale, deps)
        return _replay_wall(copy_durations, path, bare_path, int(node.sum()), calibration, scale)

    graphed, parts = wall(1.0)
    low, _ = wall(1.0 - calibration.spread_frac)
    high, _ = wall(1.0 + calibration.spread_frac)
    parts["gpu_busy"] = int(node_dur.sum())
    return OccurrenceEstimate(
        graphed_ns=graphed,
        low_ns=min(low, graphed),
        high_ns=max(high, graphed),
        parts=parts,
        nodes=int(node.sum()),
        streams=len(set(stream_key.tolist())),
        dependencies=len(deps),
        input_copies=int(is_input.sum()),
    )


def _replay_wall(
    copy_durations: Sequence[int],
    path_ns: float,
    bare_path_ns: float,
    nodes: int,
    calibration: Calibration,
    scale: float,
) -> tuple[int, dict[str, int]]:
    """Simulate host and GPU of one synchronized request: input copies, replay(), sync.

    Returns the wall time and its parts (summing to it)."""
    host = 0.0
    gpu_free = 0.0
    copy_host = calibration.copy_launch_host_ns * scale
    for duration in copy_durations:
        # The copy is on the GPU once its launch call has submitted it.
        host += copy_host
        gpu_free = max(gpu_free, host) + duration
    copies_done = max(host, gpu_free) if copy_durations else 0.0
    replay_start = host
    gpu_start = max(gpu_free, replay_start + calibration.graph_launch_latency_ns * scale)
    gpu_end = gpu_start + path_ns
    host = replay_start + calibration.graph_launch_host_for(nodes) * scale
    done = max(host, gpu_end)
    total = done + calibration.sync_ns * scale
    input_copies = min(copies_done, gpu_start)
    parts = {
        "input_copies": int(round(input_copies)),
        "gpu_work": int(round(bare_path_ns)),
        "node_overhead": int(round(path_ns - bare_path_ns)),
        "completion": int(round(calibration.sync_ns * scale)),
    }
    parts["launch"] = int(round(total)) - sum(parts.values())
    return int(round(total)), {k: parts[k] for k in _PART_ORDER}


_PART_ORDER: Final = ("input_copies", "launch", "gpu_work", "node_overhead", "completion")


def _input_copies(kind: npt.NDArray[Any], copy_kind: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Host-to-device copies before the first kernel (inputs of a static-input graph)."""
    kernels = np.flatnonzero(kind == "kernel")
    first_kernel = int(kernels[0]) if len(kernels) else len(kind)
    leading = np.arange(len(kind)) < first_kernel
    is_input: npt.NDArray[np.bool_] = leading & (kind == "memcpy") & (copy_kind == "HtoD")
    return is_input


def _stream_keys(device: IntArray, stream: IntArray) -> IntArray:
    # Streams of different devices never share a queue: key on both.
    return (device.astype(np.int64) << 32) ^ stream.astype(np.int64)


def critical_path_ns(
    stream_key: IntArray, cost_ns: npt.ArrayLike, deps: Sequence[tuple[int, int]]
) -> float:
    """Longest path through nodes (in start order) where each waits for its stream
    predecessor and for the sources of its dependencies ``(src, dst)``, as indices."""
    costs = np.asarray(cost_ns, np.float64)
    if len(costs) == 0:
        return 0.0
    keys = np.asarray(stream_key)
    if not deps:
        # Independent streams: each is a chain; they overlap.
        return float(max(costs[keys == k].sum() for k in np.unique(keys)))
    incoming: dict[int, list[int]] = {}
    for src, dst in deps:
        incoming.setdefault(dst, []).append(src)
    finish = np.zeros(len(costs))
    last: dict[int, float] = {}
    for i, key in enumerate(keys.tolist()):
        ready = last.get(key, 0.0)
        for src in incoming.get(i, ()):
            ready = max(ready, finish[src])
        finish[i] = ready + costs[i]
        last[key] = finish[i]
    return float(finish.max())


def infer_dependencies(timeline: Timeline, rows: IntArray) -> list[tuple[int, int]]:
    """Cross-stream dependencies among the activities at ``rows`` (sorted by start), as
    ``(src, dst)`` index pairs into ``rows``.

    Two sources, combined:

    * **Events.** A ``cudaStreamWaitEvent`` call makes the next activity launched after it
      by the same thread (whose stream is the waiting stream) depend on the last activity,
      on another stream, launched before the preceding ``cudaEventRecord`` of that thread
      (before the wait call when no record precedes it); among several other streams, the
      most recently launched one — the stream that was recorded.
    * **Timing.** Activity ``j`` on stream B depends on activity ``i`` on stream A when
      ``i`` ended at most :data:`DEPENDENCY_WINDOW_NS` before ``j`` started, B was idle
      when ``i`` ended (B's previous activity ended before), and ``j`` had been launched
      (its launch call had returned) by the time ``i`` ended — ``j`` could have run but
      waited. The latest-ending such ``i`` is taken.
    """
    n = len(rows)
    if n < 2:
        return []
    gpu = timeline.gpu
    keys = _stream_keys(gpu["device"].to_numpy()[rows], gpu["stream"].to_numpy()[rows])
    if len(np.unique(keys)) < 2:
        return []
    start = gpu["start_ns"].to_numpy()[rows]
    end = gpu["end_ns"].to_numpy()[rows]
    launch_row = gpu["launch_row"].to_numpy()[rows]
    host_start = timeline.host["start_ns"].to_numpy()
    host_end = timeline.host["end_ns"].to_numpy()
    known = launch_row >= 0
    launched_at = np.where(known, host_start[np.maximum(launch_row, 0)], -1)
    submitted_by = np.where(known, host_end[np.maximum(launch_row, 0)], -1)

    deps = set(_event_dependencies(timeline, keys, launch_row, launched_at))
    deps.update(_timing_dependencies(keys, start, end, submitted_by))
    return sorted(deps, key=lambda d: (d[1], d[0]))


def _timing_dependencies(
    keys: IntArray, start: IntArray, end: IntArray, submitted_by: IntArray
) -> list[tuple[int, int]]:
    deps: list[tuple[int, int]] = []
    prev_end: dict[int, int] = {}
    by_end = np.argsort(end, kind="stable")
    sorted_end = end[by_end]
    for j in range(len(keys)):
        key = int(keys[j])
        idle_since = prev_end.get(key, np.iinfo(np.int64).min)
        prev_end[key] = max(idle_since, int(end[j]))
        lo = np.searchsorted(sorted_end, start[j] - DEPENDENCY_WINDOW_NS, side="left")
        hi = np.searchsorted(sorted_end, start[j] + CLOCK_SLACK_NS, side="right")
        for pos in range(hi - 1, lo - 1, -1):
            i = int(by_end[pos])
            if i == j or keys[i] == key or start[i] >= start[j]:
                continue
            if end[i] <= idle_since:
                break  # B was busy until after i ended: i did not hold j back.
            if submitted_by[j] >= 0 and submitted_by[j] > end[i] + CLOCK_SLACK_NS:
                break  # j was not yet launched when i ended: the launch held it back.
            deps.append((i, j))
            break
    return deps


def _event_dependencies(
    timeline: Timeline, keys: IntArray, launch_row: IntArray, launched_at: IntArray
) -> list[tuple[int, int]]:
    host = timeline.host
    if not (launch_row >= 0).any() or not len(host):
        return []
    names = host["name"].to_numpy()
    is_wait = np.isin(names, list(STREAM_WAIT_APIS))
    if not is_wait.any():
        return []
    is_record = np.isin(names, list(EVENT_RECORD_APIS))
    tid = host["tid"].to_numpy()
    pid = host["pid"].to_numpy()
    start = host["start_ns"].to_numpy()
    known = np.flatnonzero(launch_row >= 0)
    lo = int(launched_at[known].min())
    hi = int(launched_at[known].max())
    threads = {(int(pid[r]), int(tid[r])) for r in launch_row[known]}
    deps: list[tuple[int, int]] = []
    by_launch = known[np.argsort(launched_at[known], kind="stable")]
    launch_times = launched_at[by_launch]
    for w in np.flatnonzero(is_wait & (start >= lo) & (start <= hi)):
        thread = (int(pid[w]), int(tid[w]))
        if thread not in threads:
            continue
        same_thread = (pid == thread[0]) & (tid == thread[1])
        records = np.flatnonzero(is_record & same_thread & (start <= start[w]))
        cutoff = int(start[records[-1]]) if len(records) else int(start[w])
        after = int(np.searchsorted(launch_times, start[w], side="right"))
        if after >= len(by_launch):
            continue
        dst = int(by_launch[after])
        before = int(np.searchsorted(launch_times, cutoff, side="left"))
        for pos in range(before - 1, -1, -1):
            src = int(by_launch[pos])
            if keys[src] != keys[dst]:
                deps.append((src, dst))
                break
    return [(s, d) for s, d in deps if s < d]


def deflated_eager_ns(
    timeline: Timeline,
    rows: IntArray,
    wall_ns: int,
    calibration: Calibration,
    estimate: OccurrenceEstimate,
) -> int:
    """Unprofiled eager time of one occurrence, estimated from its profiled trace.

    The profiler inflates every host launch by ``profiled − unprofiled`` calibrated launch
    cost; removing that from the traced wall gives the host-bound estimate. The GPU bound
    (the replayed GPU path plus launch latency and completion) is a floor.
    """
    launch_row = timeline.gpu["launch_row"].to_numpy()[np.asarray(rows, np.int64)]
    launches = len(np.unique(launch_row[launch_row >= 0]))
    inflation = max(0, calibration.eager_launch_host_ns_profiled - calibration.eager_launch_host_ns)
    host_bound = wall_ns - launches * inflation
    parts = estimate.parts
    gpu_bound = parts["gpu_work"] + calibration.graph_launch_latency_ns + calibration.sync_ns
    return int(max(host_bound, gpu_bound))


def _median(values: Sequence[int]) -> int:
    return int(round(float(np.median(np.asarray(values, np.float64)))))


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)
