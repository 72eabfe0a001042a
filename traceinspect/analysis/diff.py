"""Compare an eager trace with a graphed trace of the same workload.

Regions are matched by name (``#N`` stripped, as :mod:`traceinspect.analysis.regions` names
them) and, when both traces have it, by source as well. For each matched region: eager and
graphed as traced (median wall, median span to the last GPU activity, GPU busy time,
kernels per occurrence), the graphed-time prediction made from the eager trace alone
(:func:`traceinspect.analysis.estimate.estimate_region`), and its error against the graphed
trace. The graphed trace is profiled too: its host costs are inflated, so the error against
it is an indication; the validation against unprofiled measurements lives in the tests.

Kernels are compared by name across the whole traces: a kernel whose median duration
moved by more than :data:`KERNEL_CHANGE_FRAC` and :data:`KERNEL_CHANGE_MIN_NS` is listed
(graph replay should not change kernel durations; when it does, the prediction that
assumes it did not is off by that much).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

from traceinspect.analysis.arrays import index_timeline
from traceinspect.analysis.estimate import IntArray, RegionEstimate, estimate_region
from traceinspect.analysis.intervals import union_ns
from traceinspect.analysis.regions import Region, find_regions, step_region
from traceinspect.calibration import Calibration
from traceinspect.model import Timeline
from traceinspect.units import ns_to_us

#: A kernel's median duration changed when it moved by more than this fraction...
KERNEL_CHANGE_FRAC: Final = 0.10
#: ...and by more than this many ns (sub-µs kernels jitter by a few hundred ns).
KERNEL_CHANGE_MIN_NS: Final = 500
#: At most this many changed kernels are listed (largest absolute change first).
MAX_CHANGED_KERNELS: Final = 30
#: Below this kernel-multiset similarity the two traces do not look like one workload: on our
#: H200 samples every eager/graphed pair of one workload scores 1.000, convnet at batch 1 vs
#: batch 64 scores 0.64, and every pair of different workloads 0.07 or less.
SAME_WORKLOAD_MIN_SIMILARITY: Final = 0.5


@dataclass(frozen=True)
class TracedRegion:
    """One region of one trace, medians over its occurrences (ns)."""

    occurrences: int
    wall_ns: int
    #: Region start to the later of its end and its last GPU activity's end.
    span_ns: int
    gpu_busy_ns: int
    kernels: int
    graph_launches: int

    def to_json(self) -> dict[str, Any]:
        return {
            "occurrences": self.occurrences,
            "wall_us": ns_to_us(self.wall_ns),
            "span_us": ns_to_us(self.span_ns),
            "gpu_busy_us": ns_to_us(self.gpu_busy_ns),
            "kernels": self.kernels,
            "graph_launches": self.graph_launches,
        }


@dataclass(frozen=True)
class RegionDiff:
    name: str
    source: str
    eager: TracedRegion
    graphed: TracedRegion
    prediction: RegionEstimate | None

    @property
    def error_frac(self) -> float | None:
        """(predicted − graphed span as traced) / graphed span."""
        if self.prediction is None or self.graphed.span_ns <= 0:
            return None
        return (self.prediction.graphed_ns - self.graphed.span_ns) / self.graphed.span_ns

    def to_json(self) -> dict[str, Any]:
        error = self.error_frac
        return {
            "name": self.name,
            "source": self.source,
            "eager": self.eager.to_json(),
            "graphed": self.graphed.to_json(),
            "predicted": None if self.prediction is None else self.prediction.to_json(),
            "error_vs_graphed_trace": None if error is None else round(error, 4),
        }


@dataclass(frozen=True)
class KernelChange:
    name: str
    eager_count: int
    graphed_count: int
    eager_median_ns: int
    graphed_median_ns: int

    @property
    def change_frac(self) -> float:
        return (self.graphed_median_ns - self.eager_median_ns) / max(self.eager_median_ns, 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "eager_count": self.eager_count,
            "graphed_count": self.graphed_count,
            "eager_median_us": ns_to_us(self.eager_median_ns),
            "graphed_median_us": ns_to_us(self.graphed_median_ns),
            "change_frac": round(self.change_frac, 4),
        }


@dataclass(frozen=True)
class KernelSimilarity:
    """How alike the two traces' kernel mixes are: weighted Jaccard similarity
    ``sum(min(a, b)) / sum(max(a, b))`` over kernel names, of each name's share of the trace's
    kernel launches (``by_count``) and of its kernel time (``by_time``); 1 is the same mix.
    Graph replay launches the same kernels, so ``by_count`` stays near 1 for one workload;
    ``by_time`` also moves when kernel durations change."""

    by_count: float
    by_time: float

    @property
    def same_workload(self) -> bool:
        return self.by_count >= SAME_WORKLOAD_MIN_SIMILARITY

    def to_json(self) -> dict[str, Any]:
        return {
            "by_count": round(self.by_count, 4),
            "by_time": round(self.by_time, 4),
            "same_workload": self.same_workload,
            "threshold": SAME_WORKLOAD_MIN_SIMILARITY,
        }


@dataclass(frozen=True)
class TraceDiff:
    eager_path: str
    graphed_path: str
    calibration: Calibration
    regions: tuple[RegionDiff, ...]
    kernels_changed: tuple[KernelChange, ...]
    #: Kernel names seen in one trace only, with their counts.
    only_eager: dict[str, int]
    only_graphed: dict[str, int]
    notes: tuple[str, ...]
    similarity: KernelSimilarity
    #: Set when the traces do not look like one workload (the comparison may mean nothing).
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "eager_trace": self.eager_path,
            "graphed_trace": self.graphed_path,
            "calibration": self.calibration.to_json(),
            "kernel_change_threshold": {
                "frac": KERNEL_CHANGE_FRAC,
                "min_us": ns_to_us(KERNEL_CHANGE_MIN_NS),
            },
            "regions": [r.to_json() for r in self.regions],
            "kernels_changed": [k.to_json() for k in self.kernels_changed],
            "kernels_only_in_eager": self.only_eager,
            "kernels_only_in_graphed": self.only_graphed,
            "notes": list(self.notes),
            "kernel_similarity": self.similarity.to_json(),
            "warnings": list(self.warnings),
        }


def diff_traces(
    eager: Timeline,
    graphed: Timeline,
    calibration: Calibration,
    *,
    eager_unprofiled_ns: int | None = None,
) -> TraceDiff:
    """Match the regions of the two traces and compare them; predict from ``eager``.

    ``eager_unprofiled_ns``, a measured unprofiled eager step, applies to the step region
    (:func:`~traceinspect.analysis.regions.step_region`) only; other regions' savings use
    the eager time estimated from the trace."""
    eager_index = index_timeline(eager)
    eager_regions = find_regions(eager, eager_index)
    graphed_regions = find_regions(graphed, index_timeline(graphed))
    by_key = {(r.name, r.source): r for r in graphed_regions}
    by_name: dict[str, Region] = {}
    for r in graphed_regions:
        by_name.setdefault(r.name, r)
    notes: list[str] = []
    matched: list[RegionDiff] = []
    unmatched: list[str] = []
    step = step_region(eager_regions)
    for region in eager_regions:
        other = by_key.get((region.name, region.source)) or by_name.get(region.name)
        if other is None:
            unmatched.append(region.name)
            continue
        prediction = estimate_region(
            eager,
            region.rows,
            [int(w) for w in region.wall_ns],
            calibration,
            eager_unprofiled_ns=eager_unprofiled_ns if region is step else None,
            columns=eager_index.columns,
        )
        matched.append(
            RegionDiff(
                name=region.name,
                source=region.source,
                eager=traced_region(eager, region),
                graphed=traced_region(graphed, other),
                prediction=prediction,
            )
        )
    if unmatched:
        notes.append(f"regions only in the eager trace: {', '.join(unmatched[:10])}")
    seen = {(d.name, d.source) for d in matched} | {d.name for d in matched}
    extra = [r.name for r in graphed_regions if r.name not in seen]
    if extra:
        notes.append(f"regions only in the graphed trace: {', '.join(extra[:10])}")
    if calibration.is_fallback:
        notes.append(f"calibration {calibration.name}: {calibration.fallback_note}")
    changed, only_eager, only_graphed = compare_kernels(eager, graphed)
    similarity = kernel_similarity(eager, graphed)
    warnings = []
    if not similarity.same_workload:
        warnings.append(
            f"these traces do not look like the same workload: their kernel mixes are "
            f"{similarity.by_count:.0%} alike by launches and {similarity.by_time:.0%} by time "
            f"(one workload, eager vs graphed, is ~100%); the comparison below may mean nothing"
        )
    return TraceDiff(
        eager_path=eager.meta.path,
        graphed_path=graphed.meta.path,
        calibration=calibration,
        regions=tuple(matched),
        kernels_changed=changed,
        only_eager=only_eager,
        only_graphed=only_graphed,
        notes=tuple(notes),
        similarity=similarity,
        warnings=tuple(warnings),
    )


def kernel_similarity(a: Timeline, b: Timeline) -> KernelSimilarity:
    """Weighted Jaccard similarity of the two traces' kernel mixes (see
    :class:`KernelSimilarity`); 0 when either trace has no kernels."""
    ka, kb = a.kernels, b.kernels
    if len(ka) == 0 or len(kb) == 0:
        return KernelSimilarity(by_count=0.0, by_time=0.0)

    def shares(kernels: pd.DataFrame, weight: pd.Series) -> pd.Series:
        totals = weight.groupby(kernels["name"].astype(str), sort=False).sum()
        return totals / totals.sum() if totals.sum() > 0 else totals

    def jaccard(x: pd.Series, y: pd.Series) -> float:
        both = x.index.union(y.index)
        x, y = x.reindex(both, fill_value=0.0), y.reindex(both, fill_value=0.0)
        top = float(np.maximum(x, y).sum())
        return float(np.minimum(x, y).sum()) / top if top > 0 else 0.0

    ones_a = pd.Series(1.0, index=ka.index)
    ones_b = pd.Series(1.0, index=kb.index)
    time_a = (ka["end_ns"] - ka["start_ns"]).astype(np.float64)
    time_b = (kb["end_ns"] - kb["start_ns"]).astype(np.float64)
    return KernelSimilarity(
        by_count=jaccard(shares(ka, ones_a), shares(kb, ones_b)),
        by_time=jaccard(shares(ka, time_a), shares(kb, time_b)),
    )


def traced_region(timeline: Timeline, region: Region) -> TracedRegion:
    """Medians over the region's occurrences, as traced."""
    gpu = timeline.gpu
    start = gpu["start_ns"].to_numpy()
    end = gpu["end_ns"].to_numpy()
    is_kernel = gpu["kind"].to_numpy() == "kernel"
    launch_row = gpu["launch_row"].to_numpy()
    host_kind = timeline.host["kind"].to_numpy()
    spans, busy, kernels, launches = [], [], [], []
    for i, rows in enumerate(region.rows):
        rows = np.asarray(rows, np.int64)
        occ_start, occ_end = int(region.start_ns[i]), int(region.end_ns[i])
        last = int(end[rows].max()) if len(rows) else occ_end
        spans.append(max(occ_end, last) - occ_start)
        busy.append(union_ns(start[rows], end[rows]))
        kernels.append(int(is_kernel[rows].sum()))
        rows_launch = np.unique(launch_row[rows][launch_row[rows] >= 0])
        launches.append(int((host_kind[rows_launch] == "graph_launch").sum()))
    return TracedRegion(
        occurrences=region.occurrences,
        wall_ns=_median([int(w) for w in region.wall_ns]),
        span_ns=_median(spans),
        gpu_busy_ns=_median(busy),
        kernels=_median(kernels),
        graph_launches=_median(launches),
    )


def compare_kernels(
    eager: Timeline, graphed: Timeline
) -> tuple[tuple[KernelChange, ...], dict[str, int], dict[str, int]]:
    """Kernels (by name) whose median duration changed beyond the threshold, largest
    absolute change first; and the names seen in only one trace, with counts."""
    a = _kernel_durations(eager)
    b = _kernel_durations(graphed)
    changes = []
    for name in sorted(a.keys() & b.keys()):
        ea, gb = a[name], b[name]
        ma, mb = _median(ea), _median(gb)
        delta = abs(mb - ma)
        if delta > KERNEL_CHANGE_MIN_NS and delta > KERNEL_CHANGE_FRAC * ma:
            changes.append(KernelChange(name, len(ea), len(gb), ma, mb))
    changes.sort(key=lambda c: -abs(c.graphed_median_ns - c.eager_median_ns))
    only_a = {n: len(a[n]) for n in sorted(a.keys() - b.keys())}
    only_b = {n: len(b[n]) for n in sorted(b.keys() - a.keys())}
    return tuple(changes[:MAX_CHANGED_KERNELS]), only_a, only_b


def _kernel_durations(timeline: Timeline) -> dict[str, list[int]]:
    kernels = timeline.kernels
    durations = (kernels["end_ns"] - kernels["start_ns"]).to_numpy()
    out: dict[str, list[int]] = {}
    for name, dur in zip(kernels["name"].to_numpy(), durations.tolist(), strict=True):
        out.setdefault(str(name), []).append(int(dur))
    return out


def _median(values: Sequence[int] | IntArray) -> int:
    if len(values) == 0:
        return 0
    return int(round(float(np.median(np.asarray(values, np.float64)))))


