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

from collections.abc import Mapping
from typing import Any

from traceinspect.analysis.diagnose import Diagnosis, RegionDiagnosis
from traceinspect.analysis.steps import StepDetection

SCHEMA_VERSION = 1


def build_report(diagnosis: Diagnosis, summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON-ready report of ``diagnosis`` (plus the trace summary when given)."""
    meta = diagnosis.timeline.meta
    calibration = diagnosis.calibration
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "trace": {
            "path": meta.path,
            "format": meta.format,
            "generation": meta.generation,
            "devices": [{"id": d.id, "name": d.name} for d in meta.devices],
        },
        "health": [{"kind": h.kind, "message": h.message} for h in diagnosis.health],
        "calibration": calibration.to_json() if calibration is not None else None,
        "regions": [region_json(r) for r in diagnosis.regions],
    }
    if summary is not None:
        report["summary"] = dict(summary)
    return report


def region_json(r: RegionDiagnosis) -> dict[str, Any]:
    region = r.region
    launch = r.launch
    return {
        "name": region.name,
        "source": region.source,
        "process": region.process if region.process >= 0 else None,
        "depth": region.depth,
        "occurrences": region.occurrences,
        "wall_us": _us(r.wall_ns),
        "wall_p95_us": _us(r.wall_p95_ns),
        "window_us": _us(r.window_ns),
        "gpu_busy_us": _us(r.gpu_busy_ns),
        "gpu_busy_share": round(r.busy_share, 4) if r.activities else None,
        "kernels": _count(r.kernels),
        "activities": _count(r.activities),
        "median_kernel_us": _us(r.median_kernel_ns),
        "median_activity_us": _us(r.median_activity_ns),
        "idle_us": {cause: _us(ns) for cause, ns in r.idle_ns.items()},
        "idle_other_us": {detail: _us(ns) for detail, ns in r.other_idle_ns.items()},
        "launch": {
            "launches": launch.launches,
            "median_call_us": _us(launch.median_call_ns),
            "median_latency_us": _us(launch.median_latency_ns),
            "p95_latency_us": _us(launch.p95_latency_ns),
            "median_queue_depth": _count(launch.median_queue_depth),
            "starved_share": _round(launch.starved_share),
        },
        "streams": [
            {
                "device": s.device,
                "stream": s.stream,
                "busy_us": _us(s.busy_ns),
                "idle_us": {cause: _us(ns) for cause, ns in s.idle_ns.items()},
            }
            for s in r.streams
        ],
        "graph_share": round(r.graph_share, 4),
        "overlap_matched": region.overlap_matched,
        "detection": detection_json(region.detection) if region.detection else None,
        "verdict": r.verdict,
        "evidence": list(r.evidence),
        "estimate": r.estimate.to_json() if r.estimate is not None else None,
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


def _us(ns: float | None) -> float | None:
    return None if ns is None else round(ns / 1000, 3)


def _count(x: float | None) -> int | float | None:
    """A median count: an int when whole (96, not 96.0), else the half it is (96.5)."""
    if x is None:
        return None
    return int(x) if float(x).is_integer() else x


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
