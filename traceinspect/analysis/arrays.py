"""The one index of a timeline: its columns as numpy arrays, plus per-activity facts every
analysis reuses.

Built once per trace by :func:`index_timeline`; everything here is vectorised over all GPU
activities (no per-activity Python loops), so a trace with millions of kernels costs tens of
milliseconds. The replay estimate's lazily extracted columns and host-call flags
(:attr:`TimelineArrays.columns`) start from the same arrays, so no column is read twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.analysis.estimate.columns import TimelineColumns
from traceinspect.analysis.intervals import IntArray, merge
from traceinspect.model import Timeline

BoolArray = npt.NDArray[np.bool_]

#: Host API kinds that launch GPU work (their calls are what ``gpu.launch_row`` points at).
LAUNCH_KINDS = ("launch", "graph_launch", "memcpy", "memset")


@dataclass(frozen=True)
class Blocks:
    """Disjoint, sorted ``[starts, ends)`` intervals (a union), per key."""

    by_key: dict[int, tuple[IntArray, IntArray]] = field(default_factory=dict)

    def get(self, key: int) -> tuple[IntArray, IntArray]:
        empty = np.empty(0, np.int64)
        return self.by_key.get(key, (empty, empty))


@dataclass(frozen=True)
class TimelineArrays:
    """Numpy views of a :class:`Timeline` and derived per-GPU-activity facts (ns)."""

    timeline: Timeline
    start: IntArray  # gpu.start_ns
    end: IntArray  # gpu.end_ns
    device: IntArray
    stream: IntArray
    launch_row: IntArray
    is_kernel: BoolArray
    is_copy: BoolArray  # memcpy between host and device (HtoD / DtoH)
    is_graph: BoolArray  # from a graph launch, or a whole-graph record
    #: The launching call per activity (-1 where ``launch_row`` is -1).
    launch_start: IntArray
    launch_end: IntArray
    #: Process of the launching call (falls back to ``gpu.pid``) and its thread (-1 unknown).
    pid: IntArray
    tid: IntArray
    #: ``start - launch_start``: from the launch call's start to the activity's start.
    launch_latency: IntArray
    #: Activities of the same process and device launched but not finished when this one's
    #: launch call started (how far ahead of the GPU the host was); -1 without a launch record.
    queue_depth: IntArray
    #: First activity launched on its stream after a stream-wait-event on that stream.
    after_wait: BoolArray
    #: Activities without a launch record that ran before the first activity with one on
    #: their stream (:func:`queued_before_recording`): launched before the recording began.
    queued_before: BoolArray
    #: Host calls blocking on the GPU (``host.kind == "sync"``), as unions per pid.
    sync_calls: Blocks
    #: Device-side synchronization records (``syncs`` other than stream waits), per device.
    sync_records: Blocks
    #: Host memcpy calls, as unions per pid.
    copy_calls: Blocks
    #: All GPU activity, as unions per device.
    device_busy: Blocks
    host_start: IntArray
    host_end: IntArray
    #: The estimator's view of the same timeline (columns extracted on first use, device
    #: shares, host-call flags), seeded with the arrays above.
    columns: TimelineColumns


def index_timeline(timeline: Timeline) -> TimelineArrays:
    """Build the arrays and per-activity facts for ``timeline``."""
    gpu, host = timeline.gpu, timeline.host
    start = gpu["start_ns"].to_numpy(np.int64)
    end = gpu["end_ns"].to_numpy(np.int64)
    device = gpu["device"].to_numpy(np.int64)
    stream = gpu["stream"].to_numpy(np.int64)
    launch_row = gpu["launch_row"].to_numpy(np.int64)
    kind = gpu["kind"]
    is_kernel = kind.eq("kernel").to_numpy()
    is_copy = (kind.eq("memcpy") & gpu["copy_kind"].isin(("HtoD", "DtoH"))).to_numpy()
    is_graph = gpu["from_graph"].to_numpy(bool) | kind.eq("graph").to_numpy()

    host_start = host["start_ns"].to_numpy(np.int64)
    host_end = host["end_ns"].to_numpy(np.int64)
    host_pid = host["pid"].to_numpy(np.int64)
    host_tid = host["tid"].to_numpy(np.int64)
    host_kind = host["kind"]

    has_launch = launch_row >= 0
    safe_row = np.where(has_launch, launch_row, 0)
    if len(host):
        launch_start = np.where(has_launch, host_start[safe_row], -1)
        launch_end = np.where(has_launch, host_end[safe_row], -1)
        pid = np.where(has_launch, host_pid[safe_row], gpu["pid"].to_numpy(np.int64))
        tid = np.where(has_launch, host_tid[safe_row], -1)
    else:
        launch_start = np.full(len(gpu), -1, np.int64)
        launch_end = launch_start.copy()
        pid = gpu["pid"].to_numpy(np.int64)
        tid = launch_start.copy()
    launch_latency = np.where(has_launch, start - launch_start, -1)

    syncs = timeline.syncs
    sync_kind = syncs["kind"].to_numpy()
    waits = sync_kind == "stream_wait_event"
    if waits.any():
        after_wait = _after_wait(
            launch_start,
            device,
            stream,
            has_launch,
            syncs["device"].to_numpy(np.int64)[waits],
            syncs["stream"].to_numpy(np.int64)[waits],
            syncs["start_ns"].to_numpy(np.int64)[waits],
        )
    else:
        after_wait = _after_wait_call(
            launch_start,
            pid,
            tid,
            has_launch,
            host,
            host["name"].str.contains("StreamWaitEvent", regex=False).to_numpy(bool),
        )
    device_busy = _unions(device, start, end, np.ones(len(gpu), bool))
    columns = TimelineColumns(timeline)
    columns.preload(
        gpu={
            "start_ns": start,
            "end_ns": end,
            "device": device,
            "stream": stream,
            "launch_row": launch_row,
        },
        host={"start_ns": host_start, "end_ns": host_end, "pid": host_pid, "tid": host_tid},
        device_blocks=device_busy.by_key,
    )
    return TimelineArrays(
        timeline=timeline,
        start=start,
        end=end,
        device=device,
        stream=stream,
        launch_row=launch_row,
        is_kernel=is_kernel,
        is_copy=is_copy,
        is_graph=is_graph,
        launch_start=launch_start,
        launch_end=launch_end,
        pid=pid,
        tid=tid,
        launch_latency=launch_latency,
        queue_depth=_queue_depth(launch_start, end, pid, device, has_launch),
        after_wait=after_wait,
        queued_before=queued_before_recording(device, stream, start, has_launch),
        sync_calls=_unions(host_pid, host_start, host_end, host_kind.eq("sync").to_numpy()),
        sync_records=_unions(
            syncs["device"].to_numpy(np.int64),
            syncs["start_ns"].to_numpy(np.int64),
            syncs["end_ns"].to_numpy(np.int64),
            ~waits,
        ),
        copy_calls=_unions(host_pid, host_start, host_end, host_kind.eq("memcpy").to_numpy()),
        device_busy=device_busy,
        host_start=host_start,
        host_end=host_end,
        columns=columns,
    )


def queued_before_recording(
    device: IntArray, stream: IntArray, start: IntArray, has_launch: BoolArray
) -> BoolArray:
    """Activities without a launch record that started before the first activity with one on
    the same stream. A stream runs its work in the order it was issued, so these were issued
    before any launch the trace recorded there: the host ran ahead of the GPU before the
    recording began (a queue of work already launched, often hundreds of ms on a pipelined
    training loop) and the GPU was still working through it. They belong to no region — a
    region's range cannot have launched them. On a stream with no launch record at all
    (a trace without host calls), nothing is marked: there time overlap is all there is."""
    out = np.zeros(len(start), bool)
    if not has_launch.any() or has_launch.all():
        return out
    _, key = np.unique(np.stack([device, stream], axis=1), axis=0, return_inverse=True)
    key = key.reshape(-1)
    first = np.full(int(key.max()) + 1, np.iinfo(np.int64).min, np.int64)
    launched_keys = np.unique(key[has_launch])
    first[launched_keys] = np.iinfo(np.int64).max
    np.minimum.at(first, key[has_launch], start[has_launch])
    out = ~has_launch & (start < first[key])
    return out


def _unions(key: IntArray, starts: IntArray, ends: IntArray, keep: BoolArray) -> Blocks:
    by_key: dict[int, tuple[IntArray, IntArray]] = {}
    key, starts, ends = key[keep], starts[keep], ends[keep]
    for k in np.unique(key):
        mine = key == k
        by_key[int(k)] = merge(starts[mine], ends[mine])
    return Blocks(by_key)


def _queue_depth(
    launch_start: IntArray, end: IntArray, pid: IntArray, device: IntArray, has_launch: BoolArray
) -> IntArray:
    depth = np.full(len(end), -1, np.int64)
    if not has_launch.any():
        return depth
    keys = np.unique(np.stack([pid[has_launch], device[has_launch]], axis=1), axis=0)
    for p, d in keys:
        rows = np.flatnonzero(has_launch & (pid == p) & (device == d))
        t = launch_start[rows]
        launched_before = np.searchsorted(np.sort(t), t, side="left")
        finished_by = np.searchsorted(np.sort(end[rows]), t, side="right")
        depth[rows] = np.maximum(launched_before - finished_by, 0)
    return depth


def _after_wait_call(
    launch_start: IntArray,
    pid: IntArray,
    tid: IntArray,
    has_launch: BoolArray,
    host: pd.DataFrame,
    is_wait: BoolArray,
) -> BoolArray:
    """Without device-side wait records: the first activity a thread launches after its
    ``cudaStreamWaitEvent`` call (the call names no stream; the next launch is the one that
    waits, in the fork/join pattern PyTorch's stream guards produce)."""
    return _first_launch_after(
        launch_start,
        (pid, tid),
        has_launch,
        (host["pid"].to_numpy(np.int64)[is_wait], host["tid"].to_numpy(np.int64)[is_wait]),
        host["start_ns"].to_numpy(np.int64)[is_wait],
    )


def _after_wait(
    launch_start: IntArray,
    device: IntArray,
    stream: IntArray,
    has_launch: BoolArray,
    wait_device: IntArray,
    wait_stream: IntArray,
    wait_time: IntArray,
) -> BoolArray:
    """True for the first activity launched on a stream after a wait-event on that stream."""
    return _first_launch_after(
        launch_start, (device, stream), has_launch, (wait_device, wait_stream), wait_time
    )


def _first_launch_after(
    launch_start: IntArray,
    keys: tuple[IntArray, IntArray],
    has_launch: BoolArray,
    wait_keys: tuple[IntArray, IntArray],
    wait_time: IntArray,
) -> BoolArray:
    """True for each launched activity that is the first, in launch order within its group
    (same pair of ``keys``), to be launched after one of that group's waits."""
    out = np.zeros(len(launch_start), bool)
    if len(wait_time) == 0:
        return out
    (key_a, key_b), (wait_a, wait_b) = keys, wait_keys
    for a, b in np.unique(np.stack([wait_a, wait_b], axis=1), axis=0):
        waits = np.sort(wait_time[(wait_a == a) & (wait_b == b)])
        rows = np.flatnonzero(has_launch & (key_a == a) & (key_b == b))
        if len(rows) == 0:
            continue
        rows = rows[np.argsort(launch_start[rows], kind="stable")]
        waits_before = np.searchsorted(waits, launch_start[rows], side="right")
        previous = np.concatenate(([0], waits_before[:-1]))
        out[rows] = waits_before > previous
    return out
