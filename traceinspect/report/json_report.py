"""The machine-readable report of ``traceinspect analyze --json``.

Versioned by ``schema_version``; keys are never renamed, only added. Times are µs (floats
with ns precision), per-occurrence figures are medians over a region's occurrences. A
region's ``process`` is its pid where the trace's regions span several processes (each
process's occurrences are a region of their own), else null.

::

    {"schema_version": 1,
     "trace": {"path", "format", "generation", "devices": [{"id", "name"}]},
     "health": [{"kind", "message"}],
     "calibration": {...} | null,
     "regions": [{"name", "source", "process", "depth", "occurrences", "wall_us", "wall_p95_us",
                  "window_us", "gpu_busy_us", "gpu_busy_share", "kernels", "activities",
                  "median_kernel_us", "median_activity_us",
                  "idle_us": {"host_launch", "sync", "copy", "dependency", "other"},
                  "idle_other_us": {"queued", "dispatch", "outside_work", "no_launch_record"},
                  "launch": {...}, "streams": [...], "graph_share",
                  "verdict", "evidence": [...], "estimate": {...} | null,
                  "detection": {"summary", "confidence", "repeats", "launches_per_step",
                                "identical", "duration_cv", "gpu_share", "warmup_steps",
                                "pid", "tid", "loop", "body"} | null,
                  "capture": {"capturable", "verdict",
                              "blockers": [{"kind", "severity", "what", "count", "fix",
                                            "example"}]}}],
     "summary": {...}}
"""

from __future__ import annotations

import json
from typing import Any, Final

from traceinspect.analysis.result import RegionDiagnosis, TraceAnalysis
from traceinspect.analysis.steps import StepDetection
from traceinspect.analysis.summary import TraceSummary
from traceinspect.report.ranks import processes_report
from traceinspect.units import ns_to_us

SCHEMA_VERSION: Final = 1

#: Kernels listed in ``summary.top_kernels`` unless the caller says otherwise (``--top``).
TOP_KERNELS: Final = 10


def render_json(analysis: TraceAnalysis, *, top: int = TOP_KERNELS) -> str:
    """The ``--json`` report of ``analysis``, as text."""
    return json.dumps(report_data(analysis, top=top), indent=1)


def report_data(analysis: TraceAnalysis, *, top: int = TOP_KERNELS) -> dict[str, Any]:
    """The JSON-ready report of ``analysis``; ``top`` kernels in the summary."""
    summary = analysis.summary
    calibration = analysis.calibration
    return {
        "schema_version": SCHEMA_VERSION,
        "trace": {
            "path": summary.path,
            "format": summary.format,
            "generation": summary.generation,
            "devices": [{"id": d.id, "name": d.name} for d in summary.devices],
        },
        "health": [{"kind": h.kind, "message": h.message} for h in analysis.warnings],
        "calibration": calibration.to_json() if calibration is not None else None,
        "regions": [region_json(r) for r in analysis.region_results],
        "processes": processes_report(analysis),
        "summary": summary_json(summary, top=top),
    }


def summary_json(summary: TraceSummary, *, top: int = TOP_KERNELS) -> dict[str, Any]:
    """The trace summary (times in ns, as this part of the schema has always given them)."""
    acts = summary.activities
    return {
        "path": summary.path,
        "format": summary.format,
        "generation": summary.generation,
        "devices": [{"id": d.id, "name": d.name} for d in summary.devices],
        "notes": list(summary.notes),
        "activities": {
            "kernel": acts.kernel,
            "memcpy": acts.memcpy,
            "memset": acts.memset,
            "graph": acts.graph,
        },
        "gpu": [
            {
                "device": dev.device,
                "span_ns": dev.span_ns,
                "busy_ns": dev.busy_ns,
                "busy_share": dev.busy_share,
                "streams": [
                    {
                        "stream": s.stream,
                        "activities": s.activities,
                        "kernels": s.kernels,
                        "busy_ns": s.busy_ns,
                    }
                    for s in dev.streams
                ],
            }
            for dev in summary.gpu
        ],
        "top_kernels": [
            {
                "name": k.name,
                "count": k.count,
                "total_ns": k.total_ns,
                "mean_ns": k.mean_ns,
                "share": k.share,
            }
            for k in summary.kernels[:top]
        ],
        "launch_apis": [
            {"name": a.name, "api": a.api, "kind": a.kind, "count": a.count}
            for a in summary.launch_apis
        ],
        "annotations": [
            {"name": a.name, "source": a.source, "count": a.count} for a in summary.annotations
        ],
        "without_launch_record": summary.without_launch_record,
        "queued_before_recording": summary.queued_before_recording,
        "queued_before_recording_us": ns_to_us(summary.queued_before_recording_ns),
        "from_graph": summary.from_graph,
    }


def region_json(r: RegionDiagnosis) -> dict[str, Any]:
    region = r.region
    launch = r.launch
    return {
        "name": region.name,
        "source": region.source,
        "process": region.process if region.process >= 0 else None,
        "depth": region.depth,
        "occurrences": region.occurrences,
        "wall_us": ns_to_us(r.wall_ns),
        "wall_p95_us": ns_to_us(r.wall_p95_ns),
        "window_us": ns_to_us(r.window_ns),
        "gpu_busy_us": ns_to_us(r.gpu_busy_ns),
        "gpu_busy_share": round(r.busy_share, 4) if r.activities else None,
        "kernels": _count(r.kernels),
        "activities": _count(r.activities),
        "median_kernel_us": ns_to_us(r.median_kernel_ns),
        "median_activity_us": ns_to_us(r.median_activity_ns),
        "idle_us": {cause: ns_to_us(ns) for cause, ns in r.idle_ns.items()},
        "idle_other_us": {detail: ns_to_us(ns) for detail, ns in r.other_idle_ns.items()},
        "launch": {
            "launches": launch.launches,
            "median_call_us": ns_to_us(launch.median_call_ns),
            "median_latency_us": ns_to_us(launch.median_latency_ns),
            "p95_latency_us": ns_to_us(launch.p95_latency_ns),
            "median_queue_depth": _count(launch.median_queue_depth),
            "starved_share": _round(launch.starved_share),
        },
        "streams": [
            {
                "device": s.device,
                "stream": s.stream,
                "busy_us": ns_to_us(s.busy_ns),
                "idle_us": {cause: ns_to_us(ns) for cause, ns in s.idle_ns.items()},
            }
            for s in r.streams
        ],
        "graph_share": round(r.graph_share, 4),
        "overlap_matched": region.overlap_matched,
        "detection": detection_json(region.detection) if region.detection else None,
        "verdict": r.verdict,
        "evidence": list(r.evidence),
        "estimate": r.estimate.to_json() if r.estimate is not None else None,
        "decision": r.decision.to_json(),
        "capture": {
            "capturable": r.capture.capturable,
            "verdict": r.capture.verdict,
            "blockers": [
                {
                    "kind": b.kind,
                    "severity": b.severity,
                    "what": b.what,
                    "count": b.count,
                    "fix": b.fix,
                    "example": dict(b.example),
                }
                for b in r.capture.blockers
            ],
        },
    }


def detection_json(d: StepDetection) -> dict[str, Any]:
    """What step detection found (the same for ``step (detected)`` and ``startup``)."""
    return {
        "summary": d.describe(),
        "confidence": d.confidence,
        "repeats": d.occurrences,
        "launches_per_step": d.launches_per_step,
        "identical": d.identical,
        "duration_cv": round(d.duration_cv, 4),
        "gpu_share": round(d.gpu_share, 4),
        "warmup_steps": d.warmup_steps,
        "pid": d.pid,
        "tid": d.tid,
        "loop": d.source.loop if d.source else None,
        "body": (d.source.body or None) if d.source else None,
    }


def _count(x: float | None) -> int | float | None:
    """A median count: an int when whole (96, not 96.0), else the half it is (96.5)."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
