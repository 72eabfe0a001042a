"""The result of analyzing one trace: :class:`TraceAnalysis`, computed once, read by every
renderer (terminal, JSON, HTML, ...) and returned by :func:`traceinspect.analyze`.

Everything here is frozen and typed; times are integer-valued ns (``*_ns``; medians over
occurrences may be halves). The DataFrame views (:attr:`TraceAnalysis.regions`,
``.kernels``, ``.gaps``, ``.health``) are built on first use from the typed objects and give
µs (``*_us``) as the JSON report does, through :func:`traceinspect.units.ns_to_us`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from traceinspect.analysis.capture import CaptureReport
from traceinspect.analysis.gaps import CAUSES, OTHER_DETAILS
from traceinspect.analysis.health import HealthWarning
from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.regions import Region
from traceinspect.analysis.summary import TraceSummary
from traceinspect.analysis.verdict import RegionShape, Verdict
from traceinspect.model import Timeline

if TYPE_CHECKING:
    import pandas as pd

    from traceinspect.analysis.decision import EnclosingStep, GraphDecision
    from traceinspect.analysis.estimate import RegionEstimate
    from traceinspect.analysis.job import JobEstimate
    from traceinspect.calibration import Calibration


@dataclass(frozen=True)
class LaunchStats:
    """How the region's activities were launched (ns; medians over its launch calls)."""

    launches: int  # launch calls (a graph launch counts once)
    median_call_ns: float | None  # host duration of the launch call
    median_latency_ns: float | None  # launch call start -> activity start
    p95_latency_ns: float | None
    median_queue_depth: float | None  # activities in flight when the call started
    starved_share: float | None  # launches that found nothing queued on the GPU


@dataclass(frozen=True)
class StreamIdle:
    """One stream's busy and idle time in a region (medians over the occurrences using it)."""

    device: int
    stream: int
    busy_ns: float
    idle_ns: Mapping[str, float]  # by cause (:data:`~traceinspect.analysis.gaps.CAUSES`)


@dataclass(frozen=True)
class OccurrenceGaps:
    """Per occurrence of a region: its GPU window and busy time; and every idle gap in the
    window (device-wide union of the occurrence's activities) with its cause.

    Per-occurrence arrays have one entry per occurrence (``window_start_ns`` is -1 for an
    occurrence without GPU work); per-gap arrays one entry per gap, ordered by occurrence
    then time. ``cause`` indexes :data:`~traceinspect.analysis.gaps.CAUSES`, ``detail``
    :data:`~traceinspect.analysis.gaps.OTHER_DETAILS` (meaningful where the cause is
    ``other``); ``next_row`` is the ``timeline.gpu`` position of the activity ending the gap.
    """

    window_start_ns: IntArray
    window_end_ns: IntArray
    busy_ns: IntArray
    occurrence: IntArray
    start_ns: IntArray
    end_ns: IntArray
    cause: npt.NDArray[np.int8]
    detail: npt.NDArray[np.int8]
    next_row: IntArray

    def idle_ns(self, occurrence: int) -> dict[str, int]:
        """Idle ns of one occurrence by cause."""
        mine = self.occurrence == occurrence
        length = self.end_ns[mine] - self.start_ns[mine]
        codes = self.cause[mine]
        return {c: int(length[codes == i].sum()) for i, c in enumerate(CAUSES)}


@dataclass(frozen=True)
class RegionDiagnosis:
    """One region: where its GPU time went, its verdict, capture pre-flight and estimate.

    Figures are medians over the region's occurrences (over those with GPU work for the
    window-based ones)."""

    region: Region
    wall_ns: float  # median occurrence wall time (the annotation's host interval)
    wall_p95_ns: float
    window_ns: float  # median first-activity-start -> last-activity-end
    busy_share: float  # median over occurrences of GPU busy / window
    gpu_busy_ns: float  # median union of the occurrence's activities
    activities: float  # median per occurrence
    kernels: float
    median_activity_ns: float | None
    median_kernel_ns: float | None
    idle_ns: Mapping[str, float]  # median per occurrence, by cause
    other_idle_ns: Mapping[str, float]  # the ``other`` cause split by what it was
    streams: list[StreamIdle]
    launch: LaunchStats
    graph_share: float
    verdict: Verdict
    evidence: list[str]
    capture: CaptureReport
    gaps: OccurrenceGaps
    estimate: RegionEstimate | None = None
    #: What the verdict read (the profiled timeline's shares).
    shape: RegionShape | None = None
    #: The step this region sits in and how many of its occurrences a step holds (the step
    #: itself: itself, once); None where unknown. A small saving is weighed against it.
    in_step: EnclosingStep | None = None
    #: Where this region is its process's step in a job replayed together
    #: (:attr:`TraceAnalysis.job`): that estimate; else None.
    job: JobEstimate | None = None

    @property
    def name(self) -> str:
        return self.region.name

    @cached_property
    def decision(self) -> GraphDecision:
        """Enable CUDA graphs for this region or not, and why
        (:func:`~traceinspect.analysis.decision.decide_region`)."""
        from traceinspect.analysis.decision import decide_region

        return decide_region(
            self.region.name,
            verdict=self.verdict,
            capture_verdict=self.capture.verdict,
            blockers=[(b.severity, b.kind) for b in self.capture.blockers],
            estimate=self.estimate,
            step=self.in_step,
            job=self.job,
        )


@dataclass(frozen=True)
class TraceAnalysis:
    """Everything traceinspect concludes about one trace.

    Typed objects: :attr:`summary` (what is in the trace), :attr:`region_results` (one
    :class:`RegionDiagnosis` per region, parents before the regions they hold),
    :attr:`warnings` (trace health), :attr:`calibration` (the replay estimate's constants)
    and :attr:`step` (the region one workload step is). DataFrame views of them:
    :attr:`regions`, :attr:`kernels`, :attr:`gaps`, :attr:`health`, :attr:`processes`.
    """

    timeline: Timeline
    summary: TraceSummary
    region_results: tuple[RegionDiagnosis, ...]
    warnings: tuple[HealthWarning, ...]
    calibration: Calibration | None
    #: The workload's step (:func:`~traceinspect.analysis.regions.step_region`), if any.
    step: RegionDiagnosis | None
    #: In a trace of several processes joined by collectives: every rank's step replayed
    #: together (:func:`~traceinspect.analysis.job.job_estimate`); else None.
    job: JobEstimate | None = None

    def region(self, name: str) -> RegionDiagnosis:
        """The region named ``name`` (the first, when sources share a name)."""
        for r in self.region_results:
            if r.region.name == name:
                return r
        raise KeyError(name)

    @cached_property
    def regions(self) -> pd.DataFrame:
        """One row per region (the JSON report's ``regions``, flattened); µs."""
        from traceinspect.analysis.frames import regions_frame

        return regions_frame(self)

    @cached_property
    def kernels(self) -> pd.DataFrame:
        """One row per kernel name, by summed duration (the JSON ``summary.top_kernels``)."""
        from traceinspect.analysis.frames import kernels_frame

        return kernels_frame(self)

    @cached_property
    def gaps(self) -> pd.DataFrame:
        """Every GPU idle gap of every region occurrence, with its ``cause``; µs."""
        from traceinspect.analysis.frames import gaps_frame

        return gaps_frame(self)

    @cached_property
    def processes(self) -> pd.DataFrame:
        """One row per process with GPU work, where the trace holds several (the JSON's
        ``processes``: the per-process table); empty otherwise."""
        from traceinspect.analysis.frames import processes_frame

        return processes_frame(self)

    @cached_property
    def health(self) -> pd.DataFrame:
        """One row per trace-health warning: ``kind``, ``message``."""
        from traceinspect.analysis.frames import health_frame

        return health_frame(self)


__all__ = [
    "CAUSES",
    "OTHER_DETAILS",
    "LaunchStats",
    "OccurrenceGaps",
    "RegionDiagnosis",
    "StreamIdle",
    "TraceAnalysis",
]
