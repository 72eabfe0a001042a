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
from typing import Any, Final

import numpy as np
import pandas as pd

from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.result import RegionDiagnosis
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
    slowest = max(own, key=lambda e: e.eager_ns)
    eager, eager_low, eager_high = slowest.eager_ns, slowest.eager_low_ns, slowest.eager_high_ns
    return JobEstimate(
        processes=tuple(processes),
        steps=len(paired),
        collectives=len(held),
        wait_ns=int(np.median(waits)),
        graphed_ns=replayed.graphed_ns,
        low_ns=replayed.low_ns,
        high_ns=replayed.high_ns,
        eager_ns=eager,
        eager_source=slowest.eager_source,
        saving_frac=(eager - replayed.graphed_ns) / eager if eager > 0 else 0.0,
        saving_low_frac=1.0 - replayed.high_ns / eager_low if eager_low > 0 else 0.0,
        saving_high_frac=1.0 - replayed.low_ns / eager_high if eager_high > 0 else 0.0,
        graphed_as_traced_ns=max(e.graphed_ns for e in own),
    )


def _paired_occurrences(
    steps: Sequence[RegionDiagnosis], start: IntArray, end: IntArray
) -> list[tuple[int, ...]]:
    """Per occurrence of the first process's step, the occurrence of every process's step
    (the first's own included) whose GPU window (first to last activity: ``start``/``end``
    of ``timeline.gpu``) overlaps its own most — the ranks' GPUs meet in every collective,
    where their hosts may run a step apart. Occurrences some process has no overlapping one
    for are left out, as is a pairing that takes one occurrence twice."""
    windows = [_gpu_windows(s, start, end) for s in steps]
    out: list[tuple[int, ...]] = []
    taken: list[set[int]] = [set() for _ in steps]
    for lo, hi in zip(*windows[0], strict=True):
        ks: list[int] = []
        for begins, ends in windows:
            overlap = np.minimum(ends, hi) - np.maximum(begins, lo)
            best = int(np.argmax(overlap)) if len(overlap) else -1
            if best < 0 or overlap[best] <= 0:
                break
            ks.append(best)
        if len(ks) != len(steps) or any(k in t for k, t in zip(ks, taken, strict=True)):
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
