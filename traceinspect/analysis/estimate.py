"""Predict a region's time if its GPU work were captured once as a CUDA graph and replayed.

The model, per occurrence of a region (all times integer ns):

1. **Graphs.** The GPU activities the occurrence launched become graph nodes. A blocking
   host call while it launched them (a ``*Synchronize``, a synchronous copy) cannot be
   captured: it splits the work into one graph per stretch between syncs
   (:func:`_segments`), and the device-to-host copies the sync waits for (``.item()``)
   stay eager *readbacks*. Host-to-device copies before the first kernel are *input
   copies*: a static-input graph cannot take fresh inputs, the caller copies them into the
   static buffers before ``replay()`` (see 4).
2. **Replay on the GPU.** Nodes keep the order of their stream and run back to back: each
   costs its traced duration plus a per-node overhead that depends on the kernel's
   duration (:meth:`Calibration.node_overhead_for`, interpolated from the calibration's
   ``node_overhead_table``: 0.43 µs for 0.8 µs kernels on the H200, 0.64 µs at 13 µs,
   0.85 µs at 98 µs). Streams overlap as they would in the graph; a node waits for the
   nodes it depends on (:func:`infer_dependencies`). Overlapping streams still share the
   SMs: the graph cannot finish before the SM-time of all its nodes
   (:func:`device_share`). The replayed GPU time is the larger of the DAG's longest path
   and that work bound.
3. **Host.** ``replay()`` costs ``graph_launch_host_for(nodes)`` on the host; its first node
   starts :attr:`Calibration.replay_latency_ns` after the call begins; the synchronizing
   caller sees completion ``sync_ns`` after the later of the host and the GPU finishing.
   Between graphs, the host launches the readbacks (``copy_launch_host_ns`` each), waits
   for the GPU, pays ``sync_ns`` and launches the next graph.
4. **Input copies.** Each input copy costs the host one eager ``copy_`` launch
   (``copy_launch_host_ns``) and the GPU its traced duration, before the graph on the same
   stream. When the trace shows none, one small device-to-device copy into a static buffer
   is assumed (``copy_gpu_ns``) unless the caller says the graph takes no inputs; the
   range then spans no input copy to two.
5. **One cold start per synchronize.** The first CUDA call after a synchronize takes
   longer than the same call made warm (:attr:`Calibration.cold_call_ns`: in the H200
   sample traces the first launch of a synchronized step takes 1.1–19.4 µs longer than the
   median launch, 4.55 µs over the 8). ``copy_launch_host_ns`` and the replay costs were
   each calibrated as such a first call, so each holds one cold start, but a request pays
   it once: the call that opens the request (or follows a host sync) costs as calibrated,
   every later one (a replay after the input copies, a readback, a further copy) that
   much less, and a warm replay's first node starts that much sooner. Summing the cold
   costs charged a step of copy + replay two cold starts: on a 3-kernel graph measured at
   26.5 µs on the H200 that predicted 30.7 µs (+16 %); with one, 26.1 µs.

The result is the wall time a synchronized, unprofiled request would see. Kernel
durations in a profiled trace are close to unprofiled ones, so they are used as traced;
host costs come from the calibration, never from the trace (the profiler inflates them).

Range: ``low``/``high`` scale every calibrated overhead by ``1 ∓ spread_frac`` and every
duration by the 10th/90th percentile of the same work's duration ratio across occurrences
(:func:`duration_spread`) widened by :data:`REPLAY_DURATION_DRIFT_FRAC`; the region's
range spans the 10th–90th percentile of its occurrences' ranges.

Eager time, for savings: the unprofiled eager time when the caller measured it
(``eager_source="measured"``); else the profiled trace replayed with its host work sped
up by the calibrated profiler inflation (:func:`deflated_eager_ns`, ``"trace-deflated"``;
``"trace"`` for Nsight Systems traces, which are not deflated, or when the calibration
shows no inflation). The profiler's inflation varies from
one workload to the next (1.3× to 4.5× on the H200 samples), so this estimate is rough:
pass the measured eager time when you have it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.calibration import Calibration
from traceinspect.model import Timeline

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
EagerSource = Literal["measured", "trace", "trace-deflated"]

#: A node on another stream whose end precedes an activity's start by at most this much is
#: a dependency candidate, ns: a cross-stream event wait resolves on the GPU in ~1–3 µs.
DEPENDENCY_WINDOW_NS: Final = 4_000

#: Tolerance for the two timestamps of one GPU being compared across streams, ns.
CLOCK_SLACK_NS: Final = 500

#: Kernel time of a step replayed as a graph differs from the same step's kernels in the
#: profiled eager trace by −7 % to +8 % on the H200 samples (clocks, cache state, kernels'
#: prologues overlapping differently); the range widens every duration by this much.
REPLAY_DURATION_DRIFT_FRAC: Final = 0.05

#: A graph's longest path is summed per stretch of a stream between dependencies when the
#: stretches average at least this many nodes (numpy's per-call cost beats a Python walk).
PIECE_MIN_NODES: Final = 8

#: Percentiles of the per-occurrence ranges spanned by a region's low/high.
RANGE_PERCENTILES: Final = (10.0, 90.0)
#: Occurrences of one region replayed one by one at most; beyond that an evenly spaced sample
#: stands for them (medians of 48 occurrences move by well under the calibration's spread,
#: and long training traces repeat a step thousands of times: 1,580 estimates took 60 % of a
#: 200 MB trace's analysis).
MAX_ESTIMATED_OCCURRENCES: Final = 48

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

#: Marks the asynchronous copy APIs (``cudaMemcpyAsync``); the others block the host.
_ASYNC: Final = "Async"

#: Host call kinds that put work on the GPU (each counts as one eager launch).
LAUNCH_KINDS: Final = frozenset({"launch", "memcpy", "memset", "graph_launch"})


class TimelineColumns:
    """The timeline's columns as numpy arrays, each extracted once, and every GPU
    activity's device share (:func:`device_share`). Build one per timeline and pass it to
    the functions here when calling them many times."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._gpu: dict[str, npt.NDArray[Any]] = {}
        self._host: dict[str, npt.NDArray[Any]] = {}
        self._share: FloatArray | None = None

    @property
    def host_rows(self) -> int:
        return len(self.timeline.host)

    def gpu(self, column: str) -> npt.NDArray[Any]:
        if column not in self._gpu:
            self._gpu[column] = self.timeline.gpu[column].to_numpy()
        return self._gpu[column]

    def host(self, column: str) -> npt.NDArray[Any]:
        if column not in self._host:
            self._host[column] = self.timeline.host[column].to_numpy()
        return self._host[column]

    @property
    def host_thread(self) -> IntArray:
        """One integer per host call naming its (pid, tid)."""
        if "_thread" not in self._host:
            self._host["_thread"] = (self.host("pid").astype(np.int64) << 32) ^ self.host(
                "tid"
            ).astype(np.int64)
        return self._host["_thread"]

    def host_flag(self, flag: Literal["blocking", "wait", "record"]) -> npt.NDArray[np.bool_]:
        """One boolean per host call, computed once over the whole table: ``blocking``
        (a ``sync`` call or a synchronous, non-``Async``, copy), ``wait`` (a
        :data:`STREAM_WAIT_APIS` call) or ``record`` (an :data:`EVENT_RECORD_APIS` call)."""
        column = f"_{flag}"
        if column not in self._host:
            host = self.timeline.host
            if flag == "blocking":
                values = host["kind"].eq("sync").to_numpy(bool, copy=True)
                copies = np.flatnonzero(host["kind"].eq("memcpy").to_numpy(bool))
                names = host["name"].to_numpy()[copies]
                synchronous = np.array([_ASYNC not in str(name) for name in names], bool)
                values[copies[synchronous]] = True
            else:
                apis = STREAM_WAIT_APIS if flag == "wait" else EVENT_RECORD_APIS
                values = host["name"].isin(apis).to_numpy(bool)
            self._host[column] = values
        return self._host[column]

    @property
    def share(self) -> FloatArray:
        if self._share is None:
            self._share = _device_share_all(self)
        return self._share


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
    #: Graphs the work splits into (host syncs inside the occurrence cut it).
    graphs: int = 1
    host_syncs: int = 0


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
    graphs: int = 1
    host_syncs: int = 0
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
                "graphs": self.graphs,
                "host_syncs": self.host_syncs,
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
    columns: TimelineColumns | None = None,
) -> RegionEstimate | None:
    """Estimate one region from its occurrences; ``None`` when none launched GPU work.

    ``occurrence_rows[i]`` are positions in ``timeline.gpu`` of the activities occurrence
    ``i`` launched, ``eager_wall_ns[i]`` its traced wall time. ``eager_unprofiled_ns``, when
    known (measured without the profiler), is the eager time savings are computed from.
    ``columns``, when given, is the timeline's :class:`TimelineColumns` shared by the
    calls for every region of one trace (built here otherwise).
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
    cols = columns or TimelineColumns(timeline)
    low_ratio, high_ratio = duration_spread(timeline, [rows for rows, _ in kept], columns=cols)
    spread = (
        low_ratio * (1.0 - REPLAY_DURATION_DRIFT_FRAC),
        high_ratio * (1.0 + REPLAY_DURATION_DRIFT_FRAC),
    )
    notes: list[str] = []
    if len(kept) > MAX_ESTIMATED_OCCURRENCES:
        picked = np.unique(np.linspace(0, len(kept) - 1, MAX_ESTIMATED_OCCURRENCES).round())
        notes.append(f"estimated from {len(picked)} evenly spaced of {len(kept)} occurrences")
        kept = [kept[int(i)] for i in picked]
    estimates = [
        estimate_occurrence(
            timeline,
            rows,
            calibration,
            assume_input_copy=assume_input_copy,
            duration_spread=spread,
            columns=cols,
        )
        for rows, _ in kept
    ]
    graphed = _median([e.graphed_ns for e in estimates])
    low = min(graphed, int(np.percentile([e.low_ns for e in estimates], RANGE_PERCENTILES[0])))
    high = max(graphed, int(np.percentile([e.high_ns for e in estimates], RANGE_PERCENTILES[1])))
    source: EagerSource
    if eager_unprofiled_ns is not None:
        eager = int(eager_unprofiled_ns)
        source = "measured"
    else:
        eager = _median(
            [
                deflated_eager_ns(timeline, rows, wall, calibration, columns=cols)
                for rows, wall in kept
            ]
        )
        source = "trace-deflated" if host_speedup(timeline, calibration) < 1.0 else "trace"
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
        graphs=_median([e.graphs for e in estimates]),
        host_syncs=_median([e.host_syncs for e in estimates]),
        notes=tuple(notes),
    )


def duration_spread(
    timeline: Timeline,
    occurrence_rows: Sequence[IntArray],
    *,
    columns: TimelineColumns | None = None,
) -> tuple[float, float]:
    """How much the same GPU work's duration varies from one occurrence to the next.

    The same work is the activity at the same position of every occurrence (in start
    order) when all occurrences launched as many activities, else the activities sharing
    name, grid and block. Each occurrence's GPU time is compared with what its activities
    take at their groups' median durations; the result is the 10th and 90th percentile of
    that ratio over the occurrences (1.0 when nothing repeats). Taken per occurrence, not
    per activity, so that one kernel whose duration is mostly waiting (a collective) does
    not stretch the range beyond what whole occurrences show.
    """
    occurrences = [np.asarray(r, np.int64) for r in occurrence_rows if len(r)]
    if len(occurrences) < 2:
        return 1.0, 1.0
    cols = columns or TimelineColumns(timeline)
    start = cols.gpu("start_ns")
    end = cols.gpu("end_ns")
    ordered = [r[np.argsort(start[r], kind="stable")] for r in occurrences]
    rows = np.concatenate(ordered)
    duration = (end[rows] - start[rows]).astype(np.float64)
    if len({len(r) for r in ordered}) == 1:
        group = np.tile(np.arange(len(ordered[0])), len(ordered))
    else:
        group = _same_work_groups(cols, rows)
    typical = _group_medians(group, duration)
    occurrence = np.repeat(np.arange(len(ordered)), [len(r) for r in ordered])
    actual = np.bincount(occurrence, weights=duration)
    expected = np.bincount(occurrence, weights=typical)
    ratios = actual[expected > 0] / expected[expected > 0]
    if not len(ratios):
        return 1.0, 1.0
    low, high = np.percentile(ratios, RANGE_PERCENTILES)
    return min(float(low), 1.0), max(float(high), 1.0)


def _same_work_groups(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """One integer per activity at ``rows``, equal for activities sharing name, grid and
    block (integer codes combined, so no per-row label strings are built)."""
    key = np.zeros(len(rows), np.int64)
    for column in ("name", "grid", "block"):
        codes, uniques = pd.factorize(cols.gpu(column)[rows], use_na_sentinel=False)
        key = key * max(len(uniques), 1) + np.asarray(codes, np.int64)
        key = np.unique(key, return_inverse=True)[1].astype(np.int64)  # keep codes small
    return key


def _group_medians(group: IntArray, values: FloatArray) -> FloatArray:
    """``values`` replaced by the median of their group (as :func:`numpy.median` per group:
    the middle value, or the mean of the two middle values)."""
    order = np.lexsort((values, group))
    sorted_group, sorted_values = group[order], values[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    counts = np.diff(np.r_[starts, len(order)])
    lower = sorted_values[starts + (counts - 1) // 2]
    upper = sorted_values[starts + counts // 2]
    medians = (lower + upper) / 2.0
    typical = np.empty_like(values)
    typical[order] = np.repeat(medians, counts)
    return typical


def estimate_occurrence(
    timeline: Timeline,
    rows: IntArray,
    calibration: Calibration,
    *,
    assume_input_copy: bool = True,
    duration_spread: tuple[float, float] = (1.0, 1.0),
    columns: TimelineColumns | None = None,
) -> OccurrenceEstimate:
    """Predicted graphed wall time of the activities at ``rows`` of ``timeline.gpu``.

    ``duration_spread`` scales every node's duration for the low and the high end of the
    range (see :func:`duration_spread`)."""
    cols = columns or TimelineColumns(timeline)
    rows = np.asarray(rows, np.int64)
    rows = rows[np.argsort(cols.gpu("start_ns")[rows], kind="stable")]
    start = cols.gpu("start_ns")[rows]
    duration = cols.gpu("end_ns")[rows] - start
    kind = cols.gpu("kind")[rows]
    copy_kind = cols.gpu("copy_kind")[rows]

    segment = _segments(cols, rows)
    last_segment = int(segment.max()) if len(segment) else 0
    is_input = _input_copies(kind, copy_kind) & (segment == 0)
    is_readback = _readbacks(cols, rows, segment, last_segment)
    node = ~(is_input | is_readback)
    copy_durations = [int(d) for d in duration[is_input]]
    # How many inputs a graph without visible input copies takes is unknown: one is assumed,
    # and the range spans none to two.
    low_copies, high_copies = copy_durations, copy_durations
    if not copy_durations and assume_input_copy:
        copy_durations = [calibration.copy_gpu_ns]
        high_copies = copy_durations * 2

    # A whole-graph activity (graph nodes hidden) already contains its nodes' overheads.
    overhead = np.where(kind == "graph", 0.0, calibration.node_overhead_for(duration))
    keys = _stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    share = cols.share[rows]
    graphs: list[_Graph] = []
    dependencies = 0
    for k in range(last_segment + 1):
        members = np.flatnonzero(node & (segment == k))
        deps = infer_dependencies(timeline, rows[members], columns=cols)
        dependencies += len(deps)
        graphs.append(
            _Graph(
                keys=keys[members],
                duration=duration[members].astype(np.float64),
                overhead=overhead[members],
                deps=deps,
                work_ns=float((duration[members] * share[members]).sum()),
                launch_host_ns=calibration.graph_launch_host_for(len(members)),
                readbacks=[int(d) for d in duration[is_readback & (segment == k)]],
            )
        )

    def wall(
        copies: Sequence[int], scale: float, duration_scale: float = 1.0
    ) -> tuple[int, dict[str, int]]:
        return _replay_wall(copies, graphs, calibration, scale, duration_scale)

    graphed, parts = wall(copy_durations, 1.0)
    low, _ = wall(low_copies, 1.0 - calibration.spread_frac, duration_spread[0])
    high, _ = wall(high_copies, 1.0 + calibration.spread_frac, duration_spread[1])
    parts["gpu_busy"] = int(duration[node].sum())
    return OccurrenceEstimate(
        graphed_ns=graphed,
        low_ns=min(low, graphed),
        high_ns=max(high, graphed),
        parts=parts,
        nodes=int(node.sum()),
        streams=len(np.unique(keys[node])),
        dependencies=dependencies,
        input_copies=int(is_input.sum()),
        graphs=sum(1 for g in graphs if len(g.keys)),
        host_syncs=last_segment,
    )


@dataclass(frozen=True)
class _Graph:
    """The nodes between two host syncs, and the readbacks the host waits for after them."""

    keys: IntArray
    duration: FloatArray
    overhead: FloatArray
    deps: list[tuple[int, int]]
    readbacks: list[int]
    #: SM-time of all nodes (duration × device share): concurrent streams cannot finish
    #: sooner than this, however they overlap.
    work_ns: float = 0.0
    #: Host time of its replay() call (:meth:`Calibration.graph_launch_host_for`).
    launch_host_ns: int = 0

    @cached_property
    def layout(self) -> _PathLayout:
        return _PathLayout.of(self.keys, self.deps)

    def path_ns(self, overhead_scale: float, duration_scale: float = 1.0) -> float:
        chain = self.layout.longest(self.duration * duration_scale + self.overhead * overhead_scale)
        return max(chain, self.work_ns * duration_scale)


def _replay_wall(
    copy_durations: Sequence[int],
    graphs: Sequence[_Graph],
    calibration: Calibration,
    scale: float,
    duration_scale: float = 1.0,
) -> tuple[int, dict[str, int]]:
    """Simulate the host and the GPU of one synchronized request: eager input copies, then
    per graph replay() and, between graphs, the eager readbacks and the host sync.

    The first call after a synchronize (the request's first, and the first after each host
    sync) pays the cold start that the calibrated copy and replay costs hold; every later
    call costs its calibrated time less :attr:`Calibration.cold_call_ns`.

    Returns the wall time and its parts, which sum to it; ``scale`` multiplies every
    calibrated overhead (the range)."""
    cold = calibration.cold_call_ns * scale
    calls = 0  # host calls made since the last synchronize

    def call_ns(calibrated: float) -> float:
        """Host-side cost of the next call: as calibrated when it is the first after a
        synchronize, less the cold start otherwise."""
        nonlocal calls
        calls += 1
        return calibrated if calls == 1 else max(0.0, calibrated - cold)

    host = 0.0  # when the host is free to issue the next call
    gpu_free = 0.0  # when the stream is free
    copy_host = calibration.copy_launch_host_ns * scale
    sync = calibration.sync_ns * scale
    for duration in copy_durations:
        host += call_ns(copy_host)  # the copy is on the GPU once its launch has submitted it
        gpu_free = max(gpu_free, host) + duration
    input_copies = max(host, gpu_free) if copy_durations else 0.0
    gpu_work = node_overhead = host_syncs = 0.0
    for i, graph in enumerate(graphs):
        if len(graph.keys):
            bare = graph.path_ns(0.0, duration_scale)
            path = graph.path_ns(scale, duration_scale)
            gpu_work += bare
            node_overhead += path - bare
            # Its first node reaches the GPU replay_latency_ns after a cold replay() begins,
            # the cold start sooner after a warm one; the call's host time shrinks alike.
            warm = calls > 0
            latency = calibration.replay_latency_ns * scale
            gpu_start = max(gpu_free, host + (max(0.0, latency - cold) if warm else latency))
            gpu_free = gpu_start + path
            host += call_ns(graph.launch_host_ns * scale)
        if i == len(graphs) - 1:
            break
        before = max(host, gpu_free)
        for duration in graph.readbacks:
            host += call_ns(copy_host)
            gpu_free = max(gpu_free, host) + duration
        host = max(host, gpu_free) + sync
        calls = 0
        host_syncs += host - before
    total = max(host, gpu_free) + sync
    parts = {
        "input_copies": int(round(input_copies)),
        "gpu_work": int(round(gpu_work)),
        "node_overhead": int(round(node_overhead)),
        "host_syncs": int(round(host_syncs)),
        "completion": int(round(sync)),
    }
    parts["launch"] = int(round(total)) - sum(parts.values())
    return int(round(total)), {k: parts[k] for k in _PART_ORDER}


_PART_ORDER: Final = (
    "input_copies",
    "launch",
    "gpu_work",
    "node_overhead",
    "host_syncs",
    "completion",
)


def device_share(
    timeline: Timeline, rows: IntArray, *, columns: TimelineColumns | None = None
) -> FloatArray:
    """Fraction of the device each activity occupies while it runs: a kernel with at least
    one block per SM fills it (its waves span every SM); a smaller grid fills
    ``blocks / SMs``. Copies and memsets run on copy engines: 0. Unknown grid or SM count: 1.
    """
    cols = columns or TimelineColumns(timeline)
    return cols.share[np.asarray(rows, np.int64)]


def _device_share_all(cols: TimelineColumns) -> FloatArray:
    kind = cols.gpu("kind")
    share = np.where((kind == "memcpy") | (kind == "memset"), 0.0, 1.0)
    # Each distinct grid parsed once; factorized, not turned into fixed-width strings.
    inverse, grids = pd.factorize(cols.gpu("grid"), use_na_sentinel=False)
    blocks = np.array([_blocks(str(g)) for g in grids], np.float64)[inverse]
    sms_by_device = {d.id: _sm_count(d.properties) for d in cols.timeline.meta.devices}
    devices, device_at = np.unique(cols.gpu("device"), return_inverse=True)
    sms = np.array([sms_by_device.get(int(d), 0) for d in devices], np.float64)[device_at]
    known = (kind == "kernel") & (blocks > 0) & (sms > 0)
    share[known] = np.minimum(1.0, blocks[known] / sms[known])
    return share


def _sm_count(properties: Mapping[str, Any]) -> int:
    value = properties.get("numSms", properties.get("multiProcessorCount", 0))
    return int(value) if isinstance(value, (int, float)) and value > 0 else 0


def _blocks(grid: str) -> int:
    """Blocks in a ``"x,y,z"`` grid (0 when unknown)."""
    try:
        dims = [int(part) for part in grid.split(",")]
    except ValueError:
        return 0
    return int(np.prod(dims)) if dims and min(dims) > 0 else 0


def _input_copies(kind: npt.NDArray[Any], copy_kind: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """Host-to-device copies before the first kernel (inputs of a static-input graph)."""
    kernels = np.flatnonzero(kind == "kernel")
    first_kernel = int(kernels[0]) if len(kernels) else len(kind)
    leading = np.arange(len(kind)) < first_kernel
    is_input: npt.NDArray[np.bool_] = leading & (kind == "memcpy") & (copy_kind == "HtoD")
    return is_input


def _launch_times(cols: TimelineColumns, rows: IntArray) -> tuple[IntArray, IntArray]:
    """Host start of each activity's launch call (-1 unknown), and the launch rows."""
    launch_row = cols.gpu("launch_row")[rows]
    return _host_column(cols, "start_ns", launch_row), launch_row


def _host_column(cols: TimelineColumns, column: str, launch_row: IntArray) -> IntArray:
    """``timeline.host[column]`` at each launch row, -1 where the row is -1."""
    if not cols.host_rows:
        return np.full(len(launch_row), -1, np.int64)
    values = cols.host(column)
    return np.where(launch_row >= 0, values[np.maximum(launch_row, 0)], -1)


def _sync_points(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """Host start times of the blocking calls made while the occurrence launched its work:
    ``sync`` calls and synchronous (non-``Async``) copies, on the launching threads,
    after the first launch and before the last."""
    host_start = cols.host("start_ns")
    return np.sort(host_start[_sync_rows(cols, rows)])


def _sync_rows(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """Rows of ``timeline.host`` of the blocking calls :func:`_sync_points` describes."""
    launched_at, launch_row = _launch_times(cols, rows)
    known = launch_row >= 0
    if not known.any() or not cols.host_rows:
        return np.empty(0, np.int64)
    first, last = int(launched_at[known].min()), int(launched_at[known].max())
    lo, hi = _host_window(cols, first + 1, last - 1)
    candidates = lo + np.flatnonzero(cols.host_flag("blocking")[lo:hi])
    if not len(candidates):
        return candidates.astype(np.int64)
    thread = cols.host_thread
    return candidates[np.isin(thread[candidates], np.unique(thread[launch_row[known]]))]


def _segments(cols: TimelineColumns, rows: IntArray) -> IntArray:
    """Which graph each activity falls in: the number of host syncs made before its launch
    (before its GPU start when its launch is unknown)."""
    points = _sync_points(cols, rows)
    if len(points) == 0:
        return np.zeros(len(rows), np.int64)
    launched_at, _ = _launch_times(cols, rows)
    at = np.where(launched_at >= 0, launched_at, cols.gpu("start_ns")[rows])
    return np.searchsorted(points, at, side="right").astype(np.int64)


def _readbacks(
    cols: TimelineColumns, rows: IntArray, segment: IntArray, last_segment: int
) -> npt.NDArray[np.bool_]:
    """Device-to-host copies that a host sync waits for (``.item()``, ``.cpu()``): those
    launched after every other activity of a graph that a sync ends. They stay eager."""
    is_dtoh = (cols.gpu("kind")[rows] == "memcpy") & (cols.gpu("copy_kind")[rows] == "DtoH")
    readback = np.zeros(len(rows), bool)
    if not is_dtoh.any() or last_segment == 0:
        return readback
    launched_at, _ = _launch_times(cols, rows)
    order_key = np.where(launched_at >= 0, launched_at, cols.gpu("start_ns")[rows])
    for k in range(last_segment):
        members = np.flatnonzero(segment == k)
        if not len(members):
            continue
        # Walk back from the last launch while the activities are device-to-host copies.
        for m in members[np.argsort(order_key[members], kind="stable")][::-1]:
            if not is_dtoh[m]:
                break
            readback[m] = True
    return readback


def _stream_keys(device: IntArray, stream: IntArray) -> IntArray:
    # Streams of different devices never share a queue: key on both.
    return (device.astype(np.int64) << 32) ^ stream.astype(np.int64)


def critical_path_ns(
    stream_key: IntArray, cost_ns: npt.ArrayLike, deps: Sequence[tuple[int, int]]
) -> float:
    """Longest path through nodes (in start order) where each waits for its stream
    predecessor and for the sources of its dependencies ``(src, dst)``, as indices."""
    return _PathLayout.of(np.asarray(stream_key), deps).longest(np.asarray(cost_ns, np.float64))


@dataclass(frozen=True)
class _PathLayout:
    """The structure :func:`critical_path_ns` walks, built once per graph and reused for
    every set of node costs (the estimate evaluates each graph six times)."""

    #: Without dependencies: each stream's nodes (independent chains that overlap).
    chains: list[IntArray]
    #: With dependencies: each node's predecessor on its stream (-1 for the first) and the
    #: sources of its dependencies; empty without dependencies.
    previous: list[int]
    sources: list[tuple[int, ...]]
    #: With dependencies: stretches of one stream that only the first node's dependencies
    #: (or the stream's start) interrupt, as node indices in order of their first node.
    pieces: list[IntArray] = field(default_factory=list)

    @classmethod
    def of(cls, stream_key: IntArray, deps: Sequence[tuple[int, int]]) -> _PathLayout:
        if not deps:
            chains = [np.flatnonzero(stream_key == k) for k in np.unique(stream_key)]
            return cls(chains=chains, previous=[], sources=[])
        incoming: dict[int, list[int]] = {}
        for src, dst in deps:
            incoming.setdefault(dst, []).append(src)
        # Each node's predecessor on its stream: neighbours in a stable sort by stream.
        by_stream = np.argsort(stream_key, kind="stable")
        same = stream_key[by_stream[1:]] == stream_key[by_stream[:-1]]
        before = np.full(len(stream_key), -1, np.int64)
        before[by_stream[1:][same]] = by_stream[:-1][same]
        previous = before.tolist()
        sources = [tuple(incoming.get(i, ())) for i in range(len(previous))]
        # A piece starts at a stream's first node and at every node with dependencies.
        starts = before < 0
        starts[list(incoming)] = True
        # Pieces pay off when they are long and every source precedes its destination.
        if int(starts.sum()) * PIECE_MIN_NODES <= len(previous) and all(
            src < dst for src, dst in deps
        ):
            pieces = np.split(by_stream, np.flatnonzero(starts[by_stream])[1:])
            pieces.sort(key=lambda piece: int(piece[0]))
            return cls([], previous, sources, pieces)
        return cls(chains=[], previous=previous, sources=sources)

    def longest(self, costs: FloatArray) -> float:
        """Longest path with node costs ``costs`` (ns)."""
        if len(costs) == 0:
            return 0.0
        if not self.previous:
            return float(max(costs[chain].sum() for chain in self.chains))
        if self.pieces:
            return self._longest_by_pieces(costs)
        # Plain Python floats: the same IEEE sums as numpy's, without per-element boxing.
        # A source not yet run (a later node) counts as finished at 0.
        finish = [0.0] * len(costs)
        for i, (before, sources, cost) in enumerate(
            zip(self.previous, self.sources, costs.tolist(), strict=True)
        ):
            ready = finish[before] if before >= 0 else 0.0
            for src in sources:
                ready = max(ready, finish[src])
            finish[i] = ready + cost
        return float(max(finish))

    def _longest_by_pieces(self, costs: FloatArray) -> float:
        """:meth:`longest` one piece at a time: a piece's finish times are the running sum
        of its costs from its first node's ready time (``np.cumsum`` adds in order, the same
        IEEE sums as the node-by-node walk)."""
        finish = np.zeros(len(costs))
        for piece in self.pieces:
            first = int(piece[0])
            before = self.previous[first]
            ready = float(finish[before]) if before >= 0 else 0.0
            for src in self.sources[first]:
                ready = max(ready, float(finish[src]))
            running = np.empty(len(piece) + 1)
            running[0] = ready
            running[1:] = costs[piece]
            finish[piece] = np.cumsum(running)[1:]
        return float(finish.max())


def infer_dependencies(
    timeline: Timeline, rows: IntArray, *, columns: TimelineColumns | None = None
) -> list[tuple[int, int]]:
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
    cols = columns or TimelineColumns(timeline)
    n = len(rows)
    if n < 2:
        return []
    keys = _stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    if (keys == keys[0]).all():  # one stream: nothing to wait for across streams
        return []
    start = cols.gpu("start_ns")[rows]
    end = cols.gpu("end_ns")[rows]
    launched_at, launch_row = _launch_times(cols, rows)
    submitted_by = _host_column(cols, "end_ns", launch_row)

    deps = set(_event_dependencies(cols, keys, launch_row, launched_at, start, end))
    deps.update(_timing_dependencies(keys, start, end, submitted_by))
    return sorted(deps, key=lambda d: (d[1], d[0]))


def _timing_dependencies(
    keys: IntArray, start: IntArray, end: IntArray, submitted_by: IntArray
) -> list[tuple[int, int]]:
    """The timing rule of :func:`infer_dependencies`, for every activity at once.

    For each ``j``, the candidates are the activities ending in
    ``[start_j - DEPENDENCY_WINDOW_NS, start_j + CLOCK_SLACK_NS]`` on another stream and
    started before ``j``; the latest-ending one (last in stable end order) is ``j``'s
    dependency when ``j``'s stream was idle when it ended and ``j`` had been launched."""
    n = len(keys)
    by_end = np.argsort(end, kind="stable")
    sorted_end = end[by_end]
    lo = np.searchsorted(sorted_end, start - DEPENDENCY_WINDOW_NS, side="left")
    hi = np.searchsorted(sorted_end, start + CLOCK_SLACK_NS, side="right")
    counts = np.maximum(hi - lo, 0)
    # Every (j, candidate) pair, candidates of one j in increasing end order.
    j_of = np.repeat(np.arange(n), counts)
    first_pair = np.cumsum(counts) - counts
    i_of = by_end[np.arange(int(counts.sum())) - np.repeat(first_pair - lo, counts)]
    valid = (i_of != j_of) & (keys[i_of] != keys[j_of]) & (start[i_of] < start[j_of])
    j_of, i_of = j_of[valid], i_of[valid]
    latest = np.r_[j_of[1:] != j_of[:-1], True] if len(j_of) else np.zeros(0, bool)
    j_of, i_of = j_of[latest], i_of[latest]
    # B was busy until after i ended, or j was not yet launched when i ended: no dependency.
    held = end[i_of] > _stream_idle_since(keys, end)[j_of]
    launched = (submitted_by[j_of] < 0) | (submitted_by[j_of] <= end[i_of] + CLOCK_SLACK_NS)
    keep = held & launched
    return list(zip(i_of[keep].tolist(), j_of[keep].tolist(), strict=True))


def _stream_idle_since(keys: IntArray, end: IntArray) -> IntArray:
    """Per activity, the latest end of the activities before it (in index order) on its
    stream; the smallest int64 for a stream's first activity."""
    idle_since = np.full(len(keys), np.iinfo(np.int64).min, np.int64)
    for key in np.unique(keys):
        on = np.flatnonzero(keys == key)
        idle_since[on[1:]] = np.maximum.accumulate(end[on])[:-1]
    return idle_since


def _event_dependencies(
    cols: TimelineColumns,
    keys: IntArray,
    launch_row: IntArray,
    launched_at: IntArray,
    start: IntArray,
    end: IntArray,
) -> list[tuple[int, int]]:
    """The event rule of :func:`infer_dependencies`, vectorized over the wait calls."""
    known = np.flatnonzero(launch_row >= 0)
    if not len(known):
        return []
    first, last = int(launched_at[known].min()), int(launched_at[known].max())
    lo, hi = _host_window(cols, first, last)
    waits = np.flatnonzero(cols.host_flag("wait")[lo:hi])
    if not len(waits):
        return []
    is_record = cols.host_flag("record")[lo:hi]
    pid = cols.host("pid")[lo:hi]
    tid = cols.host("tid")[lo:hi]
    call_start = cols.host("start_ns")[lo:hi]
    launch_pid = cols.host("pid")[launch_row[known]]
    launch_tid = cols.host("tid")[launch_row[known]]
    by_launch = known[np.argsort(launched_at[known], kind="stable")]
    launch_times = launched_at[by_launch]

    # The waits of threads that launched the occurrence's work, and the activity each
    # holds back: the next one launched after the call.
    cut_at = waits.copy()
    launching = np.zeros(len(waits), bool)
    for p, t in set(zip(pid[waits].tolist(), tid[waits].tolist(), strict=True)):
        if not ((launch_pid == p) & (launch_tid == t)).any():
            continue
        mine = np.flatnonzero((pid[waits] == p) & (tid[waits] == t))
        launching[mine] = True
        records = np.flatnonzero(is_record & (pid == p) & (tid == t))
        # The thread's last record before the wait; the wait itself when none precedes it.
        previous = np.searchsorted(records, waits[mine], side="left") - 1
        has_record = previous >= 0
        cut_at[mine[has_record]] = records[previous[has_record]]
    after = np.searchsorted(launch_times, call_start[waits], side="right")
    used = launching & (after < len(by_launch))
    cutoff = call_start[cut_at]
    dst = by_launch[after[used]]
    before = np.searchsorted(launch_times, cutoff[used], side="left")

    # Per other stream, its last activity launched before the cutoff; one still running
    # when dst started cannot be what dst waited for.
    deps: list[tuple[int, int]] = []
    launch_keys = keys[by_launch]
    for key in np.unique(launch_keys):
        on_stream = np.flatnonzero(launch_keys == key)
        last_pos = np.searchsorted(on_stream, before, side="left") - 1
        has = last_pos >= 0
        src = by_launch[on_stream[np.maximum(last_pos, 0)]]
        keep = has & (keys[dst] != key) & (end[src] <= start[dst] + CLOCK_SLACK_NS) & (src < dst)
        deps.extend(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))
    return deps


def _host_window(cols: TimelineColumns, first_ns: int, last_ns: int) -> tuple[int, int]:
    """Row range of ``timeline.host`` (sorted by start) whose calls start in
    ``[first_ns, last_ns]``."""
    host_start = cols.host("start_ns")
    lo = int(np.searchsorted(host_start, first_ns, side="left"))
    hi = int(np.searchsorted(host_start, last_ns, side="right"))
    return lo, hi


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
    launched_at, launch_row = _launch_times(cols, rows)
    launch_end = _host_column(cols, "end_ns", launch_row)
    known = launch_row >= 0
    speed = host_speedup(timeline, calibration)
    duration = cols.gpu("end_ns")[rows] - cols.gpu("start_ns")[rows]
    keys = _stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    incoming: dict[int, list[int]] = {}
    for src, dst in infer_dependencies(timeline, rows, columns=cols):
        incoming.setdefault(dst, []).append(src)

    t0 = int(launched_at[known].min()) if known.any() else 0
    sync_rows = _sync_rows(cols, rows)
    order = np.argsort(cols.host("start_ns")[sync_rows], kind="stable")
    sync_start = cols.host("start_ns")[sync_rows][order]
    sync_end = cols.host("end_ns")[sync_rows][order]
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


def _median(values: Sequence[int]) -> int:
    return int(round(float(np.median(np.asarray(values, np.float64)))))


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)
