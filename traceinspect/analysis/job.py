"""The ranks of one job replayed together: what graphs would save the job, not one rank.

In a trace of several processes joined by collectives (an Nsight Systems export of a DDP
``torchrun``), each rank's step is estimated on its own (:mod:`.estimate`), its collective
kernels as traced. A collective kernel runs until the last rank reaches it: on a rank that
arrives early it is mostly waiting, and that wait is the other ranks' host or GPU time, not
its own work. A rank waiting in an all-reduce for a launch-bound peer reads
``communication-bound`` with a small saving, yet once the peer replays its step as a graph
the wait shrinks too.

:func:`job_estimate` replays every rank's step together: each collective kernel takes its
*wait-free* time, the shortest of that collective's kernels over the ranks (the last rank
to arrive waits for no one), each rank's step is replayed with those, and the job's step
takes the slowest rank (ranks run in lockstep). Its eager side is the slowest rank's own step
estimate's, waits included (the job ran at that rank's pace). A step occurrence of one rank
is paired with the other ranks' occurrence whose GPU window overlaps its own most; a
collective kernel with the kernel of the same name on each other rank whose end is nearest
its own (the ranks' kernels of one collective end together).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol

import numpy as np
import pandas as pd

from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.result import RegionDiagnosis, TraceAnalysis
from traceinspect.model import Timeline
from traceinspect.units import ns_to_us

#: Fewest step occurrences paired across every rank for a job estimate.
MIN_PAIRED_STEPS: Final = 2


@dataclass(frozen=True)
class JobEstimate:
    """The job's step with every rank's step replayed as a graph together (medians over
    the paired step occurrences)."""

    processes: tuple[int, ...]
    #: Step occurrences paired across all ranks.
    steps: int
    #: Collective kernels in those steps (all ranks').
    collectives: int
    #: Per step, the collective time that was waiting (summed over ranks' kernels beyond
    #: each collective's wait-free time), median over steps.
    wait_ns: int
    graphed_ns: int
    low_ns: int
    high_ns: int
    #: The slowest process's own step estimate's eager time (waits included: the job ran
    #: at its pace), and where it comes from (as :attr:`RegionEstimate.eager_source`).
    eager_ns: int
    eager_source: str
    saving_frac: float
    saving_low_frac: float
    saving_high_frac: float
    #: The slowest of the processes' own step replays, their collectives as traced (each
    #: rank's waits kept).
    graphed_as_traced_ns: int

    def to_json(self) -> dict[str, Any]:
        return {
            "processes": list(self.processes),
            "steps": self.steps,
            "collectives": self.collectives,
            "wait_us": ns_to_us(self.wait_ns),
            "graphed_us": ns_to_us(self.graphed_ns),
            "low_us": ns_to_us(self.low_ns),
            "high_us": ns_to_us(self.high_ns),
            "eager_us": ns_to_us(self.eager_ns),
            "eager_source": self.eager_source,
            "saving_frac": round(self.saving_frac, 4),
            "saving_low_frac": round(self.saving_low_frac, 4),
            "saving_high_frac": round(self.saving_high_frac, 4),
            "graphed_as_traced_us": ns_to_us(self.graphed_as_traced_ns),
        }


def job_estimate(
    timeline: Timeline,
    steps: Mapping[int, RegionDiagnosis],
    calibration: Any,
    *,
    eager_unprofiled_ns: int | None = None,
) -> JobEstimate | None:
    """The job estimate of ``steps`` (each process's step:
    :func:`~traceinspect.analysis.diagnose.process_steps`); None unless at least two
    processes with a step run collective kernels and :data:`MIN_PAIRED_STEPS` of their
    occurrences pair up. ``eager_unprofiled_ns``: a measured step time (``--eager-us``)."""
    from traceinspect.analysis.estimate import estimate_region

    ranked = {p: r for p, r in steps.items() if p >= 0 and r.estimate is not None}
    if len(ranked) < 2:
        return None
    gpu = timeline.gpu
    if "collective" not in gpu.columns:
        return None
    collective = gpu["collective"].to_numpy(bool)
    pid = gpu["pid"].to_numpy(np.int64)
    processes = sorted(ranked)
    if sum(bool((collective & (pid == p)).any()) for p in processes) < 2:
        return None
    start = gpu["start_ns"].to_numpy(np.int64)
    end = gpu["end_ns"].to_numpy(np.int64)
    paired = _paired_occurrences([ranked[p] for p in processes], start, end)
    if len(paired) < MIN_PAIRED_STEPS:
        return None
    rows = [
        np.concatenate([ranked[p].region.rows[k] for p, k in zip(processes, ks, strict=True)])
        for ks in paired
    ]
    walls = [
        max(int(ranked[p].region.wall_ns[k]) for p, k in zip(processes, ks, strict=True))
        for ks in paired
    ]
    free = wait_free_ends(gpu["name"].to_numpy(object), pid, start, end, collective)
    in_steps = np.unique(np.concatenate(rows))
    held = in_steps[collective[in_steps]]
    waits = [int((end[r[collective[r]]] - free[r[collective[r]]]).sum()) for r in rows]
    freed = replace(timeline, gpu=gpu.assign(end_ns=free))
    replayed = estimate_region(
        freed, rows, walls, calibration, eager_unprofiled_ns=eager_unprofiled_ns
    )
    if replayed is None:
        return None
    # The eager job runs at its slowest rank's pace: each rank's own step estimate, waits
    # included, as the per-process table shows them.
    own = [e for e in (ranked[p].estimate for p in processes) if e is not None]  # all of them
    return _job(
        processes,
        steps=len(paired),
        collectives=len(held),
        waits=waits,
        replay=(replayed.graphed_ns, replayed.low_ns, replayed.high_ns),
        own=own,
    )


class _OwnStep(Protocol):
    """What the job takes of each rank's own step estimate (a :class:`RegionEstimate` or a
    folder's :class:`RankStep`)."""

    @property
    def eager_ns(self) -> int: ...
    @property
    def eager_low_ns(self) -> int: ...
    @property
    def eager_high_ns(self) -> int: ...
    @property
    def eager_source(self) -> str: ...
    @property
    def graphed_ns(self) -> int: ...


def _job(
    processes: Sequence[int],
    *,
    steps: int,
    collectives: int,
    waits: Sequence[int],
    replay: tuple[int, int, int],
    own: Sequence[_OwnStep],
) -> JobEstimate:
    """The :class:`JobEstimate` of ``replay`` (the job's step replayed: time, low, high),
    its eager side the slowest of the ranks' ``own`` step estimates, waits included (the
    job ran at that rank's pace)."""
    graphed, low, high = replay
    slowest = max(own, key=lambda e: e.eager_ns)
    eager, eager_low, eager_high = slowest.eager_ns, slowest.eager_low_ns, slowest.eager_high_ns
    return JobEstimate(
        processes=tuple(processes),
        steps=steps,
        collectives=collectives,
        wait_ns=int(np.median(waits)),
        graphed_ns=graphed,
        low_ns=low,
        high_ns=high,
        eager_ns=eager,
        eager_source=slowest.eager_source,
        saving_frac=(eager - graphed) / eager if eager > 0 else 0.0,
        saving_low_frac=1.0 - high / eager_low if eager_low > 0 else 0.0,
        saving_high_frac=1.0 - low / eager_high if eager_high > 0 else 0.0,
        graphed_as_traced_ns=max(e.graphed_ns for e in own),
    )


def _paired_occurrences(
    steps: Sequence[RegionDiagnosis], start: IntArray, end: IntArray
) -> list[tuple[int, ...]]:
    """Per occurrence of the first process's step, the occurrence of every process's step
    (the first's own included) whose GPU window (first to last activity: ``start``/``end``
    of ``timeline.gpu``) overlaps its own most (:func:`paired_windows`)."""
    return paired_windows([_gpu_windows(s, start, end) for s in steps])


def paired_windows(windows: Sequence[tuple[IntArray, IntArray]]) -> list[tuple[int, ...]]:
    """Per occurrence of the first process's step (``windows[0]``: its occurrences' GPU
    windows, begins and ends), the occurrence of every process's step (the first's own
    included) whose GPU window overlaps its own most — the ranks' GPUs meet in every
    collective, where their hosts may run a step apart. Occurrences some process has no
    overlapping one for are left out, as is a pairing that takes one occurrence twice."""
    out: list[tuple[int, ...]] = []
    taken: list[set[int]] = [set() for _ in windows]
    for lo, hi in zip(*windows[0], strict=True):
        ks: list[int] = []
        for begins, ends in windows:
            overlap = np.minimum(ends, hi) - np.maximum(begins, lo)
            best = int(np.argmax(overlap)) if len(overlap) else -1
            if best < 0 or overlap[best] <= 0:
                break
            ks.append(best)
        if len(ks) != len(windows) or any(k in t for k, t in zip(ks, taken, strict=True)):
            continue
        for k, t in zip(ks, taken, strict=True):
            t.add(k)
        out.append(tuple(ks))
    return out


def _gpu_windows(
    step: RegionDiagnosis, start: IntArray, end: IntArray
) -> tuple[IntArray, IntArray]:
    """Each occurrence's GPU window; an occurrence without GPU work an empty one."""
    rows = step.region.rows
    begins = np.array([start[r].min() if len(r) else 0 for r in rows], np.int64)
    ends = np.array([end[r].max() if len(r) else 0 for r in rows], np.int64)
    return begins, ends


def wait_free_ends(
    names: Any, pid: IntArray, start: IntArray, end: IntArray, collective: Any
) -> IntArray:
    """``end`` with each collective kernel ending at its start plus its wait-free time: the
    shortest duration among it and, on each other process, the kernel of the same name whose
    end is nearest its own (within its duration: the ranks' kernels of one collective end
    together). Vectorized per name and pair of processes."""
    free = np.array(end, np.int64, copy=True)
    rows = np.flatnonzero(np.asarray(collective, bool))
    if len(rows) == 0:
        return free
    start, end = np.asarray(start, np.int64), np.asarray(end, np.int64)
    duration = end - start
    shortest = duration[rows].copy()
    codes, _ = pd.factorize(np.asarray(names, object)[rows])
    owners = np.asarray(pid, np.int64)[rows]
    for code in np.unique(codes):
        same = codes == code
        for p in np.unique(owners[same]):
            mine = np.flatnonzero(same & (owners == p))
            for q in np.unique(owners[same]):
                if q == p:
                    continue
                theirs = np.flatnonzero(same & (owners == q))
                order = theirs[np.argsort(end[rows[theirs]], kind="stable")]
                ends = end[rows[order]]
                at = np.searchsorted(ends, end[rows[mine]])
                before = np.clip(at - 1, 0, len(ends) - 1)
                after = np.clip(at, 0, len(ends) - 1)
                gap_before = np.abs(ends[before] - end[rows[mine]])
                gap_after = np.abs(ends[after] - end[rows[mine]])
                nearest = np.where(gap_before <= gap_after, before, after)
                near = np.minimum(gap_before, gap_after) <= duration[rows[mine]]
                partner = duration[rows[order[nearest]]]
                shortest[mine] = np.where(near, np.minimum(shortest[mine], partner), shortest[mine])
    free[rows] = start[rows] + shortest
    return free


# A folder of per-rank traces (``traceinspect analyze DIR``): each rank's trace is read in its
# own worker, so the ranks never share one timeline. The job estimate runs in two passes
# over the ranks: each worker first returns its step's collectives (:func:`rank_step`, a few
# numbers a kernel); the wait-free time of each collective comes from setting the ranks'
# lists side by side (:func:`plan_ranks_job`); each worker then replays its own step with
# those (:func:`replay_rank_step`), and the job takes the slowest rank per step
# (:func:`ranks_job_estimate`). Clocks of different hosts need not agree: the steps pair by
# their order where every rank traced as many (a profiler schedule traces the same steps on
# every rank), and the collectives of a step by name and order.


@dataclass(frozen=True)
class RankStep:
    """One rank's step as the job estimate of a folder needs it from that rank's own trace
    (:func:`rank_step`): small, it crosses back from the worker that read the trace."""

    #: The step region's name (:attr:`TraceAnalysis.step`).
    name: str
    #: Per occurrence, its GPU window (first activity's start, last one's end, ns).
    begins: tuple[int, ...]
    ends: tuple[int, ...]
    #: Per occurrence, its collective kernels in start order: (name, duration ns).
    collectives: tuple[tuple[tuple[str, int], ...], ...]
    #: The rank's own step estimate: eager time (and its range and source), replay time.
    eager_ns: int
    eager_low_ns: int
    eager_high_ns: int
    eager_source: str
    graphed_ns: int


def rank_step(analysis: TraceAnalysis) -> RankStep | None:
    """The :class:`RankStep` of one rank's :class:`~traceinspect.analysis.result.
    TraceAnalysis`; None without a step estimate or a collective kernel in the step."""
    step = analysis.step
    if step is None or step.estimate is None or step.region.source == "whole_trace":
        return None
    gpu = analysis.timeline.gpu
    if "collective" not in gpu.columns or len(gpu) == 0:
        return None
    collective = gpu["collective"].to_numpy(bool)
    start = gpu["start_ns"].to_numpy(np.int64)
    end = gpu["end_ns"].to_numpy(np.int64)
    names = gpu["name"].to_numpy(object)
    lists = []
    for rows in step.region.rows:
        held = _collective_rows(rows, collective, start)
        lists.append(tuple((str(names[i]), int(end[i] - start[i])) for i in held))
    if not any(lists):
        return None
    begins, ends = _gpu_windows(step, start, end)
    estimate = step.estimate
    return RankStep(
        name=step.region.name,
        begins=tuple(int(b) for b in begins),
        ends=tuple(int(e) for e in ends),
        collectives=tuple(lists),
        eager_ns=int(estimate.eager_ns),
        eager_low_ns=int(estimate.eager_low_ns),
        eager_high_ns=int(estimate.eager_high_ns),
        eager_source=str(estimate.eager_source),
        graphed_ns=int(estimate.graphed_ns),
    )


def _collective_rows(rows: IntArray, collective: Any, start: IntArray) -> IntArray:
    """The collective kernels among ``rows`` (positions in ``timeline.gpu``), by start."""
    rows = np.asarray(rows, np.int64)
    held = rows[collective[rows]]
    out: IntArray = held[np.argsort(start[held], kind="stable")]
    return out


@dataclass(frozen=True)
class RanksJobPlan:
    """What each rank replays in the job estimate of a folder (:func:`plan_ranks_job`)."""

    #: Per paired step, each rank's occurrence (in the order of the ranks given).
    paired: tuple[tuple[int, ...], ...]
    #: Per rank, per paired step, its collectives' wait-free durations (ns, in start order).
    free_ns: tuple[tuple[tuple[int, ...], ...], ...]
    #: Per paired step, the collective time beyond the wait-free times, over all ranks.
    waits_ns: tuple[int, ...]
    collectives: int

    def task(self, rank: int) -> tuple[list[int], list[list[int]]]:
        """Rank ``rank``'s share for :func:`replay_rank_step`: its occurrences and their
        collectives' wait-free durations."""
        return [ks[rank] for ks in self.paired], [list(f) for f in self.free_ns[rank]]


def plan_ranks_job(steps: Sequence[RankStep]) -> RanksJobPlan | None:
    """The paired steps of ``steps`` (one per rank, at least two) and each collective's
    wait-free duration: the shortest of that collective's kernels over the ranks, a
    collective being the ``i``-th kernel of its name in the step on every rank (where the
    ranks ran as many of that name in the step; else each keeps its own). Steps pair by
    their order where every rank has as many, else by their GPU windows
    (:func:`paired_windows`, for ranks on one clock). None with fewer than
    :data:`MIN_PAIRED_STEPS` paired; at most ``MAX_ESTIMATED_OCCURRENCES`` are kept, evenly
    spaced."""
    from traceinspect.analysis.estimate.region import MAX_ESTIMATED_OCCURRENCES

    if len(steps) < 2:
        return None
    counts = {len(s.begins) for s in steps}
    if len(counts) == 1:
        paired = [tuple([k] * len(steps)) for k in range(counts.pop())]
    else:
        paired = paired_windows(
            [(np.array(s.begins, np.int64), np.array(s.ends, np.int64)) for s in steps]
        )
    paired = [ks for ks in paired if any(s.collectives[k] for s, k in zip(steps, ks, strict=True))]
    if len(paired) < MIN_PAIRED_STEPS:
        return None
    if len(paired) > MAX_ESTIMATED_OCCURRENCES:
        picked = np.unique(np.linspace(0, len(paired) - 1, MAX_ESTIMATED_OCCURRENCES).round())
        paired = [paired[int(i)] for i in picked]
    free: list[list[tuple[int, ...]]] = [[] for _ in steps]
    waits = []
    for ks in paired:
        lists = [s.collectives[k] for s, k in zip(steps, ks, strict=True)]
        shortest = [[d for _, d in kernels] for kernels in lists]
        # Per rank, the positions of each name's kernels, in order.
        where: list[dict[str, list[int]]] = []
        for kernels in lists:
            mine: dict[str, list[int]] = {}
            for i, (n, _) in enumerate(kernels):
                mine.setdefault(n, []).append(i)
            where.append(mine)
        for name, first in where[0].items():
            at = [mine.get(name, []) for mine in where]
            if any(len(a) != len(first) for a in at):
                continue  # the ranks ran it a different number of times: no telling which
            for ordinal in range(len(first)):
                least = min(s[a[ordinal]] for s, a in zip(shortest, at, strict=True))
                for s, a in zip(shortest, at, strict=True):
                    s[a[ordinal]] = least
        waits.append(
            sum(
                d - f
                for kernels, s in zip(lists, shortest, strict=True)
                for (_, d), f in zip(kernels, s, strict=True)
            )
        )
        for r, s in enumerate(shortest):
            free[r].append(tuple(s))
    return RanksJobPlan(
        paired=tuple(paired),
        free_ns=tuple(tuple(f) for f in free),
        waits_ns=tuple(waits),
        collectives=sum(
            len(s.collectives[k]) for ks in paired for s, k in zip(steps, ks, strict=True)
        ),
    )


def replay_rank_step(
    timeline: Timeline,
    name: str,
    occurrences: Sequence[int],
    free_ns: Sequence[Sequence[int]],
    calibration: Any,
) -> list[tuple[int, int, int]]:
    """One rank's step (found as :func:`~traceinspect.analysis.diagnose.diagnose` finds it,
    and named ``name``, as :func:`rank_step` read it) replayed at the ``occurrences`` given,
    their collective kernels (in start order) taking the durations ``free_ns``: per
    occurrence, its replay's time and range (ns)."""
    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.estimate import plan_region
    from traceinspect.analysis.regions import find_regions_left_out, step_region

    regions, _ = find_regions_left_out(timeline, index_timeline(timeline))
    step = step_region(regions)
    if step is None or step.name != name:
        raise ValueError(f"the trace no longer holds the step {name!r}")
    gpu = timeline.gpu
    collective = gpu["collective"].to_numpy(bool)
    start = gpu["start_ns"].to_numpy(np.int64)
    free = gpu["end_ns"].to_numpy(np.int64).copy()
    for k, durations in zip(occurrences, free_ns, strict=True):
        held = _collective_rows(step.rows[k], collective, start)
        if len(held) != len(durations):
            raise ValueError(
                f"step occurrence {k}: {len(held)} collectives, {len(durations)} given"
            )
        free[held] = start[held] + np.asarray(durations, np.int64)
    freed = replace(timeline, gpu=gpu.assign(end_ns=free))
    plan = plan_region(
        freed,
        [step.rows[k] for k in occurrences],
        [int(step.wall_ns[k]) for k in occurrences],
        calibration,
    )
    if plan is None:
        raise ValueError("no GPU work in the step's occurrences")
    if len(plan.jobs) != len(occurrences):
        raise ValueError("an occurrence without GPU work")
    estimates = [job()[0] for job in plan.jobs]
    return [(e.graphed_ns, e.low_ns, e.high_ns) for e in estimates]


def ranks_job_estimate(
    ranks: Sequence[int],
    steps: Sequence[RankStep],
    plan: RanksJobPlan,
    replays: Sequence[Sequence[tuple[int, int, int]]],
) -> JobEstimate:
    """The job estimate of a folder from each rank's :func:`replay_rank_step` (in the order
    of ``steps``): per paired step the slowest rank's replay (ranks replay side by side, as
    the occurrences of one trace's ranks do), medians over the steps; the eager side the
    slowest rank's own step estimate's, waits included."""
    from traceinspect.analysis.estimate.region import replay_range

    per_step = [[replays[r][j] for r in range(len(steps))] for j in range(len(plan.paired))]
    # Per step, the slowest rank's replay and the widest range (as one trace's ranks').
    replay = replay_range(
        [max(g for g, _, _ in ranks_) for ranks_ in per_step],
        [max(lo for _, lo, _ in ranks_) for ranks_ in per_step],
        [max(hi for _, _, hi in ranks_) for ranks_ in per_step],
    )
    return _job(
        ranks,
        steps=len(plan.paired),
        collectives=plan.collectives,
        waits=plan.waits_ns,
        replay=replay,
        own=steps,
    )
