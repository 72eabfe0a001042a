"""The eager time of a region occurrence as it would run without the profiler."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from traceinspect.analysis.estimate.columns import (
    FloatArray,
    IntArray,
    TimelineColumns,
    host_column,
    launch_times,
    stream_keys,
    sync_rows,
)
from traceinspect.analysis.estimate.dependencies import infer_dependencies
from traceinspect.calibration import Calibration
from traceinspect.model import Timeline


def host_speedup(timeline: Timeline, calibration: Calibration) -> float:
    """Factor from traced to unprofiled host time: ``unprofiled / profiled`` calibrated
    launch cost for PyTorch-profiler traces (the inflation was measured under it); 1 for
    Nsight Systems traces, whose CUDA API tracing costs the host far less."""
    if timeline.meta.format != "kineto":
        return 1.0
    ratio = calibration.eager_launch_host_ns / max(calibration.eager_launch_host_ns_profiled, 1)
    return min(1.0, ratio)


def deflated_eager_ns(
    timeline: Timeline,
    rows: IntArray,
    wall_ns: int,
    calibration: Calibration,
    *,
    columns: TimelineColumns | None = None,
) -> int:
    """Unprofiled eager time of one synchronized occurrence, estimated from its profiled
    trace by replaying it with the host sped up.

    The host's time between and inside its calls shrinks by ``unprofiled / profiled``
    calibrated launch cost (the profiler's inflation of host work); the time it spent
    blocked in a sync is replaced by waiting for the replayed GPU. Each GPU activity starts
    once its (sped-up) launch call has returned, its stream is free and the activities it
    depends on (:func:`infer_dependencies`) are done; durations are kept. The occurrence is
    taken to start at its first launch and to last ``wall_ns`` of traced host time; the
    caller's final synchronize adds ``sync_ns``.
    """
    cols = columns or TimelineColumns(timeline)
    rows = np.asarray(rows, np.int64)
    rows = rows[np.argsort(cols.gpu("start_ns")[rows], kind="stable")]
    launched_at, launch_row = launch_times(cols, rows)
    launch_end = host_column(cols, "end_ns", launch_row)
    known = launch_row >= 0
    speed = host_speedup(timeline, calibration)
    duration = cols.gpu("end_ns")[rows] - cols.gpu("start_ns")[rows]
    keys = stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    incoming: dict[int, list[int]] = {}
    for src, dst in infer_dependencies(timeline, rows, columns=cols):
        incoming.setdefault(dst, []).append(src)

    t0 = int(launched_at[known].min()) if known.any() else 0
    blocking = sync_rows(cols, rows)
    order = np.argsort(cols.host("start_ns")[blocking], kind="stable")
    sync_start = cols.host("start_ns")[blocking][order]
    sync_end = cols.host("end_ns")[blocking][order]
    # Which stretch between syncs each launch falls in; unlaunched activities go first.
    segment = np.where(known, np.searchsorted(sync_start, launched_at, side="right"), 0)
    finish = np.zeros(len(rows))
    stream_free: dict[int, float] = {}
    gpu_done = 0.0
    base, traced = 0.0, t0  # host clock (sped up) at traced time `traced`
    for k in range(len(sync_start) + 1):
        members = np.flatnonzero(segment == k)
        if len(members):
            members = members[np.argsort(launched_at[members], kind="stable")]
            ready = np.where(known[members], base + (launch_end[members] - traced) * speed, 0.0)
            _run_gpu(members, ready, keys, duration, incoming, stream_free, finish)
            gpu_done = max(gpu_done, float(finish[members].max()))
        if k < len(sync_start):
            host = base + max(0, int(sync_start[k]) - traced) * speed
            base = max(host, gpu_done) + calibration.sync_ns
            traced = max(traced, int(sync_end[k]))
    host = base + max(0, t0 + wall_ns - traced) * speed
    # Streams that the replay overlaps still share the SMs (see device_share).
    gpu_done = max(gpu_done, float((duration * cols.share[rows]).sum()))
    return int(round(max(host, gpu_done))) + calibration.sync_ns


def _run_gpu(
    members: IntArray,
    ready: FloatArray,
    keys: IntArray,
    duration: IntArray,
    incoming: Mapping[int, list[int]],
    stream_free: dict[int, float],
    finish: FloatArray,
) -> None:
    """Run ``members`` (in launch order) on their streams: each starts when it is ready,
    its stream is free and its dependencies are done. Fills ``finish``, updates
    ``stream_free``."""
    if any(int(j) in incoming for j in members):
        # Plain Python numbers: the same IEEE sums as numpy's, without per-element boxing.
        done = finish.tolist()
        member_list = members.tolist()
        for j, at, key, took in zip(
            member_list,
            ready.tolist(),
            keys[members].tolist(),
            duration[members].tolist(),
            strict=True,
        ):
            start = max([at, stream_free.get(key, 0.0)] + [done[i] for i in incoming.get(j, [])])
            done[j] = stream_free[key] = start + took
        finish[members] = [done[j] for j in member_list]
        return
    # Independent streams: end_j = C_j + max(free, max_{i<=j}(ready_i - C_{i-1})) with C
    # the running sum of the stream's durations.
    member_keys = keys[members]
    for key in np.unique(member_keys).tolist():
        on = member_keys == key
        chain = members[on]
        total = np.cumsum(duration[chain].astype(np.float64))
        before = total - duration[chain]
        latest = np.maximum.accumulate(ready[on] - before)
        ends = total + np.maximum(latest, stream_free.get(int(key), 0.0))
        finish[chain] = ends
        stream_free[int(key)] = float(ends[-1])
