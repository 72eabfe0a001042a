"""A region's estimate: its occurrences' replays, medians, range and saving."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from traceinspect.analysis.estimate.columns import FloatArray, IntArray, TimelineColumns
from traceinspect.analysis.estimate.eager import (
    EagerRun,
    paced_calibration,
    profiler_cost_for,
    simulate_eager,
)
from traceinspect.analysis.estimate.occurrence import OccurrenceEstimate, estimate_occurrence
from traceinspect.analysis.intervals import union_ns
from traceinspect.calibration import Calibration
from traceinspect.model import Timeline
from traceinspect.units import ns_to_us

EagerSource = Literal["measured", "trace", "trace-deflated"]

#: Kernel time of a step replayed as a graph differs from the same step's kernels in the
#: profiled eager trace by −7 % to +8 % on the H200 samples (clocks, cache state, kernels'
#: prologues overlapping differently); the range widens every duration by this much.
REPLAY_DURATION_DRIFT_FRAC: Final = 0.05

#: Percentiles of the per-occurrence ranges spanned by a region's low/high.
RANGE_PERCENTILES: Final = (10.0, 90.0)
#: Occurrences of one region replayed one by one at most; beyond that an evenly spaced sample
#: stands for them (medians of 48 occurrences move by well under the calibration's spread,
#: and long training traces repeat a step thousands of times: 1,580 estimates took 60 % of a
#: 200 MB trace's analysis).
MAX_ESTIMATED_OCCURRENCES: Final = 48

#: Relative uncertainty of an eager time simulated from a torch.profiler trace (its range):
#: on 37 H200 workloads the eager model's out-of-fold errors (two-fold cross-validation)
#: have a median of 6 % and a 90th percentile of 30 % (34 of 37 inside ±35 %); eager latency
#: itself moves by more between processes (see the README).
EAGER_MODEL_SPREAD_FRAC: Final = 0.35
#: The same for an eager time taken from a trace that is not deflated (Nsight Systems), or
#: from the GPU's traced pace (most occurrences queued behind earlier GPU work, the host
#: never catching up: :attr:`~traceinspect.analysis.estimate.eager.EagerRun.pipelined`).
EAGER_TRACE_SPREAD_FRAC: Final = 0.15


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
    #: Range of the eager time: the measurement itself, or the eager model's uncertainty.
    eager_low_ns: int = 0
    eager_high_ns: int = 0
    #: Range of the saving: graphed high against eager low, graphed low against eager high.
    saving_low_frac: float = 0.0
    saving_high_frac: float = 0.0
    #: The simulated unprofiled eager run (medians over occurrences; None for a measured
    #: eager time without a trace to simulate): GPU busy share of its window and idle
    #: shares by cause — what the verdict reads.
    unprofiled: UnprofiledShape | None = None
    #: Processes x devices replayed side by side (a multi-rank region): 1 for one.
    ranks: int = 1
    #: Of ``streams``, those an operator forked for itself (a library's own: cuDNN's RNNs
    #: and convolutions in the validation traces), and those operators' names.
    forked_streams: int = 0
    forking_operators: tuple[str, ...] = ()
    #: Per occurrence, in trace order: its saving against its own simulated eager run (or
    #: the measured eager time), as a share of that eager time. The saving range sets the
    #: replay's high end against the eager time's low end over all occurrences; where
    #: occurrences differ (collectives that wait on other ranks), these say what each would
    #: save.
    occurrence_saving_fracs: tuple[float, ...] = ()

    def occurrence_saving_spread(self) -> tuple[float, float, float] | None:
        """The 10th percentile, median and 90th percentile of
        :attr:`occurrence_saving_fracs`; None with fewer than two occurrences."""
        if len(self.occurrence_saving_fracs) < 2:
            return None
        p10, p50, p90 = np.percentile(self.occurrence_saving_fracs, [10, 50, 90])
        return float(p10), float(p50), float(p90)

    def occurrences_saving(self, at_least: float) -> int:
        """How many occurrences save at least ``at_least`` of their own eager time."""
        return sum(frac >= at_least for frac in self.occurrence_saving_fracs)

    def to_json(self) -> dict[str, Any]:
        spread = self.occurrence_saving_spread()
        return {
            "graphed_us": ns_to_us(self.graphed_ns),
            "low_us": ns_to_us(self.low_ns),
            "high_us": ns_to_us(self.high_ns),
            "saving_us": ns_to_us(self.saving_ns),
            "saving_frac": round(self.saving_frac, 4),
            "saving_low_frac": round(self.saving_low_frac, 4),
            "saving_high_frac": round(self.saving_high_frac, 4),
            "eager_us": ns_to_us(self.eager_ns),
            "eager_low_us": ns_to_us(self.eager_low_ns),
            "eager_high_us": ns_to_us(self.eager_high_ns),
            "eager_source": self.eager_source,
            "unprofiled": self.unprofiled.to_json() if self.unprofiled else None,
            "calibration": self.calibration.name,
            "calibration_note": self.calibration.fallback_note,
            "parts": {k: ns_to_us(v) for k, v in self.parts.items()},
            "occurrences": self.occurrences,
            "occurrence_saving_frac": (
                None
                if spread is None
                else dict(zip(("p10", "median", "p90"), (round(v, 4) for v in spread), strict=True))
            ),
            "ranks": self.ranks,
            "graph": {
                "nodes": self.nodes,
                "streams": self.streams,
                "forked_streams": self.forked_streams,
                "forking_operators": list(self.forking_operators),
                "cross_stream_dependencies": self.dependencies,
                "input_copies": self.input_copies,
                "graphs": self.graphs,
                "host_syncs": self.host_syncs,
            },
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class UnprofiledShape:
    """The simulated unprofiled eager run of a region (medians over occurrences)."""

    eager_ns: int
    window_ns: int
    busy_share: float
    #: Idle of the window by cause: ``host_launch``, ``sync``, ``other`` (shares 0..1).
    idle_share: Mapping[str, float]
    #: Simulated / traced host time of the region's own host work.
    host_deflation: float
    #: Share of the window in ``host_launch`` gaps longer than
    #: :data:`~traceinspect.analysis.estimate.eager.LONG_HOST_GAP_NS`: the host busy with
    #: work of its own (Python logic, data loading), which replay does not remove.
    long_host_share: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "eager_us": ns_to_us(self.eager_ns),
            "window_us": ns_to_us(self.window_ns),
            "busy_share": round(self.busy_share, 4),
            "idle_share": {k: round(v, 4) for k, v in self.idle_share.items()},
            "long_host_share": round(self.long_host_share, 4),
            "host_deflation": round(self.host_deflation, 4),
        }


def estimate_region(
    timeline: Timeline,
    occurrence_rows: Sequence[IntArray],
    eager_wall_ns: Sequence[int],
    calibration: Calibration,
    *,
    eager_unprofiled_ns: int | None = None,
    assume_input_copy: bool = True,
    input_copy_bytes: Sequence[int] | None = None,
    columns: TimelineColumns | None = None,
    occurrence_start_ns: Sequence[int] | None = None,
    occurrence_pipelined: Sequence[bool] | None = None,
) -> RegionEstimate | None:
    """Estimate one region from its occurrences; ``None`` when none launched GPU work.

    ``occurrence_rows[i]`` are positions in ``timeline.gpu`` of the activities occurrence
    ``i`` launched, ``eager_wall_ns[i]`` its traced wall time and
    ``occurrence_start_ns[i]`` (when given) its host start. ``eager_unprofiled_ns``, when
    known (measured without the profiler), is the eager time savings are computed from.
    ``input_copy_bytes``, when known, are the copies into the static inputs each replay
    needs (:func:`estimate_occurrence`).
    ``columns``, when given, is the timeline's :class:`TimelineColumns` shared by the
    calls for every region of one trace (built here otherwise).
    ``occurrence_pipelined[i]``: whether occurrence ``i`` ran inside a stretch where the host
    was a step ahead of the GPU (:func:`traceinspect.analysis.diagnose.host_ahead_spans`),
    so that its eager run may be taken at the GPU's pace.

    An occurrence whose activities ran in several processes or on several devices is
    estimated per (process, device) — each rank captures and replays its own graph, side by
    side — and takes the slowest rank.

    The same as :func:`plan_region`'s jobs run in order and finished.
    """
    plan = plan_region(
        timeline,
        occurrence_rows,
        eager_wall_ns,
        calibration,
        eager_unprofiled_ns=eager_unprofiled_ns,
        assume_input_copy=assume_input_copy,
        input_copy_bytes=input_copy_bytes,
        columns=columns,
        occurrence_start_ns=occurrence_start_ns,
        occurrence_pipelined=occurrence_pipelined,
    )
    return None if plan is None else plan.finish([job() for job in plan.jobs])


OccurrenceResult = tuple[OccurrenceEstimate, EagerRun]


@dataclass(frozen=True)
class RegionPlan:
    """:func:`estimate_region` cut where its occurrences are estimated: one job per
    occurrence kept, independent of each other (:func:`~traceinspect.analysis.estimate.
    forked.fork_map` runs them on several cores), each's cost (the activities it
    estimates), and :meth:`finish`, which makes their results, in order, the estimate."""

    jobs: tuple[Callable[[], OccurrenceResult], ...]
    costs: tuple[int, ...]
    _setup: _RegionSetup

    def finish(self, results: Sequence[OccurrenceResult]) -> RegionEstimate:
        return _finish_region(self._setup, results)


@dataclass(frozen=True)
class _RegionSetup:
    """What the jobs of one region share and what finishing it needs besides them."""

    timeline: Timeline
    calibration: Calibration
    replay_calibration: Calibration
    eager_unprofiled_ns: int | None
    ranks: int
    notes: tuple[str, ...]


def plan_region(
    timeline: Timeline,
    occurrence_rows: Sequence[IntArray],
    eager_wall_ns: Sequence[int],
    calibration: Calibration,
    *,
    eager_unprofiled_ns: int | None = None,
    assume_input_copy: bool = True,
    input_copy_bytes: Sequence[int] | None = None,
    columns: TimelineColumns | None = None,
    occurrence_start_ns: Sequence[int] | None = None,
    occurrence_pipelined: Sequence[bool] | None = None,
) -> RegionPlan | None:
    """:func:`estimate_region` (the same arguments) up to its occurrences' estimates, which
    it leaves as jobs; ``None`` when no occurrence launched GPU work."""
    if len(occurrence_rows) != len(eager_wall_ns):
        raise ValueError("occurrence_rows and eager_wall_ns differ in length")
    starts: Sequence[int | None] = (
        list(occurrence_start_ns)
        if occurrence_start_ns is not None
        else [None] * len(eager_wall_ns)
    )
    pipelined = (
        list(occurrence_pipelined)
        if occurrence_pipelined is not None
        else [False] * len(eager_wall_ns)
    )
    kept = [
        (np.asarray(rows, np.int64), int(wall), start, ahead)
        for rows, wall, start, ahead in zip(
            occurrence_rows, eager_wall_ns, starts, pipelined, strict=True
        )
        if len(rows)
    ]
    if not kept:
        return None
    cols = columns or TimelineColumns(timeline)
    notes: list[str] = []
    if len(kept) > MAX_ESTIMATED_OCCURRENCES:
        picked = np.unique(np.linspace(0, len(kept) - 1, MAX_ESTIMATED_OCCURRENCES).round())
        notes.append(f"estimated from {len(picked)} evenly spaced of {len(kept)} occurrences")
        kept = [kept[int(i)] for i in picked]
    rank_rows = [_by_rank(cols, rows) for rows, _, _, _ in kept]
    replay_calibration = paced_calibration(timeline, calibration, cols)
    ranks = max(len(r) for r in rank_rows)
    spreads: dict[int, tuple[float, float]] = {}
    for key in {k for by_rank in rank_rows for k in by_rank}:
        low_ratio, high_ratio = duration_spread(
            timeline, [r[key] for r in rank_rows if key in r], columns=cols
        )
        spreads[key] = (
            low_ratio * (1.0 - REPLAY_DURATION_DRIFT_FRAC),
            high_ratio * (1.0 + REPLAY_DURATION_DRIFT_FRAC),
        )
    if ranks > 1:
        notes.append(
            f"{ranks} processes/devices replay side by side: the slowest rank's graph sets the time"
        )
    fetches = data_loader_fetches(timeline, cols)  # before the jobs fork: found once
    jobs = tuple(
        partial(
            _estimate_one,
            timeline,
            by_rank,
            wall,
            start,
            ahead,
            calibration,
            replay_calibration,
            spreads,
            cols,
            assume_input_copy,
            input_copy_bytes,
            fetches,
        )
        for (_, wall, start, ahead), by_rank in zip(kept, rank_rows, strict=True)
    )
    setup = _RegionSetup(
        timeline, calibration, replay_calibration, eager_unprofiled_ns, ranks, tuple(notes)
    )
    return RegionPlan(jobs, tuple(len(rows) for rows, _, _, _ in kept), setup)


def _estimate_one(
    timeline: Timeline,
    by_rank: Mapping[int, IntArray],
    wall: int,
    start: int | None,
    ahead: bool,
    calibration: Calibration,
    replay_calibration: Calibration,
    spreads: Mapping[int, tuple[float, float]],
    cols: TimelineColumns,
    assume_input_copy: bool,
    input_copy_bytes: Sequence[int] | None,
    fetches: IntArray,
) -> OccurrenceResult:
    """One occurrence's replay (its slowest rank's) and its simulated eager run; the
    DataLoader ``fetches`` (:func:`data_loader_fetches`) inside it stay on replay."""
    per_rank = [
        estimate_occurrence(
            timeline,
            rows,
            replay_calibration,
            assume_input_copy=assume_input_copy,
            input_copy_bytes=input_copy_bytes,
            duration_spread=spreads[key],
            columns=cols,
        )
        for key, rows in by_rank.items()
    ]
    simulated = [
        simulate_eager(
            timeline,
            rows,
            calibration,
            start_ns=start,
            end_ns=None if start is None else start + wall,
            wall_ns=wall,
            columns=cols,
            host_ahead=ahead,
        )
        for rows in by_rank.values()
    ]
    estimate = _slowest(per_rank)
    run = max(simulated, key=lambda run: run.eager_ns)
    if start is not None and len(fetches):
        pids = {int(p) for rows in by_rank.values() for p in np.unique(cols.gpu("pid")[rows])}
        loading = data_loading_ns(fetches, start, start + wall, pids)
        if loading:
            # A DataLoader fetch inside the region stays on replay: it is host work no
            # graph captures, and the replay waits for the batch it brings. At the pace the
            # eager simulation gives the occurrence's host work.
            kept = int(round(loading * run.host_ns / max(run.host_traced_ns, 1)))
            estimate = replace(
                estimate,
                graphed_ns=estimate.graphed_ns + kept,
                low_ns=estimate.low_ns + kept,
                high_ns=estimate.high_ns + kept,
                parts={**estimate.parts, "data_loading": kept},
            )
    return estimate, run


#: The CPU operator a ``torch.utils.data.DataLoader`` iteration records:
#: ``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`` (or
#: ``_MultiProcessingDataLoaderIter``, which waits there for its workers).
DATA_LOADER_OP: Final = re.compile(r"^enumerate\(DataLoader\)#.*__next__$")


def data_loader_fetches(timeline: Timeline, cols: TimelineColumns | None = None) -> IntArray:
    """The DataLoader fetches of ``timeline`` as ``[start_ns, end_ns, pid]`` rows: a CPU
    operator in older traces, a ``user_annotation`` since. Found once per timeline (memoized
    on ``cols``): their names are matched once each, not once per row."""
    if cols is not None and "data_loader_fetches" in cols.memo:
        found: IntArray = cols.memo["data_loader_fetches"]
        return found
    rows = []
    for table in (timeline.cpu_ops, timeline.annotations):
        if len(table) == 0:
            continue
        names = table["name"]
        wanted = [n for n in pd.unique(names) if DATA_LOADER_OP.match(str(n))]
        if not wanted:
            continue
        fetch = table[names.isin(wanted).to_numpy(bool)]
        rows.append(
            np.column_stack(
                [
                    fetch["start_ns"].to_numpy(np.int64),
                    fetch["end_ns"].to_numpy(np.int64),
                    fetch["pid"].to_numpy(np.int64),
                ]
            )
        )
    found = np.concatenate(rows) if rows else np.empty((0, 3), np.int64)
    if cols is not None:
        cols.memo["data_loader_fetches"] = found
    return found


def data_loading_ns(fetches: IntArray, start: int, end: int, pids: set[int]) -> int:
    """Traced time (ns) of the ``fetches`` (:func:`data_loader_fetches`) that start in
    ``[start, end)`` in one of ``pids`` (their union: a fetch inside a fetch counts once)."""
    if len(fetches) == 0:
        return 0
    inside = (fetches[:, 0] >= start) & (fetches[:, 0] < end) & np.isin(fetches[:, 2], list(pids))
    if not inside.any():
        return 0
    return union_ns(fetches[inside, 0], fetches[inside, 1])


def replay_range(
    graphed: Sequence[int], low: Sequence[int], high: Sequence[int]
) -> tuple[int, int, int]:
    """A region's replay time and range (ns) from its occurrences' times and ranges: the
    median time, the lows' and highs' :data:`RANGE_PERCENTILES` (never past the median)."""
    mid = _median(graphed)
    return (
        mid,
        min(mid, int(np.percentile(low, RANGE_PERCENTILES[0]))),
        max(mid, int(np.percentile(high, RANGE_PERCENTILES[1]))),
    )


def _finish_region(setup: _RegionSetup, results: Sequence[OccurrenceResult]) -> RegionEstimate:
    """The region's estimate from its occurrences' results (:func:`plan_region`)."""
    timeline, calibration = setup.timeline, setup.calibration
    replay_calibration = setup.replay_calibration
    estimates = [estimate for estimate, _ in results]
    runs = [run for _, run in results]
    notes = list(setup.notes)
    graphed, low, high = replay_range(
        [e.graphed_ns for e in estimates],
        [e.low_ns for e in estimates],
        [e.high_ns for e in estimates],
    )
    unprofiled = _unprofiled_shape(runs)
    source: EagerSource
    if setup.eager_unprofiled_ns is not None:
        eager = eager_low = eager_high = int(setup.eager_unprofiled_ns)
        source = "measured"
    else:
        eager = unprofiled.eager_ns
        deflated = profiler_cost_for(timeline, calibration) is not None
        source = "trace-deflated" if deflated else "trace"
        # Occurrences the GPU paced with the host ahead (pipelined, no host gaps left) take
        # their eager time as traced: the profiler barely touches the GPU's pace.
        gpu_paced = sum(run.pipelined and run.idle_ns["host_launch"] == 0 for run in runs)
        traced = not deflated or 2 * gpu_paced > len(runs)
        band = EAGER_TRACE_SPREAD_FRAC if traced else EAGER_MODEL_SPREAD_FRAC
        eager_low = int(round(eager * (1.0 - band)))
        eager_high = int(round(eager * (1.0 + band)))
        notes.append(
            "eager time estimated from the profiled trace (no unprofiled measurement given)"
        )
        pipelined = sum(run.pipelined for run in runs)
        if pipelined:
            notes.append(
                f"host ahead of the GPU in {pipelined} of {len(runs)} occurrences (queued "
                "behind earlier GPU work, no sync between them): their eager time is the "
                "longer of the host's and the GPU's, at the GPU's traced pace"
            )
    keys = dict.fromkeys(key for e in estimates for key in e.parts)  # data_loading: some
    parts = {key: _median([e.parts.get(key, 0) for e in estimates]) for key in keys}
    if parts.get("data_loading", 0) > 0:
        notes.append(
            f"a DataLoader fetch inside the region ({parts['data_loading'] / 1e6:,.1f} ms per "
            "occurrence, at the unprofiled host's pace) stays on replay: no graph captures it"
        )
    if replay_calibration is not calibration and parts.get("input_copies", 0) > 0:
        notes.append(
            f"input copies charged {replay_calibration.warm_copy_host_ns / 1000:.1f} µs of host "
            f"each ({calibration.warm_copy_host_ns / 1000:.1f} calibrated), at the pace of this "
            "trace's host; `traceinspect profile` measures it"
        )
    if calibration.is_fallback:
        notes.append(f"calibration {calibration.name}: {calibration.fallback_note}")
    saving = eager - graphed
    widest = max(estimates, key=lambda e: e.streams)
    own_eager = [
        int(setup.eager_unprofiled_ns) if setup.eager_unprofiled_ns is not None else r.eager_ns
        for r in runs
    ]
    occurrence_savings = tuple(
        (e_ns - e.graphed_ns) / e_ns if e_ns > 0 else 0.0
        for e, e_ns in zip(estimates, own_eager, strict=True)
    )
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
        streams=widest.streams,
        dependencies=_median([e.dependencies for e in estimates]),
        input_copies=_median([e.input_copies for e in estimates]),
        graphs=_median([e.graphs for e in estimates]),
        host_syncs=_median([e.host_syncs for e in estimates]),
        notes=tuple(notes),
        eager_low_ns=eager_low,
        eager_high_ns=eager_high,
        saving_low_frac=1.0 - high / eager_low if eager_low > 0 else 0.0,
        saving_high_frac=1.0 - low / eager_high if eager_high > 0 else 0.0,
        unprofiled=unprofiled,
        ranks=setup.ranks,
        forked_streams=widest.forked_streams,
        forking_operators=widest.forking_operators,
        occurrence_saving_fracs=occurrence_savings,
    )


def _by_rank(cols: TimelineColumns, rows: IntArray) -> dict[int, IntArray]:
    """An occurrence's activities per (process, device), keyed by one integer."""
    key = (cols.gpu("pid")[rows].astype(np.int64) << 16) ^ cols.gpu("device")[rows].astype(np.int64)
    if len(key) == 0 or (key == key[0]).all():
        return {int(key[0]) if len(key) else 0: rows}
    return {int(k): rows[key == k] for k in np.unique(key)}


def _slowest(estimates: Sequence[OccurrenceEstimate]) -> OccurrenceEstimate:
    """The ranks of one occurrence replay side by side: the slowest one's estimate, with the
    graph sizes of all."""
    if len(estimates) == 1:
        return estimates[0]
    slowest = max(estimates, key=lambda e: e.graphed_ns)
    return replace(
        slowest,
        low_ns=max(e.low_ns for e in estimates),
        high_ns=max(e.high_ns for e in estimates),
        nodes=sum(e.nodes for e in estimates),
        streams=sum(e.streams for e in estimates),
        forked_streams=sum(e.forked_streams for e in estimates),
        forking_operators=tuple(sorted({n for e in estimates for n in e.forking_operators})),
        dependencies=sum(e.dependencies for e in estimates),
        input_copies=sum(e.input_copies for e in estimates),
    )


def _unprofiled_shape(runs: Sequence[EagerRun]) -> UnprofiledShape:
    windows = np.array([max(r.window_ns, 1) for r in runs], np.float64)
    return UnprofiledShape(
        eager_ns=_median([r.eager_ns for r in runs]),
        window_ns=_median([r.window_ns for r in runs]),
        busy_share=float(np.median([r.busy_ns for r in runs] / windows)),
        idle_share={
            cause: float(np.median([r.idle_ns[cause] for r in runs] / windows))
            for cause in runs[0].idle_ns
        },
        host_deflation=float(np.median([r.host_ns / max(r.host_traced_ns, 1) for r in runs])),
        long_host_share=float(np.median([r.long_host_ns for r in runs] / windows)),
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


def _median(values: Sequence[int]) -> int:
    return int(round(float(np.median(np.asarray(values, np.float64)))))
