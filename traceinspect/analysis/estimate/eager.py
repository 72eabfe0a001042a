"""The eager run of a region occurrence as it would go without the profiler.

One simulated timeline (:class:`EagerRun`) serves three readers: the eager time savings are
computed from, the GPU gap shares the verdict reads, and — through the same GPU work — the
replay estimate it is compared with.

**Host.** The profiled trace shows when the host issued each launch; without the profiler
every stretch of host time between two traced points is shorter by what the profiler added
inside it (:class:`ProfilerCost`): a fixed cost per recorded Python function call
(``with_stack=True``: the profiler's Python tracer), per recorded CPU operator (more when
input shapes are recorded) and per CUDA runtime or driver call (CUPTI's callback and
activity record). Time outside those events (the program's own work) is kept. The Python
tracer's cost is removed first; what is left of a stretch then never shrinks below
:attr:`ProfilerCost.floor_frac` of itself, so a trace with stacks comes out as the same run
traced without them would. A process whose host ran slow while profiled is brought to the
pace of a typical one (:func:`host_speed`). Nsight Systems traces are taken as traced
(their CUDA API tracing costs the host far less than torch.profiler's).

**GPU.** Each activity starts once its (deflated) launch call has returned, its stream is
free and the activities it depends on (:func:`infer_dependencies`) are done; durations are
the traced ones. Where kernels of several streams then run beside each other for more than
a sliver of their segment, they share the device as the replay's schedule has them
(:class:`SharedDevice`): each runs its time alone, waits for room and slows beside matrix
kernels. A blocking host call (a synchronize, a synchronous copy) waits for the
simulated GPU to drain and costs ``sync_ns``; the caller's final synchronize adds
``sync_ns`` after the later of the host and the GPU finishing.

**Host ahead of the GPU.** That is a synchronized occurrence, the GPU free when its host
begins. A loop with no synchronize between its steps (a training loop, its host a queue's
length ahead) runs otherwise: where an occurrence of some region began before that
region's previous occurrence had finished on the GPU, it and the regions nested inside it
ran with the host ahead (:func:`traceinspect.analysis.diagnose.host_ahead_spans`: read
from the loop, not guessed from a busy device), and where a region's launches found the
launch queue half full or more
(:data:`~traceinspect.analysis.diagnose.THROTTLED_QUEUE_DEPTH`), its host was held back
by the GPU, its traced time the GPU's pace. Such an occurrence whose GPU was still
busy with earlier work from the moment its host began until its first activity started
(at least :data:`BACKLOG_BUSY_FRAC` of that lead), and which holds no blocking call, stays
ahead without the profiler (the host only gets faster): the GPU never waits for its
launches, so its traced pace is its unprofiled one. It (:attr:`EagerRun.pipelined`) takes
the longer of its simulated host time and its GPU time fed without pause — the traced
window less the gaps the host caused (the next activity's launch call still running when
the GPU went idle) and those the device spent on other work — plus ``sync_ns``, as its
replay estimate is charged. A loop whose host stays a few steps ahead without filling the
queue stays synchronized: so are the validation recordings, whose profiled steps run back
to back while each is timed synchronized.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Final

import numpy as np
import numpy.typing as npt

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
from traceinspect.analysis.estimate.schedule import (
    CAPACITY,
    GraphSchedule,
    Packing,
    fp32_bound,
    slowing_roles,
    slows_any,
    solo_durations,
)
from traceinspect.analysis.intervals import covered_ns, merge
from traceinspect.calibration import Calibration, ProfilerCost
from traceinspect.model import Timeline

#: A ``host_launch`` gap longer than this is the host doing other work (Python logic, data
#: loading, autotuning), not the cost of issuing a launch (tens of µs even when profiled).
#: One threshold for the profiled timeline (:mod:`traceinspect.analysis.gaps`) and the
#: simulated unprofiled one.
LONG_HOST_GAP_NS: Final = 200_000

#: The median kernel launch call of a typical profiled process (torch.profiler, the H200
#: validation set): the median over the 453 fresh-process recordings of each trace's median
#: launch call is 7.07 µs (4.95-9.73, 5th to 95th percentile). The measured unprofiled eager
#: p50 comes from a fresh process of ordinary pace, but the profiled one's host time reads
#: slower the slower its host ran: the eager time from the trace read a median +0 % where
#: its launch calls took under 7 µs, +12 to +22 % at 7-10 µs and +100 % from 12 µs.
TYPICAL_LAUNCH_CALL_NS: Final = 7_000
#: A trace needs this many launch calls for their median to say how fast its host ran.
MIN_LAUNCHES_FOR_SPEED: Final = 10

#: A small ``copy_`` issued from Python (one static input of a graphed step) takes this many
#: times the profiled trace's median kernel launch call on the same host, where that host is
#: fast: fitted on the copy probes of ``traceinspect profile`` (each recording's
#: ``host_costs``) against its eager trace's median launch call, over the recordings of the
#: H200 validation set before ``holdout25`` whose median launch call was under 7 µs (57: the
#: median ratio 1.25, quartiles 1.13-1.40). The recordings after it read the same (60:
#: 1.27), and so do the H100's (36: 1.23). On slower traces the ratio falls (1.08 at 8-9 µs,
#: 0.92 at 10-12 µs): their launch calls are inflated by the profiler, their copies are not.
#: Predicted from the trace alone, the pre-``holdout25`` recordings' graphed time came
#: within ±10 % on 267 of 296 (259 with the calibrated 9.2 µs for every host), median |error|
#: 3.6 % (3.8 %); ``holdout25`` to ``holdout36`` 144 of 161 (145), 2.6 % (2.7 %); the H100's
#: 43 of 43 (43), 2.0 % (3.3 %). Recorded after it, ``holdout37`` to ``holdout39`` (and their
#: reruns, 48 recordings): 48 within ±10 %, median 1.4 % (1.4 % with 9.2 µs for every host;
#: ``holdout37``'s lease copied slowly, 6.7-11.4 µs, and read 2.1 % and 1.6 % without it).
COPY_PER_LAUNCH_CALL: Final = 1.25

#: Share of the lead from an occurrence's first host point to its first GPU activity that
#: the device must spend busy with earlier work for the occurrence to count as queued
#: behind it (:attr:`EagerRun.pipelined`): the kernels between queued ones leave gaps of a
#: few µs, which must not break the backlog.
BACKLOG_BUSY_FRAC: Final = 0.9

#: Share of the recorded CPU operators that must carry input shapes for a trace to count as
#: recorded with ``record_shapes=True`` (operators without tensor inputs carry none).
SHAPES_RECORDED_SHARE: Final = 0.2


@dataclass(frozen=True)
class EagerRun:
    """One occurrence simulated without the profiler (ns from its first host point)."""

    eager_ns: int
    #: GPU busy (union of activities) and window (first start to last end), simulated.
    busy_ns: int
    window_ns: int
    #: Idle inside the window, simulated, by what ended it: the host's next launch
    #: (``host_launch``), a host synchronization (``sync``), anything else (``other``).
    idle_ns: Mapping[str, int]
    #: The ``host_launch`` idle in gaps longer than :data:`LONG_HOST_GAP_NS`, simulated:
    #: the GPU waiting while the host does work of its own, not launching.
    long_host_ns: int
    #: Host time of the occurrence as traced and as simulated (its own host work only).
    host_traced_ns: int
    host_ns: int
    #: Whether the occurrence was queued behind earlier GPU work (the host ahead), and so
    #: taken at the GPU's traced pace (the module's *Host ahead of the GPU*).
    pipelined: bool = False


def profiler_cost_for(timeline: Timeline, calibration: Calibration) -> ProfilerCost | None:
    """What the profiler added to host time in ``timeline``; ``None`` when nothing is
    removed (Nsight Systems traces)."""
    if timeline.meta.format != "kineto":
        return None
    return calibration.profiler_cost


def median_launch_call_ns(timeline: Timeline) -> float | None:
    """The median host duration of the trace's kernel launch calls; ``None`` where it holds
    fewer than ``MIN_LAUNCHES_FOR_SPEED`` of them (too few to say how fast its host ran)."""
    host = timeline.host
    launches = host[host["kind"] == "launch"]
    if len(launches) < MIN_LAUNCHES_FOR_SPEED:
        return None
    return float(np.median(launches["end_ns"].to_numpy() - launches["start_ns"].to_numpy()))


def host_speed(median_launch_ns: float | None) -> float:
    """How much of its traced host time (what is left once the profiler's costs are taken
    off) a step keeps when run at a typical process's pace: ``TYPICAL_LAUNCH_CALL_NS`` over
    the trace's median launch call (:func:`median_launch_call_ns`), at most 1 (a fast
    process is not sped up further), 1 where the trace holds fewer than
    ``MIN_LAUNCHES_FOR_SPEED`` launch calls (``None``).

    Chosen on half of the H200 validation set, the 296 fresh-process recordings before
    ``holdout25``: scaling each trace's host stretches by ``(T / median) ** b`` where slower,
    for T of 6.5, 7, 7.5 and 8 µs and b of 0.5 and 1, all eight read the saving better than
    no scaling (within 15 points of the measured one on 278-285 of the 296, against 276;
    inside its range on 277-281, against 275). T = 7 µs (the median process) with b = 1
    reads it within 15 points on 282 and inside its range on 281, the eager time's median
    |log error| 0.151 (0.152 unscaled); 6.5 µs reads the saving best (285) and the eager
    time worst (0.157). On the other half, the 157 recordings of ``holdout25`` to
    ``holdout35``: within 15 points on 144 against 138, inside the range on 146 against 145,
    the eager time's median |log error| 0.152 against 0.158. Those recordings were not
    fitted on, but the trend that led here (eager error against the launch call's median)
    was first seen over all 453."""
    if median_launch_ns is None or median_launch_ns <= TYPICAL_LAUNCH_CALL_NS:
        return 1.0
    return TYPICAL_LAUNCH_CALL_NS / median_launch_ns


def paced_copy_ns(median_launch_ns: float | None) -> float | None:
    """Host time of a small warm ``copy_`` from Python on the host that ran a torch.profiler
    trace whose median launch call took ``median_launch_ns``: :data:`COPY_PER_LAUNCH_CALL`
    times it (``None`` where the trace holds too few launch calls). The estimate charges
    it where it is below the calibration's copy cost (:meth:`Calibration.with_copy_pace`):
    a fast host shows in its launch calls and copies alike, while a slow profiled one is
    mostly the profiler's doing (:func:`host_speed`) and keeps the calibrated cost."""
    if median_launch_ns is None:
        return None
    return COPY_PER_LAUNCH_CALL * median_launch_ns


def paced_calibration(
    timeline: Timeline, calibration: Calibration, columns: TimelineColumns
) -> Calibration:
    """``calibration`` with its input copies' host cost brought down to the pace of the
    host that ran ``timeline`` (:func:`paced_copy_ns`), for torch.profiler traces; as it
    is for Nsight Systems traces and where the copy cost was measured."""
    if profiler_cost_for(timeline, calibration) is None:
        return calibration
    warm = paced_copy_ns(columns.median_launch_call_ns)
    return calibration if warm is None else calibration.with_copy_pace(warm)


def shapes_recorded(timeline: Timeline) -> bool:
    """Whether the trace was recorded with ``record_shapes=True``."""
    shapes = timeline.cpu_ops["input_shapes"]
    return bool(len(shapes)) and float((shapes != "").mean()) >= SHAPES_RECORDED_SHARE


class HostClock:
    """Maps traced host time of one thread set to simulated unprofiled host time.

    Traced points (``points``, sorted) cut the host time into stretches; each stretch
    shrinks by the profiler's cost of the Python calls, operators and CUDA calls that
    started in it."""

    def __init__(
        self,
        points: IntArray,
        op_starts: IntArray,
        call_starts: IntArray,
        python_starts: IntArray,
        cost: ProfilerCost | None,
        shapes: bool,
        speed: float = 1.0,
    ) -> None:
        """``speed``: :func:`host_speed`, applied with the profiler's ``cost`` only."""
        xs = np.unique(points)
        self.x = xs.astype(np.float64)
        traced = np.diff(xs).astype(np.float64)
        if cost is None or len(xs) < 2:
            simulated = traced
        else:
            ops = np.diff(np.searchsorted(op_starts, xs, side="left")).astype(np.float64)
            calls = np.diff(np.searchsorted(call_starts, xs, side="left")).astype(np.float64)
            frames = np.diff(np.searchsorted(python_starts, xs, side="left")).astype(np.float64)
            per_op = cost.op_ns + (cost.op_shapes_ns if shapes else 0.0)
            # The Python tracer's cost comes off first: the floor bounds what the operator
            # and call costs take from a stretch as a trace without stacks shows it.
            unstacked = np.maximum(traced - frames * cost.python_ns, 0.0)
            added = ops * per_op + calls * cost.call_ns
            simulated = np.maximum(unstacked * cost.floor_frac, unstacked - added) * speed
        self.y = np.concatenate([[0.0], np.cumsum(simulated)])

    def at(self, traced_ns: npt_like) -> FloatArray:
        """Simulated time of traced instants (flat beyond the last point's slope: 1)."""
        t = np.asarray(traced_ns, np.float64)
        inside = np.interp(t, self.x, self.y)
        after = t > self.x[-1]
        out: FloatArray = np.where(after, self.y[-1] + (t - self.x[-1]), inside)
        return out


npt_like = FloatArray | IntArray | float | int


def simulate_eager(
    timeline: Timeline,
    rows: IntArray,
    calibration: Calibration,
    *,
    start_ns: int | None = None,
    end_ns: int | None = None,
    wall_ns: int | None = None,
    columns: TimelineColumns | None = None,
    host_ahead: bool = False,
) -> EagerRun:
    """Simulate one synchronized occurrence without the profiler.

    ``rows`` are the occurrence's GPU activities; ``start_ns``/``end_ns`` its host interval
    (the annotation) — by default from its first launch for ``wall_ns`` (or to the last
    launch call's end). ``host_ahead``: the occurrence ran where the host was a step ahead
    of the GPU (:func:`traceinspect.analysis.diagnose.host_ahead_spans`); queued behind
    earlier work (:func:`backlog`), it is then taken at the GPU's pace."""
    prepared = EagerSimulation.of(
        timeline,
        rows,
        start_ns=start_ns,
        end_ns=end_ns,
        wall_ns=wall_ns,
        columns=columns,
        host_ahead=host_ahead,
    )
    return prepared.run(profiler_cost_for(timeline, calibration), calibration.sync_ns)


@dataclass(frozen=True)
class EagerSimulation:
    """What :func:`simulate_eager` reads from the trace, gathered once; :meth:`run` then
    simulates it for any profiler cost (the validation fits the costs this way)."""

    launch_end: IntArray  # per activity (start order), -1 unknown
    known: npt.NDArray[np.bool_]
    launched_at: IntArray
    duration: FloatArray
    keys: IntArray
    #: Per activity: a copy between host and device (a gap it ends waited on the host's
    #: transfer, ``copy`` in the profiled view, not on its own work).
    transfer: npt.NDArray[np.bool_]
    incoming: Mapping[int, list[int]]
    sync_start: IntArray
    sync_end: IntArray
    t0: int
    t1: int
    points: IntArray
    op_starts: IntArray
    call_starts: IntArray
    python_starts: IntArray
    shapes: bool
    #: :func:`host_speed` of the trace.
    speed: float
    #: Where the activities run on several streams: their device shares, and how they share
    #: the device (:class:`SharedDevice`, built the first time a segment's kernels run
    #: beside each other); else None.
    share: FloatArray | None = None
    shared: Callable[[], SharedDevice] | None = None
    #: Where the occurrence was queued behind earlier GPU work (:func:`backlog`): its GPU
    #: time fed without pause and its GPU busy time, as traced; else None.
    fed: tuple[int, int] | None = None

    @classmethod
    def of(
        cls,
        timeline: Timeline,
        rows: IntArray,
        *,
        start_ns: int | None = None,
        end_ns: int | None = None,
        wall_ns: int | None = None,
        columns: TimelineColumns | None = None,
        host_ahead: bool = False,
    ) -> EagerSimulation:
        """``start_ns``/``end_ns``: the occurrence's host interval; without them it starts at
        its first launch and lasts ``wall_ns`` (else ends with its last launch call)."""
        cols = columns or TimelineColumns(timeline)
        rows = np.asarray(rows, np.int64)
        rows = rows[np.argsort(cols.gpu("start_ns")[rows], kind="stable")]
        launched_at, launch_row = launch_times(cols, rows)
        launch_end = host_column(cols, "end_ns", launch_row)
        known = launch_row >= 0
        incoming: dict[int, list[int]] = {}
        for src, dst in infer_dependencies(timeline, rows, columns=cols):
            incoming.setdefault(dst, []).append(src)
        # Without any launch record (a cut Nsight window) the host side starts with the
        # occurrence, else with its first GPU activity.
        fallback = int(start_ns) if start_ns is not None else int(cols.gpu("start_ns")[rows[0]])
        first = int(launched_at[known].min()) if known.any() else fallback
        last = int(launch_end[known].max()) if known.any() else first
        t0 = first if start_ns is None else min(int(start_ns), first)
        if end_ns is None and wall_ns is not None:
            end_ns = t0 + int(wall_ns)
        t1 = last if end_ns is None else max(int(end_ns), last)
        blocking = sync_rows(cols, rows)
        order = np.argsort(cols.host("start_ns")[blocking], kind="stable")
        sync_start = cols.host("start_ns")[blocking][order]
        sync_end = cols.host("end_ns")[blocking][order]
        threads = np.unique(cols.host_thread[launch_row[known]]).astype(np.int64)
        op_starts, call_starts, python_starts = cols.thread_event_starts(threads, t0, t1)
        points = np.concatenate(
            [[t0, t1], launched_at[known], launch_end[known], sync_start, sync_end]
        ).astype(np.int64)
        copy_kind = cols.gpu("copy_kind")[rows]
        keys = stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
        share = cols.room_share(rows) if len(np.unique(keys)) > 1 else None
        fed = (
            backlog(cols, rows, t0, launch_end, known)
            if host_ahead and not len(sync_start)
            else None
        )
        return cls(
            launch_end=launch_end,
            known=known,
            launched_at=launched_at,
            duration=(cols.gpu("end_ns")[rows] - cols.gpu("start_ns")[rows]).astype(np.float64),
            keys=keys,
            transfer=(cols.gpu("kind")[rows] == "memcpy")
            & ((copy_kind == "HtoD") | (copy_kind == "DtoH")),
            incoming=incoming,
            sync_start=sync_start,
            sync_end=sync_end,
            t0=t0,
            t1=t1,
            points=points,
            op_starts=op_starts,
            call_starts=call_starts,
            python_starts=python_starts,
            shapes=cols.shapes_recorded,
            speed=cols.host_speed,
            share=share,
            shared=None if share is None else cache(partial(SharedDevice.of, cols, rows, share)),
            fed=fed,
        )

    def run(self, cost: ProfilerCost | None, sync_ns: int) -> EagerRun:
        """The simulated run with the profiler's ``cost`` removed (``None``: as traced)."""
        clock = HostClock(
            self.points,
            self.op_starts,
            self.call_starts,
            self.python_starts,
            cost,
            self.shapes,
            self.speed,
        )
        if self.fed is not None:
            return self._run_pipelined(float(clock.at(self.t1)), self.fed, sync_ns)
        known, launched_at, sync_start = self.known, self.launched_at, self.sync_start
        n = len(self.duration)
        # Which stretch between syncs each launch falls in; unlaunched activities go first.
        segment = np.where(known, np.searchsorted(sync_start, launched_at, side="right"), 0)
        finish = np.zeros(n)
        begin = np.zeros(n)
        ready_all = np.zeros(n)
        stream_free: dict[int, float] = {}
        gpu_done = 0.0
        shift = 0.0  # simulated host time lost waiting in syncs so far
        sync_spans: list[tuple[float, float]] = []
        for k in range(len(sync_start) + 1):
            members = np.flatnonzero(segment == k)
            if len(members):
                members = members[np.argsort(launched_at[members], kind="stable")]
                ready = np.where(known[members], clock.at(self.launch_end[members]) + shift, shift)
                ready_all[members] = ready
                before = dict(stream_free) if self.shared is not None else {}
                _run_gpu(
                    members, ready, self.keys, self.duration, self.incoming, stream_free, finish
                )
                begin[members] = finish[members] - self.duration[members]
                if (
                    self.share is not None
                    and self.shared is not None
                    and not _sliver(self.share[members], begin[members], finish[members])
                ):
                    stream_free.clear()
                    stream_free.update(before)
                    self.shared().run(
                        members, ready, self.keys, self.incoming, stream_free, begin, finish
                    )
                gpu_done = max(gpu_done, float(finish[members].max()))
            if k < len(sync_start):
                host = float(clock.at(int(sync_start[k]))) + shift
                resumed = max(host, gpu_done) + sync_ns
                sync_spans.append((host, resumed))
                shift = resumed - float(clock.at(int(self.sync_end[k])))
        host_end = float(clock.at(self.t1)) + shift
        eager = int(round(max(host_end, gpu_done))) + sync_ns
        busy, window, idle, long_host = _gaps(begin, finish, ready_all, sync_spans, self.transfer)
        return EagerRun(
            eager_ns=eager,
            busy_ns=busy,
            window_ns=window,
            idle_ns=idle,
            long_host_ns=long_host,
            host_traced_ns=self.t1 - self.t0,
            host_ns=int(round(float(clock.at(self.t1)))),
        )

    def _run_pipelined(self, host_ns: float, fed: tuple[int, int], sync_ns: int) -> EagerRun:
        """The occurrence queued behind earlier GPU work: the longer of its host time and
        its GPU time fed without pause (the GPU waits on the host for the difference)."""
        fed_ns, busy_ns = fed
        window = int(round(max(host_ns, fed_ns)))
        return EagerRun(
            eager_ns=window + sync_ns,
            busy_ns=busy_ns,
            window_ns=window,
            idle_ns={
                "host_launch": max(window - fed_ns, 0),
                "sync": 0,
                "other": max(fed_ns - busy_ns, 0),  # the window is never shorter than fed
            },
            long_host_ns=0,
            host_traced_ns=self.t1 - self.t0,
            host_ns=int(round(host_ns)),
            pipelined=True,
        )


def backlog(
    cols: TimelineColumns,
    rows: IntArray,
    t0: int,
    launch_end: IntArray,
    known: npt.NDArray[np.bool_],
) -> tuple[int, int] | None:
    """``(fed_ns, busy_ns)`` of an occurrence (``rows`` sorted by start, host from ``t0``)
    queued behind earlier GPU work — its device busy for at least :data:`BACKLOG_BUSY_FRAC`
    of the lead from ``t0`` to its first activity — else None. ``fed_ns``: its traced GPU
    window less the gaps its host caused (the next activity's launch call, ``launch_end``,
    still running when the GPU went idle) and those the device spent on other work
    (``outside_work``, as :mod:`traceinspect.analysis.gaps` tells them); ``busy_ns``: the
    union of its activities."""
    from traceinspect.analysis.gaps import OUTSIDE_WORK_SHARE  # gaps imports this module

    starts = cols.gpu("start_ns")[rows]
    ends = cols.gpu("end_ns")[rows]
    first = int(starts[0])
    lead = first - t0
    if lead <= 0:
        return None
    blocks = cols.device_blocks(int(cols.gpu("device")[rows[0]]))
    before = covered_ns(*blocks, np.array([t0]), np.array([first]))
    if int(before[0]) < BACKLOG_BUSY_FRAC * lead:
        return None
    block_starts, block_ends = merge(starts, ends)
    gap_start, gap_end = block_ends[:-1], block_starts[1:]
    nxt = np.searchsorted(starts, gap_end, side="left")  # the activity ending each gap
    by_host = known[nxt] & (launch_end[nxt] > gap_start)
    length = gap_end - gap_start
    elsewhere = covered_ns(*blocks, gap_start, gap_end) >= OUTSIDE_WORK_SHARE * length
    window = int(block_ends[-1] - block_starts[0])
    not_its_own = int(length[by_host | elsewhere].sum())
    return window - not_its_own, int((block_ends - block_starts).sum())


#: A segment whose kernels run beside others (a second kernel holding room while one runs)
#: for at most this share of its span keeps the run at each kernel's own pace
#: (:meth:`SharedDevice.run`): sharing could delay it by no more than that.
SHARED_TOLERANCE_FRAC: Final = 0.015


def _sliver(share: FloatArray, starts: FloatArray, ends: FloatArray) -> bool:
    """Whether kernels holding room (``share``) run beside one another, from ``starts`` to
    ``ends``, for at most :data:`SHARED_TOLERANCE_FRAC` of their span: sharing the device
    could then delay them by no more than that, and each keeps its own pace (a 200 MB
    eight-rank trace: 77 segments of some 1,000 kernels, beside each other for 0.4-1.2 % of
    their span)."""
    on = share > 0
    if int(on.sum()) < 2:
        return True
    times, running = _held(np.ones(int(on.sum())), starts[on], ends[on])
    beside = float((np.maximum(running[:-1] - 1, 0) * np.diff(times)).sum())
    return beside <= SHARED_TOLERANCE_FRAC * float(ends.max() - starts.min())


def _held(
    weight: FloatArray, starts: FloatArray, ends: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The instants at which activities of ``weight`` start or end, in order (ends before
    starts at one instant), and the weight running from each to the next."""
    times = np.concatenate([starts, ends])
    step = np.concatenate([weight, -weight])
    order = np.lexsort((step, times))
    out: FloatArray = np.cumsum(step[order])
    return times[order], out


@dataclass(frozen=True)
class SharedDevice:
    """How an occurrence's activities on several streams share the device, as the replay's
    schedule has them (:mod:`.schedule`): a kernel waits for room, a light kernel beside
    matrix kernels and matrix kernels beside each other run slower, and each runs its time
    alone (its traced time less what sharing the device added in the trace). Without it
    the simulated eager run let kernels of two streams overlap at their traced pace, each
    as if alone: two device-filling GEMM chains ran in the time of one, and the eager time
    of a step of long fp32 GEMMs on three streams read 7-27 % short."""

    share: FloatArray
    #: The matrix kernels where they slow others (:func:`slowing_roles`), else None.
    matrix: npt.NDArray[np.bool_] | None
    packing: Packing
    solo: FloatArray

    @classmethod
    def of(cls, cols: TimelineColumns, rows: IntArray, share: FloatArray) -> SharedDevice:
        """``rows``: the occurrence's GPU activities in start order, holding ``share``
        (:meth:`TimelineColumns.room_share`) of the device."""
        start, end = cols.gpu("start_ns")[rows], cols.gpu("end_ns")[rows]
        blocks, resident, sms = (a[rows] for a in cols.occupancy)
        matrix = cols.matrix[rows]
        fp32 = fp32_bound(cols, rows)
        streaming = cols.streaming[rows]
        packing = Packing(blocks, resident, sms, matrix, fp32=fp32, streaming=streaming)
        mixed = matrix if slowing_roles(matrix, share) is not None else None
        solo = solo_durations(
            start, end, share, mixed, cover=packing.cover(share), fp32=fp32
        )
        return cls(share=share, matrix=mixed, packing=packing, solo=solo)

    def _unshared(self, members: IntArray, starts: FloatArray, ends: FloatArray) -> bool:
        """Whether ``members`` running from ``starts`` to ``ends`` never hold more than the
        device at once and no matrix kernel among them slows another kernel."""
        share = self.share[members]
        if _sliver(share, starts, ends):
            return True
        on = share > 0
        if float(_held(share[on], starts[on], ends[on])[1].max()) > CAPACITY + 1e-9:
            return False
        if self.matrix is None:
            return True
        roles = slowing_roles(self.matrix[members], share)
        return roles is None or not slows_any(starts, ends, roles[0], roles[1])

    def run(
        self,
        members: IntArray,
        ready: FloatArray,
        keys: IntArray,
        incoming: Mapping[int, list[int]],
        stream_free: dict[int, float],
        begin: FloatArray,
        finish: FloatArray,
    ) -> None:
        """Run ``members`` (in launch order, ready at ``ready``) as :func:`_run_gpu` does,
        sharing the device; fills ``begin`` and ``finish``, updates ``stream_free``."""
        # Each at its own pace first: where the kernels running at once then never hold
        # more than the device and none slows another, none waits or slows, and that run
        # stands (most segments: the host is the bottleneck).
        free = dict(stream_free)
        _run_gpu(members, ready, keys, self.solo, incoming, free, finish)
        ends = finish[members]
        starts = ends - self.solo[members]
        if self._unshared(members, starts, ends):
            begin[members] = starts
            stream_free.update(free)
            return
        local = {int(j): k for k, j in enumerate(members.tolist())}
        member_keys = keys[members]
        not_before = np.maximum(
            ready, [stream_free.get(int(k), 0.0) for k in member_keys.tolist()]
        )
        deps: list[tuple[int, int]] = []
        for j, k in local.items():
            for i in incoming.get(j, ()):
                if i in local:
                    deps.append((local[i], k))
                elif finish[i] > not_before[k]:
                    not_before[k] = finish[i]
        schedule = GraphSchedule.of(
            member_keys,
            self.share[members],
            deps,
            matrix=None if self.matrix is None else self.matrix[members],
            packing=self.packing.take(members),
        )
        starts, ends = schedule.launched_spans_ns(self.solo[members], not_before)
        begin[members] = starts
        finish[members] = ends
        for key in np.unique(member_keys).tolist():
            stream_free[int(key)] = float(ends[member_keys == key].max())


def _gaps(
    start: FloatArray,
    end: FloatArray,
    ready: FloatArray,
    sync_spans: list[tuple[float, float]],
    transfer: npt.NDArray[np.bool_],
) -> tuple[int, int, dict[str, int], int]:
    """Busy union, window, idle by cause and long host idle of the simulated activities: a
    gap ended by an activity that started as soon as its launch had returned waited for the
    host (``host_launch``, or ``sync`` when the host was in a sync then). The long host idle
    is the ``host_launch`` idle in gaps longer than :data:`LONG_HOST_GAP_NS` ended by a
    launch other than a host↔device copy (``transfer``): the host's own work, counted as
    the profiled view (:mod:`traceinspect.analysis.gaps`) counts it."""
    idle = {"host_launch": 0, "sync": 0, "other": 0}
    if len(start) == 0:
        return 0, 0, idle, 0
    order = np.argsort(start, kind="stable")
    s, e, r, copy = start[order], end[order], ready[order], transfer[order]
    reach = np.maximum.accumulate(e)
    gap = np.maximum(0.0, s[1:] - reach[:-1])
    host_limited = np.abs(s[1:] - r[1:]) < 1.0
    in_sync = np.zeros(len(gap), bool)
    for lo, hi in sync_spans:
        in_sync |= (reach[:-1] < hi) & (s[1:] > lo)
    idle["sync"] = int(round(gap[host_limited & in_sync].sum()))
    host_wait = host_limited & ~in_sync
    idle["host_launch"] = int(round(gap[host_wait].sum()))
    idle["other"] = int(round(gap[~host_limited].sum()))
    long_host = int(round(gap[host_wait & ~copy[1:] & (gap > LONG_HOST_GAP_NS)].sum()))
    window = float(reach[-1] - s[0])
    busy = window - float(gap.sum())
    return int(round(busy)), int(round(window)), idle, long_host


def _run_gpu(
    members: IntArray,
    ready: FloatArray,
    keys: IntArray,
    duration: FloatArray,
    incoming: Mapping[int, list[int]],
    stream_free: dict[int, float],
    finish: FloatArray,
) -> None:
    """Run ``members`` (in launch order) on their streams: each starts when it is ready,
    its stream is free and its dependencies are done. Fills ``finish``, updates
    ``stream_free``."""
    member_list = members.tolist()
    if not incoming.keys().isdisjoint(member_list):
        # Plain Python numbers: the same IEEE sums as numpy's, without per-element boxing.
        done = finish.tolist()
        for j, at, key, took in zip(
            member_list,
            ready.tolist(),
            keys[members].tolist(),
            duration[members].tolist(),
            strict=True,
        ):
            start = max(at, stream_free.get(key, 0.0))
            for i in incoming.get(j, ()):
                if done[i] > start:
                    start = done[i]
            done[j] = stream_free[key] = start + took
        finish[members] = [done[j] for j in member_list]
        return
    # Independent streams: end_j = C_j + max(free, max_{i<=j}(ready_i - C_{i-1})) with C
    # the running sum of the stream's durations.
    member_keys = keys[members]
    for key in np.unique(member_keys).tolist():
        on = member_keys == key
        chain = members[on]
        total = np.cumsum(duration[chain])
        before = total - duration[chain]
        latest = np.maximum.accumulate(ready[on] - before)
        ends = total + np.maximum(latest, stream_free.get(int(key), 0.0))
        finish[chain] = ends
        stream_free[int(key)] = float(ends[-1])
