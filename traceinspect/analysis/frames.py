"""DataFrame views of a :class:`~traceinspect.analysis.result.TraceAnalysis`, for notebooks.

Built from the typed objects on first use; times are µs rounded to the ns
(:func:`~traceinspect.units.ns_to_us`), exactly as the ``--json`` report gives them, so a
value read here equals the one in the report.

``regions`` — one row per region (display order: parents before the regions they hold):

========================  ===================================================================
column                    meaning
========================  ===================================================================
name, source, depth       the region (``source``: record_function, nvtx, profiler_step, ...)
process                   its pid where the trace's regions span several processes (each
                          process's occurrences are a region of their own, as in a
                          multi-process Nsight export), else ``<NA>`` (nullable ``Int64``)
occurrences               how many times it ran
wall_us, wall_p95_us      host wall time of an occurrence (median, p95)
window_us                 first to last GPU activity of an occurrence (median)
gpu_busy_us               union of its GPU activities (median)
gpu_busy_share            busy / window (median; NaN without GPU work)
kernels, activities       per occurrence (median)
idle_<cause>_us           GPU idle in the window by cause (median per occurrence)
verdict                   launch-bound, compute-bound, sync-bound, mixed, idle, already-graphed
capture                   the capture pre-flight's verdict
graphed_us, low_us,       the replay estimate (NaN without one): predicted graphed time and
high_us, eager_us,        its range, the eager time it is compared with and where that came
eager_source, saving_us,  from, the saving
saving_frac
========================  ===================================================================

``gaps`` — one row per idle gap in a region occurrence's GPU window (device-wide union):
``region``, ``source``, ``process`` (as in ``regions``), ``occurrence`` (0-based),
``start_ns``/``end_ns`` (the trace's clock, as in :func:`traceinspect.load`'s tables),
``duration_us``, ``cause`` (host_launch, sync, copy, dependency, other), ``detail`` (what an
``other`` gap was: queued, dispatch, outside_work, no_launch_record; ``""`` otherwise) and
``next_activity`` (name of the GPU activity that ended the gap). Summing ``duration_us`` per
occurrence and cause and taking the median over occurrences with GPU work gives the
``idle_<cause>_us`` of ``regions``.

``kernels`` — one row per kernel name, by summed duration: ``name``, ``count``,
``total_us``, ``mean_us``, ``share`` (of all kernel time).

``health`` — one row per trace-health warning: ``kind``, ``message``.

``processes`` — in a trace of several processes with GPU work (an Nsight Systems export of
``torchrun``, DDP, FSDP), one row per process (none otherwise), as the per-process table
gives it: ``process``, ``devices`` (ids, comma-separated), ``kernels``, ``gpu_activities``,
``gpu_busy_share``, ``collective_share`` (of the busy time, in NCCL/RCCL kernels),
``steps`` and ``step_wall_us`` (the median wall of the process's own step),
``step_vs_median`` and ``straggler`` (against the median process), and its step's
``verdict``, ``launch_wait_share`` and ``saving_frac``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from traceinspect.analysis.gaps import CAUSES, OTHER, OTHER_DETAILS
from traceinspect.units import NS_PER_US, ns_to_us

if TYPE_CHECKING:
    from traceinspect.analysis.result import TraceAnalysis

_ESTIMATE_COLUMNS = (
    "graphed_us",
    "low_us",
    "high_us",
    "eager_us",
    "eager_source",
    "saving_us",
    "saving_frac",
)


def regions_frame(analysis: TraceAnalysis) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    for r in analysis.region_results:
        region, est = r.region, r.estimate
        row: dict[str, Any] = {
            "name": region.name,
            "source": region.source,
            "process": _process(region.process),
            "depth": region.depth,
            "occurrences": region.occurrences,
            "wall_us": ns_to_us(r.wall_ns),
            "wall_p95_us": ns_to_us(r.wall_p95_ns),
            "window_us": ns_to_us(r.window_ns),
            "gpu_busy_us": ns_to_us(r.gpu_busy_ns),
            "gpu_busy_share": round(r.busy_share, 4) if r.activities else np.nan,
            "kernels": r.kernels,
            "activities": r.activities,
        }
        for cause in CAUSES:
            row[f"idle_{cause}_us"] = ns_to_us(r.idle_ns[cause])
        row["verdict"] = r.verdict
        row["capture"] = r.capture.verdict
        if est is None:
            row.update({c: np.nan for c in _ESTIMATE_COLUMNS})
            row["eager_source"] = None
        else:
            row.update(
                graphed_us=ns_to_us(est.graphed_ns),
                low_us=ns_to_us(est.low_ns),
                high_us=ns_to_us(est.high_ns),
                eager_us=ns_to_us(est.eager_ns),
                eager_source=est.eager_source,
                saving_us=ns_to_us(est.saving_ns),
                saving_frac=round(est.saving_frac, 4),
            )
        rows.append(row)
    columns = [
        "name",
        "source",
        "process",
        "depth",
        "occurrences",
        "wall_us",
        "wall_p95_us",
        "window_us",
        "gpu_busy_us",
        "gpu_busy_share",
        "kernels",
        "activities",
        *(f"idle_{c}_us" for c in CAUSES),
        "verdict",
        "capture",
        *_ESTIMATE_COLUMNS,
    ]
    frame = pd.DataFrame(rows, columns=columns)
    frame["process"] = frame["process"].astype("Int64")
    return frame


def _process(pid: int) -> int | None:
    """A region's process as the JSON report gives it: its pid, or None for one process."""
    return pid if pid >= 0 else None


def gaps_frame(analysis: TraceAnalysis) -> pd.DataFrame:
    names = analysis.timeline.gpu["name"].to_numpy(object)
    parts = []
    for r in analysis.region_results:
        g = r.gaps
        n = len(g.start_ns)
        detail = np.asarray(OTHER_DETAILS, object)[g.detail] if n else np.empty(0, object)
        parts.append(
            pd.DataFrame(
                {
                    "region": np.full(n, r.region.name, object),
                    "source": np.full(n, r.region.source, object),
                    "process": pd.array(np.full(n, _process(r.region.process)), "Int64"),
                    "occurrence": g.occurrence.astype(np.int64),
                    "start_ns": g.start_ns,
                    "end_ns": g.end_ns,
                    "duration_us": (g.end_ns - g.start_ns) / NS_PER_US,
                    "cause": np.asarray(CAUSES, object)[g.cause] if n else np.empty(0, object),
                    "detail": np.where(g.cause == OTHER, detail, ""),
                    "next_activity": names[g.next_row] if n else np.empty(0, object),
                }
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=[
                "region",
                "source",
                "process",
                "occurrence",
                "start_ns",
                "end_ns",
                "duration_us",
                "cause",
                "detail",
                "next_activity",
            ]
        )
    return pd.concat(parts, ignore_index=True)


def kernels_frame(analysis: TraceAnalysis) -> pd.DataFrame:
    kernels = analysis.summary.kernels
    return pd.DataFrame(
        {
            "name": [k.name for k in kernels],
            "count": np.array([k.count for k in kernels], np.int64),
            "total_us": [ns_to_us(k.total_ns) for k in kernels],
            "mean_us": [ns_to_us(k.mean_ns) for k in kernels],
            "share": [np.nan if k.share is None else k.share for k in kernels],
        }
    )


def health_frame(analysis: TraceAnalysis) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "kind": [w.kind for w in analysis.warnings],
            "message": [w.message for w in analysis.warnings],
        },
        columns=["kind", "message"],
    )


_PROCESS_COLUMNS = (
    "process",
    "devices",
    "kernels",
    "gpu_activities",
    "gpu_busy_share",
    "collective_share",
    "steps",
    "step_wall_us",
    "step_vs_median",
    "straggler",
    "verdict",
    "launch_wait_share",
    "saving_frac",
)


def processes_frame(analysis: TraceAnalysis) -> pd.DataFrame:
    from traceinspect.report.ranks import processes_report

    report = processes_report(analysis)
    rows = []
    for r in report["ranks"] if report is not None else []:
        diagnosis = r["diagnosis"] or {}
        wall = r["step_wall_median_ns"]
        rows.append(
            {
                "process": r["process"],
                "devices": ",".join(str(d["id"]) for d in r["devices"]),
                "kernels": r["kernels"],
                "gpu_activities": r["gpu_activities"],
                "gpu_busy_share": _nan(r["gpu_busy_share"]),
                "collective_share": _nan(r["collective_share"]),
                "steps": r["steps"],
                "step_wall_us": np.nan if wall is None else ns_to_us(wall),
                "step_vs_median": _nan(r["step_vs_median"]),
                "straggler": bool(r["straggler"]),
                "verdict": diagnosis.get("verdict", ""),
                "launch_wait_share": _nan(diagnosis.get("launch_wait_share")),
                "saving_frac": _nan(diagnosis.get("saving_frac")),
            }
        )
    return pd.DataFrame(rows, columns=list(_PROCESS_COLUMNS))


def _nan(value: float | None) -> float:
    return np.nan if value is None else float(value)
