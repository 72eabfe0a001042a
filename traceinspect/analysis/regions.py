"""Regions: the named ranges a diagnosis is reported for, and the GPU work each one launched.

A region is every occurrence of one annotation name from one source — ``record_function``
(``torch.profiler.record_function`` / kineto ``user_annotation``), ``nvtx`` ranges, or the
profiler's ``ProfilerStep#N`` (``profiler_step``) — with a trailing ``#N`` stripped, so
``ProfilerStep#3`` and ``ProfilerStep#4`` are two occurrences of ``ProfilerStep``. Regions
nest (``depth`` is the annotation's nesting on its thread). A trace without any of these
gets one region, ``whole trace`` (source ``whole_trace``), covering everything; so does a
trace whose ranges launched less than half of its GPU activities (then above them).

Regions belong to one process: in a multi-process trace (an Nsight Systems export of
``torchrun``, FSDP, DDP) each process's occurrences of a name are a region of their own
(``Region.process``), never mixed with another process's.

An occurrence owns the GPU activities whose launching host call (``gpu.launch_row``) starts
inside the occurrence's interval on the same process and thread — or, for occurrences on one
of the process's *main* threads, on any other thread of that process that works for them (the
autograd engine launches ``loss.backward()``'s kernels from its own thread, DDP's gradient
all-reduce from there too). The main threads of a process are those running the profiler
steps, or, where the process has none (Nsight Systems, NVTX ranges), the thread whose
outermost regions take the most time; the others work for them. Activities without a launch
record fall back to time: those starting on the GPU inside the interval, in the same process
(``Region.overlap_matched`` counts them, and trace health says so) — except those that ran
before the first launched activity of their stream, which were queued before the recording
began (:func:`~traceinspect.analysis.arrays.queued_before_recording`) and join no range.

Where no profiler step marks the steps, :func:`~traceinspect.analysis.steps.detect_steps`
looks for the repeating launch sequence; when it finds one that no annotated region already
marks, the trace gets a ``step (detected)`` region (source ``detected``: one occurrence per
repeat) and a ``startup`` region (everything the process launched before the first repeat:
weight upload, allocations, autotuning, compilation, warm-up), under ``whole trace``.

Kineto's ``gpu_user_annotation`` ranges (the GPU projection of a ``record_function``) are
not regions: they say where the region's kernels ran, which the launch links already give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np
import pandas as pd

from traceinspect.analysis.arrays import LAUNCH_KINDS, BoolArray, TimelineArrays
from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.steps import MIN_REPEATS, StepDetection, detect_steps, gpu_processes
from traceinspect.model import Timeline

#: Annotation sources that make regions.
REGION_SOURCES: Final = ("record_function", "nvtx", "profiler_step")
WHOLE_TRACE: Final = "whole trace"

#: At most this many regions are reported (those with the most total wall time; profiler
#: steps always): traces with per-op ranges would otherwise list thousands.
MAX_REGIONS: Final = 40

#: When the annotated regions together launched less than this share of the GPU activities,
#: the whole trace is reported as a region too (above them).
MIN_COVERED_SHARE: Final = 0.5

#: Names of the regions step detection adds.
DETECTED_STEP: Final = "step (detected)"
STARTUP: Final = "startup"
#: An annotated region marks the steps when this share of its occurrences starts at a
#: detected step's first activity (within :data:`BOUNDARY_SLACK` activities).
MARKS_STEPS_SHARE: Final = 0.8
BOUNDARY_SLACK: Final = 1


#: The occurrence number a range name carries (``ProfilerStep#12``): stripped to group them.
OCCURRENCE_SUFFIX: Final = re.compile(r"#\d+$")


def base_name(name: str) -> str:
    """The region a range belongs to: its name less a trailing ``#N``."""
    return OCCURRENCE_SUFFIX.sub("", name)


@dataclass(frozen=True)
class Region:
    """All occurrences of one named range, oldest first."""

    name: str
    source: str
    depth: int
    start_ns: IntArray  # per occurrence
    end_ns: IntArray
    pid: IntArray
    tid: IntArray
    #: Positions in ``timeline.gpu`` of the activities each occurrence launched (sorted).
    rows: list[IntArray] = field(default_factory=list)
    #: Activities matched by time overlap because they have no launch record.
    overlap_matched: int = 0
    #: The process whose occurrences these are, when the trace's regions span several
    #: processes; -1 when they come from one.
    process: int = -1
    #: For regions found by step detection (source ``detected``): what was found.
    detection: StepDetection | None = None
    #: The wall time (ns) of a last profiler step left out: one with no GPU work where the
    #: others have some, the step the profiler stopped in (0: none left out).
    cut_last_ns: int = 0
    #: Occurrences left out because they launched work the GPU ran only after the recording
    #: ended (:class:`_UnrecordedLaunches`): their GPU work is not in the trace.
    cut_unrecorded: int = 0

    @property
    def occurrences(self) -> int:
        return len(self.start_ns)

    @property
    def label(self) -> str:
        """The name, after ``[pid N]`` where the trace's regions span several processes (two
        processes' regions of one name read apart)."""
        return labelled(self.name, self.process)

    @property
    def wall_ns(self) -> IntArray:
        return self.end_ns - self.start_ns


def labelled(name: str, process: int) -> str:
    """:attr:`Region.label` of a region ``name`` of ``process`` (-1: the trace's regions
    come from one process)."""
    return name if process < 0 else f"[pid {process}] {name}"


@dataclass(frozen=True)
class LeftOut:
    """Annotated regions beyond :data:`MAX_REGIONS`, not analyzed: how many (a name, source
    and process each) and their share of all regions' total wall time."""

    regions: int = 0
    time_share: float = 0.0
    #: Regions none of whose occurrences' GPU work was recorded (each occurrence launched
    #: work the GPU ran after the recording ended), by name; and the launch calls the
    #: trace holds with no GPU activity after the last one with some, per process.
    unrecorded: tuple[str, ...] = ()
    unrecorded_launches: int = 0


def find_regions(
    timeline: Timeline, arrays: TimelineArrays, *, max_regions: int = MAX_REGIONS
) -> list[Region]:
    """Every region of ``timeline`` in display order (parents before the regions they hold),
    with its occurrences' GPU activities."""
    return find_regions_left_out(timeline, arrays, max_regions=max_regions)[0]


def find_regions_left_out(
    timeline: Timeline, arrays: TimelineArrays, *, max_regions: int = MAX_REGIONS
) -> tuple[list[Region], LeftOut]:
    """:func:`find_regions`, and the regions left out beyond ``max_regions``."""
    ann = timeline.annotations
    ann = ann[ann["source"].isin(REGION_SOURCES) & (ann["end_ns"] > ann["start_ns"])]
    if len(ann) == 0:
        return _with_detected_steps(timeline, arrays, [_whole_trace(timeline)]), LeftOut()
    names = ann["name"].to_numpy()
    unique, codes = np.unique(names, return_inverse=True)
    base = np.array([base_name(str(u)) for u in unique], dtype=object)[codes]
    frame = pd.DataFrame(
        {
            "base": base,
            "source": ann["source"].to_numpy(),
            "pid": ann["pid"].to_numpy(np.int64),
            "tid": ann["tid"].to_numpy(np.int64),
            "start": ann["start_ns"].to_numpy(np.int64),
            "end": ann["end_ns"].to_numpy(np.int64),
            "depth": ann["depth"].to_numpy(np.int64),
        }
    ).sort_values(["base", "source", "pid", "tid", "start"], kind="stable")
    several = frame["pid"].nunique() > 1
    candidates = []
    for (name, source, _), occ in frame.groupby(["base", "source", "pid"], sort=False):
        occ = _outermost(occ)
        total = int((occ["end"] - occ["start"]).sum())
        process = int(occ["pid"].iloc[0])
        key = (source == "profiler_step", total, str(name), process, str(source), occ)
        candidates.append(key)
    candidates.sort(key=lambda c: (not c[0], -c[1], c[2], c[3]))
    matcher = _LaunchMatcher(arrays)
    unrecorded = _UnrecordedLaunches(timeline, arrays)
    main = main_threads(ann)
    regions: list[Region] = []
    dropped: list[str] = []
    taken = 0  # candidates looked at: the first max_regions whose GPU work was recorded
    for _, _, name, process, source, occ in candidates:
        if len(regions) == max_regions:
            break
        taken += 1
        occ = occ.sort_values("start", kind="stable")
        start = occ["start"].to_numpy(np.int64)
        end = occ["end"].to_numpy(np.int64)
        pid = occ["pid"].to_numpy(np.int64)
        tid = occ["tid"].to_numpy(np.int64)
        rows, overlap = matcher.rows(start, end, pid, tid, main)
        # An occurrence that launched work the GPU ran after the recording ended is missing
        # that work: its timings would be wrong, and "no GPU work" would be a lie.
        recorded = ~unrecorded.within(start, end, pid, tid, main)
        late = int(np.count_nonzero(~recorded))
        if late:
            if not recorded.any():
                dropped.append(labelled(name, process if several else -1))
                continue
            start, end, pid, tid = start[recorded], end[recorded], pid[recorded], tid[recorded]
            rows = [r for r, keep in zip(rows, recorded.tolist(), strict=True) if keep]
        cut = 0
        if source == "profiler_step" and _stopped_in_last(rows):
            # ``prof.step()`` after the last step opens one more, which the profiler's exit
            # closes a moment later with nothing in it: not a step of the workload.
            cut = int(end[-1] - start[-1])
            start, end, pid, tid, rows = start[:-1], end[:-1], pid[:-1], tid[:-1], rows[:-1]
        regions.append(
            Region(
                name=name,
                source=source,
                depth=int(occ["depth"].min()),
                start_ns=start,
                end_ns=end,
                pid=pid,
                tid=tid,
                rows=rows,
                overlap_matched=overlap,
                process=process if several else -1,
                cut_last_ns=cut,
                cut_unrecorded=late,
            )
        )
    beyond = candidates[taken:]
    all_time = sum(c[1] for c in candidates)
    left_out = LeftOut(
        len(beyond),
        sum(c[1] for c in beyond) / all_time if beyond and all_time else 0.0,
        unrecorded=tuple(dropped),
        unrecorded_launches=unrecorded.launches,
    )
    regions.sort(key=_display_order)
    if len(_launched_by(regions)) < MIN_COVERED_SHARE * len(timeline.gpu) or not regions:
        # The ranges miss most of the GPU work: the whole trace is the region that matters.
        whole = _whole_trace(timeline)
        regions = [whole, *(replace(r, depth=r.depth + 1) for r in regions)]
    return _with_detected_steps(timeline, arrays, regions), left_out


def _display_order(region: Region) -> tuple[int, int, int, int]:
    """Regions in the order they are listed: by process (one process's regions together,
    where there are several), then by start; a parent before the regions it holds."""
    return (region.process, int(region.start_ns[0]), region.depth, -int(region.wall_ns[0]))


def _stopped_in_last(rows: list[IntArray]) -> bool:
    """The last of several profiler steps holds no GPU activity and the others do."""
    return len(rows) >= 2 and len(rows[-1]) == 0 and all(len(r) for r in rows[:-1])


def _with_detected_steps(
    timeline: Timeline, arrays: TimelineArrays, regions: list[Region]
) -> list[Region]:
    """``regions`` plus ``startup`` and ``step (detected)`` when the trace repeats a launch
    sequence that neither profiler steps nor an annotated region mark — per process where
    the trace holds several processes' GPU work (an Nsight Systems export of ``torchrun``:
    each rank's steps, never mixed)."""
    if any(r.source == "profiler_step" for r in regions):
        return regions
    processes = gpu_processes(arrays)
    several = len(processes) > 1
    found = []
    for pid in processes if several else [None]:
        mine = [r for r in regions if not several or owner(r) == pid]
        if several and _covered_share(arrays, mine, pid) >= MIN_COVERED_SHARE:
            # Its own ranges hold most of its GPU work: they tell its steps, where a search
            # may cut its loop elsewhere (a gloo DDP rank beside its 12 train_step ranges:
            # 4 repeats of 151 calls, each starting at the optimizer).
            continue
        detection = detect_steps(timeline, arrays, pid)
        if detection is None:
            continue
        if not several and any(_cuts_elsewhere(arrays, r, detection) for r in mine):
            # A range the size of a step, repeating and holding most of the GPU work, tells
            # the steps where the search cut the loop elsewhere (an NCCL DDP rank's own trace:
            # 12 train_step ranges holding all of it, where the search found 4 repeats of
            # 135 calls, each starting at the optimizer, and called what came before them
            # the startup). Where the steps found start where its occurrences do (8
            # Optimizer.step ranges, 6 steps found and 1 warm-up), they stand.
            continue
        if not any(_marks_steps(r, detection) for r in mine):
            found.append(detection)
    if not found:
        return regions
    added = [
        region
        for detection in found
        for region in _detected_regions(detection, detection.pid if several else -1)
    ]
    whole = next((r for r in regions if r.source == "whole_trace"), None)
    others = [r for r in regions if r.source != "whole_trace"]
    if whole is None:
        whole = _whole_trace(timeline)
        others = [replace(r, depth=r.depth + 1) for r in others]
    # Annotated ranges inside the steps (of their own process) sit under the step.
    others = [
        replace(r, depth=r.depth + 1)
        if any(_inside(r, d) for d in found if not several or owner(r) == d.pid)
        else r
        for r in others
    ]
    ordered = sorted([*added, *others], key=_display_order)
    return [whole, *ordered]


def _launched_by(regions: Sequence[Region]) -> IntArray:
    """The GPU activities (rows) ``regions`` launched, each once; ``whole trace`` left out."""
    held = [np.concatenate(r.rows) for r in regions if r.source != "whole_trace" and r.rows]
    return np.unique(np.concatenate(held)) if held else np.empty(0, np.int64)


def _covered_share(arrays: TimelineArrays, regions: Sequence[Region], pid: int | None) -> float:
    """The share of process ``pid``'s GPU activities that ``regions`` launched."""
    total = int(np.count_nonzero(arrays.pid == pid))
    launched = _launched_by(regions)
    return int(np.count_nonzero(arrays.pid[launched] == pid)) / total if total else 0.0


def _cuts_elsewhere(arrays: TimelineArrays, region: Region, detection: StepDetection) -> bool:
    """Whether ``region``, an annotated range of :data:`~traceinspect.analysis.steps.
    MIN_REPEATS` occurrences or more that launched at least :data:`MIN_COVERED_SHARE` of the
    GPU activities, each about a detected step's size (:data:`MARKS_STEPS_SHARE` of it or
    more), holds steps that ``detection`` cut elsewhere: fewer than :data:`MARKS_STEPS_SHARE`
    of the detected steps start where one of its occurrences starts."""
    if region.source in ("whole_trace", "detected") or region.occurrences < MIN_REPEATS:
        return False
    held = [r for r in region.rows if len(r)]
    if len(held) < MIN_REPEATS or not len(arrays.pid):
        return False
    if len(np.unique(np.concatenate(held))) < MIN_COVERED_SHARE * len(arrays.pid):
        return False
    steps = [r for r in detection.rows if len(r)]
    if not steps or not _step_sized(held, steps):
        return False
    firsts = np.sort(np.array([int(r[0]) for r in held], np.int64))
    starts = np.array([int(r[0]) for r in steps], np.int64)
    return _share_at(starts, firsts) < MARKS_STEPS_SHARE


def owner(region: Region) -> int:
    """The process ``region`` belongs to: :attr:`Region.process`, or, where the trace's
    ranges all come from one process (-1) while others ran GPU work too (NVTX ranges on rank
    0 alone), the one its occurrences ran in; -1 for a region of several (the whole trace)."""
    if region.process >= 0:
        return region.process
    pids = np.unique(region.pid)
    return int(pids[0]) if len(pids) == 1 else -1


def _detected_regions(detection: StepDetection, process: int) -> list[Region]:
    """``startup`` (where the process launched anything before its first step) and
    ``step (detected)`` of one detection."""
    n = detection.occurrences
    step = Region(
        name=DETECTED_STEP,
        source="detected",
        depth=1,
        start_ns=detection.start_ns,
        end_ns=detection.end_ns,
        pid=np.full(n, detection.pid, np.int64),
        tid=np.full(n, detection.tid, np.int64),
        rows=list(detection.rows),
        process=process,
        detection=detection,
    )
    if not len(detection.startup_rows):
        return [step]
    startup = Region(
        name=STARTUP,
        source="detected",
        depth=1,
        start_ns=np.array([detection.startup_start_ns], np.int64),
        end_ns=np.array([detection.startup_end_ns], np.int64),
        pid=np.array([detection.pid], np.int64),
        tid=np.array([detection.tid], np.int64),
        rows=[detection.startup_rows],
        process=process,
        detection=detection,
    )
    return [startup, step]


def _inside(region: Region, detection: StepDetection) -> bool:
    """Whether the region's first occurrence starts inside a detected step."""
    t = int(region.start_ns[0])
    i = int(np.searchsorted(detection.start_ns, t, side="right")) - 1
    return i >= 0 and t < int(detection.end_ns[i])


def _marks_steps(region: Region, detection: StepDetection) -> bool:
    """Whether ``region``'s occurrences start where the detected steps start: the steps are
    annotated already (the detector found what the annotations say)."""
    if region.source == "whole_trace" or region.occurrences < MIN_REPEATS:
        return False
    firsts = np.array([int(r[0]) for r in region.rows if len(r)], np.int64)
    detected = np.sort(np.array([int(r[0]) for r in detection.rows if len(r)], np.int64))
    if len(firsts) < MIN_REPEATS or len(detected) == 0:
        return False
    # A range that starts with the step but holds only part of it (the optimizer's
    # ``Optimizer.step#...``) does not mark it.
    if not _step_sized([r for r in region.rows if len(r)], detection.rows):
        return False
    return _share_at(firsts, detected) >= MARKS_STEPS_SHARE


def _step_sized(occurrences: Sequence[IntArray], steps: Sequence[IntArray]) -> bool:
    """Whether a range's ``occurrences`` (their activities) are about a detected step's size:
    :data:`MARKS_STEPS_SHARE` of the ``steps``' median or more."""
    held = np.median([len(r) for r in occurrences])
    return bool(held >= MARKS_STEPS_SHARE * np.median([len(r) for r in steps]))


def _share_at(points: IntArray, anchors: IntArray) -> float:
    """The share of ``points`` (activity rows) within :data:`BOUNDARY_SLACK` activities of
    one of ``anchors`` (sorted, at least one)."""
    i = (
        np.clip(np.searchsorted(anchors, points), 1, len(anchors) - 1)
        if len(anchors) > 1
        else np.zeros(len(points), np.int64)
    )
    nearest = np.minimum(
        np.abs(anchors[i] - points), np.abs(anchors[np.maximum(i - 1, 0)] - points)
    )
    return float(np.mean(nearest <= BOUNDARY_SLACK))


def main_threads(annotations: pd.DataFrame) -> set[tuple[int, int]]:
    """(pid, tid) of each process's main threads: those running the profiler steps, or, in a
    process without steps, the one thread whose outermost regions take the most time. The
    process's other threads (the autograd engine's) launch on their behalf."""
    ann = annotations[annotations["source"].isin(REGION_SOURCES) & (annotations["pid"] >= 0)]
    step = (ann["source"] == "profiler_step").to_numpy()
    main = set(
        zip(
            ann["pid"].to_numpy(np.int64)[step].tolist(),
            ann["tid"].to_numpy(np.int64)[step].tolist(),
            strict=True,
        )
    )
    stepped = {p for p, _ in main}
    outer = ann[(ann["depth"] == 0) & ~ann["pid"].isin(list(stepped))]
    if len(outer):
        wall = (outer["end_ns"] - outer["start_ns"]).groupby([outer["pid"], outer["tid"]]).sum()
        busiest = wall.sort_values(ascending=False, kind="stable").groupby(level=0).head(1)
        main |= {(int(p), int(t)) for p, t in busiest.index}
    return main


def step_region(regions: Sequence[Region]) -> Region | None:
    """The region one step of the workload is: the profiler steps, else the detected step
    (:mod:`~traceinspect.analysis.steps`), else the top-level region with the most total
    wall time. A measured eager step time (``--eager-us``) belongs to it,
    and per-rank tables report it."""
    steps = [r for r in regions if r.source == "profiler_step"] or [
        r for r in regions if r.source == "detected" and r.name == DETECTED_STEP
    ]
    if steps:
        return steps[0]
    top = [r for r in regions if r.depth == 0]
    return max(top, key=lambda r: int(r.wall_ns.sum()), default=None)


def occurrence_rows(timeline: Timeline, region: Region) -> list[IntArray]:
    """The GPU activities (positions in ``timeline.gpu``) each occurrence of ``region``
    launched, sorted by start."""
    return region.rows


def _outermost(occ: pd.DataFrame) -> pd.DataFrame:
    """Drop occurrences nested inside an earlier one of the same name on the same thread
    (recursion), so occurrences never overlap. ``occ`` is sorted by pid, tid, start."""
    if len(occ) < 2:
        return occ
    start = occ["start"].to_numpy(np.int64)
    end = occ["end"].to_numpy(np.int64)
    thread = occ["pid"].to_numpy(np.int64) * (1 << 32) + occ["tid"].to_numpy(np.int64)
    keep = np.ones(len(occ), bool)
    reach = end[0]
    for i in range(1, len(occ)):  # per occurrence of one name: few
        if thread[i] == thread[i - 1] and start[i] < reach:
            keep[i] = False
            continue
        reach = end[i] if thread[i] != thread[i - 1] else max(reach, end[i])
    return occ[keep]


class _UnrecordedLaunches:
    """Launch calls whose GPU work the recording ended before: calls that launch GPU work
    (kernels, graphs, copies, memsets) with no activity in the trace, made after the last
    such call of their process that has one. A host that runs ahead of its GPU (a training
    loop hundreds of ms ahead, the queue full) launches work in a recording's last moments
    that the GPU runs after the recording stopped; an Nsight Systems export of a fixed
    window cuts both ends so (the two-process FSDP one: 1,140 such calls per process, the
    host 424 ms ahead). Calls without activity earlier in the trace are left alone (a launch
    that failed, a copy of nothing)."""

    def __init__(self, timeline: Timeline, arrays: TimelineArrays) -> None:
        host = timeline.host
        launching = host["kind"].isin(LAUNCH_KINDS).to_numpy(bool)
        pid = host["pid"].to_numpy(np.int64)
        tid = host["tid"].to_numpy(np.int64)
        start = arrays.host_start
        ran = np.zeros(len(host), bool)
        ran[arrays.launch_row[arrays.launch_row >= 0]] = True
        late = np.zeros(len(host), bool)
        for p in np.unique(pid[launching & ran]).tolist():
            mine = launching & (pid == p)
            late |= mine & ~ran & (start > start[mine & ran].max())
        rows = np.flatnonzero(late)
        order = np.lexsort((start[rows], tid[rows], pid[rows]))
        rows = rows[order]
        self.launches = len(rows)
        self._start = start[rows]
        self._threads = _slices(pid[rows], tid[rows])

    def within(
        self,
        start: IntArray,
        end: IntArray,
        pid: IntArray,
        tid: IntArray,
        main: set[tuple[int, int]],
    ) -> BoolArray:
        """Per occurrence: whether it made such a call (by the launch matching's threads)."""
        out = np.zeros(len(start), bool)
        if self.launches:
            for i, _, _ in _thread_spans(self._threads, self._start, start, end, pid, tid, main):
                out[i] = True
        return out


class _LaunchMatcher:
    """Finds the activities launched from a thread inside given intervals."""

    def __init__(self, arrays: TimelineArrays) -> None:
        launched = np.flatnonzero(arrays.launch_row >= 0)
        order = np.lexsort(
            (arrays.launch_start[launched], arrays.tid[launched], arrays.pid[launched])
        )
        self._launched = launched[order]
        self._launch_time = arrays.launch_start[self._launched]
        self._threads = _slices(arrays.pid[self._launched], arrays.tid[self._launched])
        # Work queued before the recording began belongs to no range (and would otherwise
        # join whatever range the host was in while the GPU worked through it).
        unlaunched = np.flatnonzero((arrays.launch_row < 0) & ~arrays.queued_before)
        order = np.lexsort((arrays.start[unlaunched], arrays.pid[unlaunched]))
        self._unlaunched = unlaunched[order]
        self._gpu_start = arrays.start[self._unlaunched]
        self._processes = _slices(arrays.pid[self._unlaunched], None)

    def rows(
        self,
        start: IntArray,
        end: IntArray,
        pid: IntArray,
        tid: IntArray,
        main: set[tuple[int, int]],
    ) -> tuple[list[IntArray], int]:
        """Rows per occurrence.

        Launches from the occurrence's thread count; when that thread is a ``main`` one
        (it runs the profiler steps), so do launches from the other threads of its process
        (the autograd engine's thread runs the kernels of ``loss.backward()``).
        """
        n = len(start)
        extra: list[list[IntArray]] = [[] for _ in range(n)]
        spans = _thread_spans(self._threads, self._launch_time, start, end, pid, tid, main)
        for i, l0, l1 in spans:
            extra[i].append(self._launched[l0:l1])
        matched = [len(e) for e in extra]
        # Activities without a launch record, by GPU start time, in the same process (or any
        # process when the trace does not say which launched them).
        for (p, _), (a, b) in self._processes.items():
            mine = np.flatnonzero(pid == p) if p != -1 else np.arange(n)
            if len(mine) == 0:
                continue
            times = self._gpu_start[a:b]
            ulo = a + np.searchsorted(times, start[mine], side="left")
            uhi = a + np.searchsorted(times, end[mine], side="left")
            for i, u0, u1 in zip(mine.tolist(), ulo.tolist(), uhi.tolist(), strict=True):
                if u1 > u0:
                    extra[i].append(self._unlaunched[u0:u1])
        rows: list[IntArray] = []
        overlap: int = 0
        for i in range(n):  # per occurrence: slices, no per-activity work
            if not extra[i]:
                rows.append(np.empty(0, np.int64))
                continue
            overlap += int(sum(len(e) for e in extra[i][matched[i] :]))
            rows.append(np.sort(np.concatenate(extra[i])))
        return rows, overlap


def _thread_spans(
    threads: dict[tuple[int, int], tuple[int, int]],
    times: IntArray,
    start: IntArray,
    end: IntArray,
    pid: IntArray,
    tid: IntArray,
    main: set[tuple[int, int]],
) -> list[tuple[int, int, int]]:
    """(occurrence, lo, hi): the non-empty ``[lo, hi)`` of ``times`` (host calls sorted by
    process, thread and start; ``threads`` their runs per (pid, tid)) that start inside each
    occurrence, on its own thread — or, where that thread is a ``main`` one, on any thread of
    its process that is not (the autograd engine's, which launches ``loss.backward()``)."""
    helped = np.array(
        [(q, u) in main for q, u in zip(pid.tolist(), tid.tolist(), strict=True)], bool
    )
    out = []
    for (p, t), (a, b) in threads.items():
        same = (pid == p) & (tid == t)
        if len(main) and (p, t) not in main:
            same |= (pid == p) & helped
        mine = np.flatnonzero(same)
        if len(mine) == 0:
            continue
        lo = a + np.searchsorted(times[a:b], start[mine], side="left")
        hi = a + np.searchsorted(times[a:b], end[mine], side="left")
        out += [
            (i, l0, l1)
            for i, l0, l1 in zip(mine.tolist(), lo.tolist(), hi.tolist(), strict=True)
            if l1 > l0
        ]
    return out


def _slices(pid: IntArray, tid: IntArray | None) -> dict[tuple[int, int], tuple[int, int]]:
    """(pid, tid) -> [lo, hi) of the runs of equal keys in arrays sorted by those keys."""
    if len(pid) == 0:
        return {}
    key = np.stack([pid, tid if tid is not None else np.zeros_like(pid)], axis=1)
    change = np.ones(len(pid), bool)
    change[1:] = (key[1:] != key[:-1]).any(axis=1)
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], len(pid))
    return {
        (int(key[a, 0]), int(key[a, 1])): (int(a), int(b))
        for a, b in zip(starts, ends, strict=True)
    }


def _whole_trace(timeline: Timeline) -> Region:
    starts = [int(t["start_ns"].min()) for t in timeline.tables().values() if len(t)]
    ends = [int(t["end_ns"].max()) for t in timeline.tables().values() if len(t)]
    start, end = (min(starts), max(ends)) if starts else (0, 0)
    return Region(
        name=WHOLE_TRACE,
        source="whole_trace",
        depth=0,
        start_ns=np.array([start], np.int64),
        end_ns=np.array([end], np.int64),
        pid=np.array([-1], np.int64),
        tid=np.array([-1], np.int64),
        rows=[np.arange(len(timeline.gpu), dtype=np.int64)],
    )
