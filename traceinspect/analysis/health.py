"""Trace health: warnings when the trace cannot fully support the diagnosis drawn from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from traceinspect.analysis.arrays import TimelineArrays
from traceinspect.analysis.estimate.eager import median_launch_call_ns
from traceinspect.analysis.regions import base_name
from traceinspect.model import Timeline

if TYPE_CHECKING:
    from traceinspect.analysis.result import RegionDiagnosis

#: Share of GPU activities without a launch record above which launch gaps and region
#: membership become guesses (a cut window or API tracing off loses them).
UNLAUNCHED_SHARE: Final = 0.01
#: Host duration of a kernel launch call without a profiler attached, ns (cudaLaunchKernel
#: on a current x86 host, about 2–5 µs).
NORMAL_LAUNCH_CALL_NS: Final = 5_000
#: Median launch call this many times the normal one means the profiler (or a slow host)
#: inflates launches: launch gaps in the trace overstate the unprofiled ones.
LAUNCH_INFLATION_FACTOR: Final = 2.0
#: Median launch call at or above this under the profiler: the process's host ran slow, not
#: just profiled. Over the 405 H200 recordings timed in a fresh process the median launch call
#: took 4.9-9.7 µs (5th to 95th percentile); the three at 12.6-13.2 µs read their eager time
#: from the trace 89-125 % high (a GCN whose rerun, at 6-8 µs, read it 6 % low), where those
#: under 8 µs read it a median 4 % high and those at 8-10 µs 18 %.
SLOW_LAUNCH_CALL_NS: Final = 12_000
#: Share of activities starting on the GPU before their launch call started above which the
#: host and GPU clocks disagree (launch latencies and gap causes become unreliable).
CLOCK_SKEW_SHARE: Final = 0.01
#: First occurrence slower than the median of the others by this factor: warm-up included.
WARMUP_FACTOR: Final = 1.5


def listed(names: Sequence[str], shown: int) -> str:
    """The first ``shown`` of ``names``, comma-separated, and how many more there are."""
    more = f" (+{len(names) - shown} more)" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


@dataclass(frozen=True)
class HealthWarning:
    kind: str
    message: str


def check_health(
    timeline: Timeline, arrays: TimelineArrays, regions: Sequence[RegionDiagnosis]
) -> list[HealthWarning]:
    """Warnings about ``timeline`` and the regions found in it, most important first."""
    out: list[HealthWarning] = []
    n = len(timeline.gpu)
    if n == 0:
        out.append(HealthWarning("no_gpu_activity", "the trace holds no GPU activity"))
        return out + _reader_notes(timeline)
    # Work launched before the recording began lacks a record by nature, and joins no region.
    unlaunched = int(np.count_nonzero((arrays.launch_row < 0) & ~arrays.queued_before))
    if unlaunched > UNLAUNCHED_SHARE * n:
        out.append(
            HealthWarning(
                "missing_launch_records",
                f"{unlaunched:,} of {n:,} GPU activities ({unlaunched / n:.0%}) have no launch "
                "record: their gaps are unexplained and they join regions by time overlap",
            )
        )
    launched = arrays.launch_row >= 0
    early = int(np.count_nonzero(launched & (arrays.launch_latency < 0)))
    if early > CLOCK_SKEW_SHARE * max(int(launched.sum()), 1):
        out.append(
            HealthWarning(
                "clock_skew",
                f"{early:,} GPU activities start before their launch call: host and GPU "
                "clocks disagree, so launch latencies and gap causes are unreliable",
            )
        )
    if not timeline.meta.graph_nodes_visible:
        out.append(
            HealthWarning(
                "graph_nodes_hidden",
                "CUDA graphs were traced as whole graphs (nsys --cuda-graph-trace=graph): "
                "their kernels are invisible; re-record with --cuda-graph-trace=node",
            )
        )
    out += _launch_inflation(timeline)
    single = [
        r.region.label
        for r in regions
        if r.region.occurrences == 1 and r.activities and r.region.source != "whole_trace"
    ]
    if single:
        shown = listed(single, 5)
        out.append(
            HealthWarning(
                "single_occurrence",
                f"only one occurrence of {shown}: no medians, warm-up cannot be told apart",
            )
        )
    for r in regions:
        wall = r.region.wall_ns
        if len(wall) >= 3 and r.activities:
            rest = float(np.median(wall[1:]))
            if rest > 0 and wall[0] > WARMUP_FACTOR * rest:
                out.append(
                    HealthWarning(
                        "warmup_included",
                        f"first occurrence of {r.region.label} took {wall[0] / 1000:,.1f} µs, "
                        f"{wall[0] / rest:.1f}× the median of the others "
                        f"({rest / 1000:,.1f} µs): warm-up is in the trace (medians discount "
                        "it)",
                    )
                )
        if r.region.cut_last_ns:
            out.append(
                HealthWarning(
                    "last_step_cut",
                    f"the last {r.region.label} ({r.region.cut_last_ns / 1000:,.1f} µs) holds no "
                    "GPU work, where the others do: the profiler stopped in it; left out",
                )
            )
        if r.region.overlap_matched:
            out.append(
                HealthWarning(
                    "overlap_matched",
                    f"{r.region.overlap_matched:,} activities of {r.region.label} joined it by "
                    "time overlap (no launch record)",
                )
            )
    out += _unmatched_gpu_ranges(timeline, regions)
    return out + _reader_notes(timeline)


def _unmatched_gpu_ranges(
    timeline: Timeline, regions: Sequence[RegionDiagnosis]
) -> list[HealthWarning]:
    """Kineto projects each record_function onto the GPU (``gpu_user_annotation``): a region
    with such ranges but no matched activity means the launch links failed it."""
    ann = timeline.annotations
    projected = ann[ann["source"] == "gpu_user_annotation"]
    if len(projected) == 0:
        return []
    names = set(projected["name"].map(base_name))
    missed = [r.region.label for r in regions if not r.activities and r.region.name in names]
    if not missed:
        return []
    return [
        HealthWarning(
            "unmatched_gpu_ranges",
            f"{', '.join(missed[:5])}: the trace shows GPU work under "
            f"{'this range' if len(missed) == 1 else 'these ranges'} (gpu_user_annotation) but "
            "no activity was linked to it by launch: the region's GPU figures are missing",
        )
    ]


def _launch_inflation(timeline: Timeline) -> list[HealthWarning]:
    median = median_launch_call_ns(timeline)
    if median is None or median <= LAUNCH_INFLATION_FACTOR * NORMAL_LAUNCH_CALL_NS:
        return []
    out = [
        HealthWarning(
            "launch_inflated",
            f"median kernel launch call takes {median / 1000:,.1f} µs on the host (about "
            f"{NORMAL_LAUNCH_CALL_NS / 1000:g} µs unprofiled): the profiler inflates launches, "
            "so traced launch gaps overstate real ones",
        )
    ]
    if median >= SLOW_LAUNCH_CALL_NS:
        out.append(
            HealthWarning(
                "slow_host",
                f"launch calls this slow (median {median / 1000:,.1f} µs, where a profiled "
                f"process usually takes 5-10) mean this process's host ran slow while "
                "profiled: an eager time estimated from the trace, and the saving against "
                "it, may read far too high; time the step unprofiled and pass --eager-us",
            )
        )
    return out


def _reader_notes(timeline: Timeline) -> list[HealthWarning]:
    """The reader's remarks, less the hidden-graph-nodes one when its own warning is given."""
    hidden = not timeline.meta.graph_nodes_visible
    return [
        HealthWarning("reader_note", note)
        for note in timeline.meta.notes
        if not (hidden and "graph nodes are hidden" in note)
    ]
