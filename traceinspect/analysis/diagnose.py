"""The diagnosis of one trace: per region, where the GPU's time went, a verdict, the
capture pre-flight and the replay estimate; plus warnings about the trace itself.

:func:`diagnose` is pure: a :class:`~traceinspect.model.Timeline` in, a
:class:`~traceinspect.analysis.result.TraceAnalysis` out. Per-occurrence figures are
reported as medians over a region's occurrences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.analysis.arrays import TimelineArrays, index_timeline
from traceinspect.analysis.capture import CaptureChecker
from traceinspect.analysis.gaps import CAUSES, OTHER_DETAILS, OUTSIDE_WORK, GroupGaps, group_gaps
from traceinspect.analysis.health import HealthWarning, check_health, listed
from traceinspect.analysis.intervals import IntArray, covered_ns, merge
from traceinspect.analysis.job import job_estimate
from traceinspect.analysis.regions import (
    MAX_REGIONS,
    LeftOut,
    Region,
    find_regions_left_out,
    owner,
    step_region,
)
from traceinspect.analysis.result import (
    LaunchStats,
    OccurrenceGaps,
    RegionDiagnosis,
    StreamIdle,
    TraceAnalysis,
)
from traceinspect.analysis.summary import summarize
from traceinspect.analysis.verdict import (
    LAUNCH_COST_NS,
    RegionShape,
    decide,
    host_work_kept_saving,
)
from traceinspect.errors import TraceinspectError
from traceinspect.model import Timeline

if TYPE_CHECKING:
    from traceinspect.analysis.estimate import RegionEstimate, RegionPlan, TimelineColumns
    from traceinspect.calibration import Calibration


def diagnose(
    timeline: Timeline,
    *,
    calibration: Calibration | None = None,
    eager_unprofiled_ns: int | None = None,
    estimate: bool = True,
    eager_by_name: Mapping[str, int] | None = None,
    input_copy_bytes: Mapping[str, Sequence[int]] | None = None,
    workers: int | None = None,
) -> TraceAnalysis:
    """Diagnose every region of ``timeline``.

    ``calibration`` (a :class:`traceinspect.calibration.Calibration`) feeds the replay
    estimate; by default the built-in profile matching the trace's GPU.
    ``eager_unprofiled_ns``, an unprofiled measurement of one step, applies to the
    outermost step region (the profiler steps, else the longest top-level region; each
    process's, where the trace holds several);
    ``eager_by_name`` gives measured eager times (ns) of regions by name;
    ``input_copy_bytes`` the sizes of the copies into a region's static inputs that each
    replay needs, by region name, where they are known (``traceinspect profile``);
    ``workers`` the processes the replay estimates may run on (by default one per core
    where the trace is big enough to gain: :func:`~traceinspect.analysis.estimate.forked.
    worker_count`; callers that already run in parallel pass 1).
    """
    arrays = index_timeline(timeline)
    regions, left_out = find_regions_left_out(timeline, arrays)
    launch_cost = LAUNCH_COST_NS
    notes: list[HealthWarning] = []
    if left_out.regions:
        missed = len(left_out.unrecorded)
        total = MAX_REGIONS + left_out.regions + missed
        message = (
            f"{total:,} annotated regions: the {MAX_REGIONS} with the most time are analyzed, "
            f"the other {left_out.regions:,} ({left_out.time_share:.0%} of the regions' total "
            "time) left out"
        )
        if missed:
            message += f", and {missed:,} whose GPU work the recording missed (recording_ended)"
        notes.append(HealthWarning("regions_capped", message))
    notes += _unrecorded_notes(regions, left_out)
    if estimate and calibration is None and timeline.has_gpu_activity:
        try:
            from traceinspect.calibration import calibration_for

            calibration = calibration_for(timeline)
        except ImportError:  # pragma: no cover - the estimator ships with the package
            calibration = None
        except TraceinspectError as exc:
            notes.append(HealthWarning("no_calibration", f"no replay estimate: {exc}"))
    if calibration is not None:
        launch_cost = int(calibration.eager_launch_host_ns)
    checker = CaptureChecker(arrays, regions)
    step = step_region(regions)
    # The estimator's column arrays and device shares, built once for every region.
    columns = arrays.columns if estimate and calibration is not None else None
    diagnosed = [_diagnose_region(arrays, region, checker, launch_cost) for region in regions]
    if estimate and calibration is not None:
        diagnosed, warnings = _with_estimates(
            timeline,
            diagnosed,
            calibration,
            step=step,
            eager_unprofiled_ns=eager_unprofiled_ns,
            eager_by_name=eager_by_name or {},
            input_copy_bytes=input_copy_bytes or {},
            columns=columns,
            launch_cost_ns=launch_cost,
            workers=workers,
        )
        notes.extend(warnings)
    steps = process_steps(diagnosed, step)
    diagnosed = _with_steps(diagnosed, steps)
    job = None
    if estimate and calibration is not None:
        try:
            job = job_estimate(
                timeline, steps, calibration, eager_unprofiled_ns=eager_unprofiled_ns
            )
        except Exception as exc:  # optional, as the regions' estimates are
            notes.append(
                HealthWarning(
                    "estimate_failed",
                    "replay estimate for the ranks' steps replayed together failed: "
                    f"{type(exc).__name__}: {exc}",
                )
            )
    if job is not None:
        stepped = {id(r.region) for r in steps.values()}
        diagnosed = [replace(r, job=job) if id(r.region) in stepped else r for r in diagnosed]
    step_result = next((r for r in diagnosed if r.region is step), None)
    health = check_health(timeline, arrays, diagnosed) + notes
    return TraceAnalysis(
        timeline=timeline,
        summary=summarize(timeline, arrays.queued_before),
        region_results=tuple(diagnosed),
        warnings=tuple(health),
        calibration=calibration,
        step=step_result,
        job=job,
    )


def _with_estimates(
    timeline: Timeline,
    diagnosed: list[RegionDiagnosis],
    calibration: Calibration,
    *,
    step: Region | None,
    eager_unprofiled_ns: int | None,
    eager_by_name: Mapping[str, int],
    input_copy_bytes: Mapping[str, Sequence[int]],
    columns: TimelineColumns | None,
    launch_cost_ns: int,
    workers: int | None,
) -> tuple[list[RegionDiagnosis], list[HealthWarning]]:
    """Every diagnosis with its region's replay estimate (none for idle and already graphed
    regions), and a warning per region whose estimate failed. The regions' occurrences are
    estimated together, on several cores where they are many
    (:func:`~traceinspect.analysis.estimate.forked.fork_map`), each region's as
    :func:`~traceinspect.analysis.estimate.estimate_region` would."""
    try:
        from traceinspect.analysis.estimate import plan_region
        from traceinspect.analysis.estimate.forked import Raised, fork_map
    except ImportError:  # pragma: no cover - the estimator ships with the package
        return diagnosed, []
    plans: dict[int, RegionPlan | None] = {}
    failed: dict[int, HealthWarning] = {}
    # Only a region whose host the GPU held back is read as pipelined: the spans (a walk of
    # every region's occurrences) are built for the first such region, and most traces have
    # none.
    ahead: dict[int, tuple[IntArray, IntArray]] | None = None
    # A measured step applies to every process's step (ranks run one program), as a
    # measured region does to every process's region of its name.
    steps = {id(r.region) for r in process_steps(diagnosed, step).values()}
    for index, result in enumerate(diagnosed):
        region = result.region
        if result.verdict in ("idle", "already-graphed"):
            continue
        throttled = (result.launch.median_queue_depth or 0.0) >= THROTTLED_QUEUE_DEPTH
        if throttled and ahead is None:
            ahead = host_ahead_spans(
                [d.region for d in diagnosed], timeline.gpu["end_ns"].to_numpy()
            )
        eager = eager_by_name.get(region.name, eager_unprofiled_ns if id(region) in steps else None)
        try:
            plans[index] = plan_region(
                timeline,
                region.rows,
                [int(w) for w in region.wall_ns],
                calibration,
                eager_unprofiled_ns=eager,
                input_copy_bytes=input_copy_bytes.get(region.name),
                columns=columns,
                occurrence_start_ns=[int(s) for s in region.start_ns],
                occurrence_pipelined=(
                    _inside(ahead, region) if throttled and ahead is not None else None
                ),
            )
        except Exception as exc:  # the estimate is optional: the diagnosis stands without it
            failed[index] = _estimate_failed(region, exc)
    jobs = [job for plan in plans.values() if plan is not None for job in plan.jobs]
    costs = [cost for plan in plans.values() if plan is not None for cost in plan.costs]
    results = iter(fork_map(jobs, costs, workers))
    out = list(diagnosed)
    warnings: list[HealthWarning] = []
    for index, result in enumerate(diagnosed):
        if index in failed:
            warnings.append(failed[index])
        if index not in plans:
            continue
        plan = plans[index]
        est: RegionEstimate | None = None
        if plan is not None:
            mine = [next(results) for _ in plan.jobs]
            try:
                for answer in mine:
                    if isinstance(answer, Raised):
                        raise answer.error
                est = plan.finish(mine)  # type: ignore[arg-type]  # none Raised
            except Exception as exc:  # the estimate is optional, as above
                warnings.append(_estimate_failed(result.region, exc))
        out[index] = _with_estimate(result, est, launch_cost_ns)
    return out, warnings


#: Median launches in flight at each of a region's launches from which its host counts as
#: held back by the GPU: half the 1,024 launches CUDA queues before a launch call blocks.
#: A training loop with no synchronize fills the queue (HTA's DDP rank: 1,011; HTA's
#: TorchRec rank: 820-945), and its host's traced time is then the GPU's pace, not host work
#: to deflate. A loop that merely runs a few steps ahead does not: the 1,059 eager traces of
#: the validation folder, whose profiled steps run back to back though each step is timed
#: synchronized, reach at most 312.5.
THROTTLED_QUEUE_DEPTH: Final = 512


def host_ahead_spans(
    regions: Sequence[Region], gpu_end: IntArray
) -> dict[int, tuple[IntArray, IntArray]]:
    """Per process, the host intervals where the host ran a step ahead of the GPU: the
    occurrences that began before their region's previous occurrence (in the same process)
    had finished on the GPU — a loop with no synchronize between its steps. Nested regions
    inside them run ahead too (a training step's forward, backward and optimizer)."""
    spans: dict[int, tuple[list[int], list[int]]] = {}
    for region in regions:
        for k in range(1, region.occurrences):
            before = region.rows[k - 1]
            if (
                len(before)
                and region.pid[k] == region.pid[k - 1]
                and region.start_ns[k] < gpu_end[before].max()
            ):
                starts, ends = spans.setdefault(int(region.pid[k]), ([], []))
                starts.append(int(region.start_ns[k]))
                ends.append(int(region.end_ns[k]))
    return {
        pid: merge(np.array(starts, np.int64), np.array(ends, np.int64))
        for pid, (starts, ends) in spans.items()
    }


def _inside(spans: Mapping[int, tuple[IntArray, IntArray]], region: Region) -> list[bool]:
    """Per occurrence of ``region``, whether it began inside one of ``spans``."""
    out = []
    for start, pid in zip(region.start_ns, region.pid, strict=True):
        blocks = spans.get(int(pid))
        if blocks is None:
            out.append(False)
            continue
        k = int(np.searchsorted(blocks[0], start, side="right")) - 1
        out.append(k >= 0 and int(blocks[1][k]) > int(start))
    return out


def _estimate_failed(region: Region, exc: Exception) -> HealthWarning:
    return HealthWarning(
        "estimate_failed",
        f"replay estimate for region {region.name!r} failed: {type(exc).__name__}: {exc}",
    )


def _with_steps(
    diagnosed: list[RegionDiagnosis], steps: Mapping[int, RegionDiagnosis]
) -> list[RegionDiagnosis]:
    """Each estimated region with the step it sits in (:attr:`RegionDiagnosis.in_step`):
    the step region of its own process (``steps``: :func:`process_steps` of ``diagnosed``),
    whose eager time and occurrences weigh a small saving; None for a region outside every
    step occurrence."""
    from traceinspect.analysis.decision import EnclosingStep

    if not steps:
        return diagnosed
    out: list[RegionDiagnosis] = []
    for result in diagnosed:
        mine = steps.get(owner(result.region))
        if result.estimate is None or mine is None or mine.estimate is None:
            out.append(result)
            continue
        inside = 1 if mine is result else _occurrences_inside(result.region, mine.region)
        per_step = inside / mine.region.occurrences if mine is not result else 1.0
        enclosing = (
            EnclosingStep(mine.region.name, float(mine.estimate.eager_ns), per_step)
            if inside
            else None
        )
        out.append(replace(result, in_step=enclosing))
    return out


def process_steps(
    diagnosed: Sequence[RegionDiagnosis], step: Region | None
) -> dict[int, RegionDiagnosis]:
    """Each process's step (by :func:`~traceinspect.analysis.regions.owner`): its region of
    the trace's ``step`` name and source, else, for a process with none (a rank whose NVTX
    ranges the program left out, its steps found instead), its own
    :func:`~traceinspect.analysis.regions.step_region`. The whole trace is no one's step."""
    if step is None:
        return {}
    by_owner: dict[int, list[RegionDiagnosis]] = {}
    for result in diagnosed:
        by_owner.setdefault(owner(result.region), []).append(result)
    steps: dict[int, RegionDiagnosis] = {}
    for pid, results in by_owner.items():
        named = [
            r for r in results if r.region.name == step.name and r.region.source == step.source
        ]
        if not named:
            # (its outermost ranges sit under the whole trace where another process's
            # steps were found: depth 1)
            own = [r.region for r in results if r.region.source != "whole_trace"]
            top = min((r.depth for r in own), default=0)
            chosen = step_region(own) or max(
                (r for r in own if r.depth == top),
                key=lambda r: int(r.wall_ns.sum()),
                default=None,
            )
            named = [r for r in results if r.region is chosen]
        if named:
            steps[pid] = named[0]
    return steps


def _occurrences_inside(region: Region, step: Region) -> int:
    """How many of ``region``'s occurrences start inside an occurrence of ``step`` of the
    same process (occurrences of one process's step do not overlap)."""
    inside = 0
    for pid in np.unique(region.pid).tolist():
        ours = step.pid == pid
        order = np.argsort(step.start_ns[ours], kind="stable")
        starts, ends = step.start_ns[ours][order], step.end_ns[ours][order]
        at = region.start_ns[region.pid == pid]
        before = np.searchsorted(starts, at, side="right") - 1
        known = before >= 0
        inside += int((at[known] <= ends[before[known]]).sum())
    return inside


def _with_estimate(
    result: RegionDiagnosis, est: RegionEstimate | None, launch_cost_ns: float
) -> RegionDiagnosis:
    """The diagnosis with its estimate; the verdict then reads the simulated unprofiled run
    and must agree with the predicted saving (:func:`~traceinspect.analysis.verdict.decide`)."""
    if est is None or result.shape is None:
        return replace(result, estimate=est)
    unprofiled = getattr(est, "unprofiled", None)
    verdict, evidence = decide(
        result.shape, launch_cost_ns=launch_cost_ns, unprofiled=unprofiled, saving=est
    )
    kept = host_work_kept_saving(est, unprofiled) if verdict == "idle" else None
    if kept is not None and kept < est.saving_low_frac:
        # The verdict reads the host's own work as staying; the prediction has replay skip
        # it. The range covers both.
        est = replace(
            est,
            saving_low_frac=kept,
            notes=(
                *est.notes,
                f"saving range down to {kept:.0%}: the host's own work between launches "
                "stays if the step needs what it computes",
            ),
        )
    return replace(result, estimate=est, verdict=verdict, evidence=evidence)


def _diagnose_region(
    arrays: TimelineArrays, region: Region, checker: CaptureChecker, launch_cost_ns: int
) -> RegionDiagnosis:
    n = region.occurrences
    counts = np.array([len(r) for r in region.rows], np.int64)
    occ = np.repeat(np.arange(n, dtype=np.int64), counts)
    rows = np.concatenate(region.rows) if n else np.empty(0, np.int64)
    wall = region.wall_ns.astype(np.float64)
    gaps = group_gaps(arrays, occ, rows, n)
    used = gaps.first_start >= 0
    span = gaps.span
    duration = arrays.end[rows] - arrays.start[rows]
    kernel = arrays.is_kernel[rows]
    kernels_per_occ = np.bincount(occ[kernel], minlength=n)
    idle_med = {c: _median(gaps.idle[used, i]) for i, c in enumerate(CAUSES)}
    safe_span = np.maximum(span[used], 1).astype(np.float64)
    shares = {c: _median(gaps.idle[used, i] / safe_span) for i, c in enumerate(CAUSES)}
    long_host = _median(gaps.long_host[used] / safe_span) if used.any() else 0.0
    busy_share = _median(gaps.busy[used] / safe_span) if used.any() else 0.0
    launch = _launch_stats(arrays, rows)
    graph_share = float(arrays.is_graph[rows].mean()) if len(rows) else 0.0
    median_activity = float(np.median(duration)) if len(rows) else None
    shape = RegionShape(
        occurrences=n,
        activities=_median(counts),
        window_ns=_median(span[used]),
        busy_share=busy_share,
        idle_share=shares,
        median_activity_ns=median_activity or 0.0,
        gpu_per_activity_ns=_median(gaps.busy[used] / np.maximum(counts[used], 1)),
        graph_share=graph_share,
        long_host_share=long_host,
        host_sync_share=_median(_host_sync_ns(arrays, region) / np.maximum(wall, 1.0)),
        median_launch_call_ns=launch.median_call_ns,
        median_queue_depth=launch.median_queue_depth,
        wall_ns=_median(wall),
        collective_share=_collective_share(arrays, region, occ, rows, gaps.busy),
        outside_work_share=(
            _median(gaps.other_detail[used, OUTSIDE_WORK] / safe_span) if used.any() else 0.0
        ),
    )
    verdict, evidence = decide(shape, launch_cost_ns=launch_cost_ns)
    capture = checker.check(region, graphed=verdict == "already-graphed")
    return RegionDiagnosis(
        region=region,
        wall_ns=_median(wall),
        wall_p95_ns=float(np.percentile(wall, 95)) if n else 0.0,
        window_ns=_median(span[used]),
        busy_share=busy_share,
        gpu_busy_ns=_median(gaps.busy[used]),
        activities=_median(counts),
        kernels=_median(kernels_per_occ),
        median_activity_ns=median_activity,
        median_kernel_ns=float(np.median(duration[kernel])) if kernel.any() else None,
        idle_ns=idle_med,
        other_idle_ns={d: _median(gaps.other_detail[used, i]) for i, d in enumerate(OTHER_DETAILS)},
        streams=_stream_idle(arrays, occ, rows, n),
        launch=launch,
        graph_share=graph_share,
        verdict=verdict,
        evidence=evidence,
        capture=capture,
        shape=shape,
        gaps=OccurrenceGaps(
            window_start_ns=gaps.first_start,
            window_end_ns=gaps.last_end,
            busy_ns=gaps.busy,
            occurrence=gaps.gap_group,
            start_ns=gaps.gap_start,
            end_ns=gaps.gap_end,
            cause=gaps.gap_cause,
            detail=gaps.gap_detail,
            next_row=gaps.gap_next_row,
        ),
    )


def _collective_share(
    arrays: TimelineArrays, region: Region, occ: IntArray, rows: IntArray, busy: IntArray
) -> float:
    """Median over occurrences of the collective kernels' time over the GPU busy time."""
    collective = arrays.timeline.gpu["collective"].to_numpy(bool)[rows]
    if not collective.any():
        return 0.0
    duration = (arrays.end[rows] - arrays.start[rows]).astype(np.float64)
    own = np.bincount(occ[collective], weights=duration[collective], minlength=region.occurrences)
    used = busy > 0
    return _median(np.minimum(1.0, own[used] / busy[used]))


def _host_sync_ns(arrays: TimelineArrays, region: Region) -> IntArray:
    """Per occurrence: host time inside it spent in synchronizing calls of its process."""
    out = np.zeros(region.occurrences, np.int64)
    for pid in np.unique(region.pid).tolist():
        starts, ends = arrays.sync_calls.get(int(pid))
        mine = region.pid == pid
        out[mine] = covered_ns(starts, ends, region.start_ns[mine], region.end_ns[mine])
    return out


def _launch_stats(arrays: TimelineArrays, rows: IntArray) -> LaunchStats:
    launched = rows[arrays.launch_row[rows] >= 0]
    if len(launched) == 0:
        return LaunchStats(0, None, None, None, None, None)
    calls, first = np.unique(arrays.launch_row[launched], return_index=True)
    call_ns = arrays.host_end[calls] - arrays.host_start[calls]
    direct = launched[~arrays.is_graph[launched]]
    latency = arrays.launch_latency[direct if len(direct) else launched]
    depth = arrays.queue_depth[launched[first]]
    return LaunchStats(
        launches=len(calls),
        median_call_ns=float(np.median(call_ns)),
        median_latency_ns=float(np.median(latency)),
        p95_latency_ns=float(np.percentile(latency, 95)),
        median_queue_depth=float(np.median(depth)),
        starved_share=float(np.mean(depth == 0)),
    )


def _stream_idle(arrays: TimelineArrays, occ: IntArray, rows: IntArray, n: int) -> list[StreamIdle]:
    if len(rows) == 0:
        return []
    # (device, stream) as one int64 key: streams are 32-bit ids, devices small.
    key = arrays.device[rows] * (1 << 33) + arrays.stream[rows]
    codes, uniques = pd.factorize(key, sort=True)
    k = len(uniques)
    gaps: GroupGaps = group_gaps(arrays, occ * k + codes, rows, n * k)
    out = []
    for j, pair in enumerate(uniques.tolist()):
        device, stream = divmod(int(pair), 1 << 33)
        ids = np.arange(n) * k + j
        used = ids[gaps.first_start[ids] >= 0]
        out.append(
            StreamIdle(
                device=int(device),
                stream=int(stream),
                busy_ns=_median(gaps.busy[used]),
                idle_ns={c: _median(gaps.idle[used, i]) for i, c in enumerate(CAUSES)},
            )
        )
    return out


def _median(values: npt.ArrayLike) -> float:
    values = np.asarray(values)
    return float(np.median(values)) if values.size else 0.0


def _unrecorded_notes(regions: list[Region], left_out: LeftOut) -> list[HealthWarning]:
    """What the recording's end cut: ranges and occurrences whose launches the GPU ran after
    it (:class:`~traceinspect.analysis.regions.Region.cut_unrecorded`)."""
    cut = [r for r in regions if r.cut_unrecorded]
    if not cut and not left_out.unrecorded:
        return []
    parts = []
    if left_out.unrecorded:
        names = left_out.unrecorded
        parts.append(f"{_count(len(names), 'range')} that made them left out ({listed(names, 3)})")
    if cut:
        n = sum(r.cut_unrecorded for r in cut)
        others = _count(len(cut), "other region")
        parts.append(
            f"the last occurrence of {others}"
            if n == len(cut)
            else f"the last {n:,} occurrences of {others}"
        )
        parts[-1] += " left out"
    launches = _count(left_out.unrecorded_launches, "launch", "launches")
    return [
        HealthWarning(
            "recording_ended",
            f"the recording ended before the GPU ran the last {launches} (the host was ahead "
            "of it): " + "; ".join(parts),
        )
    ]


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"
