"""The HTML report's tables as JSON-ready data: the regions table (with each region's
evidence, replay estimate, capture blockers and graph decision folded under its row), the
trace health, and the trace summary's tables. Cells are pre-formatted text; the page's
script puts them in the DOM as text only.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

import numpy as np

from traceinspect.report.layout import device_groups, region_label

#: Idle causes of a region, in column order, with their column labels.
IDLE_CAUSES: Final = (
    ("host_launch", "launch"),
    ("sync", "sync"),
    ("copy", "copy"),
    ("dependency", "dependency"),
    ("other", "other"),
)

#: Rows listed per summary table (annotations can number in the thousands of names).
MAX_SUMMARY_ROWS: Final = 30

_NS_PER_US: Final = 1000
_CSS_CLASS_UNSAFE = re.compile(r"[^a-z0-9_-]+")


def regions_table(regions: Any) -> dict[str, Any]:
    """One row per region; evidence, estimate details and capture blockers in ``details``."""
    columns = [
        _col("region"),
        _col("source"),
        _col("occurrences", num=True),
        _col("wall µs", num=True),
        _col("GPU busy µs", num=True),
        _col("kernels", num=True),
        _col("GPU idle µs by cause", num=True),
        _col("verdict"),
        _col("graphed µs", num=True),
        _col("saving", num=True),
        _col("capture"),
        _col("decision"),
    ]
    rows: list[list[Any]] = []
    details: list[dict[str, Any] | None] = []
    for region in regions if isinstance(regions, list) else []:
        if not isinstance(region, Mapping):
            continue
        wall, busy = region.get("wall_us"), region.get("gpu_busy_us")
        # Busy share of the region's GPU window (GPU work can run past the host-side wall).
        reported_share = region.get("gpu_busy_share")
        share = reported_share if _finite(reported_share) else None
        verdict = str(region.get("verdict") or "")
        capture = region.get("capture")
        estimate = region.get("estimate")
        rows.append(
            [
                {
                    "text": region_label(region) if "name" in region else "",
                    "cls": "region-name",
                    "indent": _depth(region.get("depth")),
                },
                _text(region.get("source")),
                _count(region.get("occurrences")),
                _num(wall),
                _num(busy) + (f" ({share:.0%})" if share is not None else ""),
                _count(region.get("kernels")),
                _idle_cell(region.get("idle_us")),
                {
                    "text": verdict or "–",
                    "cls": "verdict verdict-" + _css_word(verdict) if verdict else "",
                },
                *_estimate_cells(estimate),
                _capture_cell(capture),
                _decision_cell(region.get("decision")),
            ]
        )
        detection = region.get("detection")
        sections = [
            {
                "title": "Found by step detection (no annotation marks these steps)",
                "items": [str(detection.get("summary"))] if isinstance(detection, Mapping) else [],
            },
            {"title": "Decision: enable CUDA graphs?", "items": _decision_lines(
                region.get("decision"))},
            {"title": "Evidence", "items": [str(e) for e in _list(region.get("evidence"))]},
            {"title": "Replay estimate", "items": _estimate_lines(estimate)},
            {"title": "Capture blockers", "items": _blocker_lines(capture)},
        ]
        sections = [s for s in sections if s["items"]]
        details.append({"sections": sections} if sections else None)
    return {
        "title": "Regions",
        "columns": columns,
        "rows": rows,
        "details": details,
        "empty": "No regions in the report."
        if isinstance(regions, list)
        else "No region analysis in this report.",
    }


def _idle_cell(idle: Any) -> Any:
    """Total idle µs, with the non-zero causes listed under it."""
    if not isinstance(idle, Mapping):
        return "–"
    known = [(label, idle.get(cause)) for cause, label in IDLE_CAUSES]
    values = [(label, float(v)) for label, v in known if _finite(v)]
    if not values:
        return "–"
    return {
        "text": _num(sum(v for _, v in values)),
        "details": [f"{label} {_num(v)}" for label, v in values if v > 0],
    }


def _estimate_cells(estimate: Any) -> list[Any]:
    if not isinstance(estimate, Mapping):
        return ["–", "–"]
    graphed: Any = _num(estimate.get("graphed_us"))
    low, high = estimate.get("low_us"), estimate.get("high_us")
    if _finite(low) and _finite(high):
        graphed = {"text": graphed, "details": [f"{_num(low)} – {_num(high)}"]}
    saving = _num(estimate.get("saving_us"))
    frac = estimate.get("saving_frac")
    if _finite(frac):
        saving += f" ({frac:.0%})"
    low_frac, high_frac = estimate.get("saving_low_frac"), estimate.get("saving_high_frac")
    if _finite(low_frac) and _finite(high_frac) and round(low_frac, 2) != round(high_frac, 2):
        return [graphed, {"text": saving, "details": [f"range {low_frac:.0%} – {high_frac:.0%}"]}]
    return [graphed, saving]


def _estimate_lines(estimate: Any) -> list[str]:
    if not isinstance(estimate, Mapping):
        return []
    lines = []
    eager = estimate.get("eager_us")
    if _finite(eager):
        source = estimate.get("eager_source")
        lines.append(
            f"eager {_num(eager)} µs"
            + (f" ({source})" if source else "")
            + f" → graphed {_num(estimate.get('graphed_us'))} µs"
        )
    low_frac, high_frac = estimate.get("saving_low_frac"), estimate.get("saving_high_frac")
    if _finite(low_frac) and _finite(high_frac):
        lines.append(
            f"saving {estimate.get('saving_frac', 0.0):.0%}, range {low_frac:.0%} – {high_frac:.0%}"
            f" (eager {_num(estimate.get('eager_low_us'))} – {_num(estimate.get('eager_high_us'))}"
            " µs)"
        )
    graph = estimate.get("graph")
    if isinstance(graph, Mapping) and graph:
        lines.append(
            "graph: " + ", ".join(f"{k.replace('_', ' ')} {_text(v)}" for k, v in graph.items())
        )
    parts = estimate.get("parts")
    if isinstance(parts, Mapping) and parts:
        lines.append(
            "replay time parts (µs): "
            + ", ".join(f"{k.replace('_', ' ')} {_num(v)}" for k, v in parts.items())
        )
    if estimate.get("calibration"):
        lines.append(f"calibration: {estimate['calibration']}")
    lines += [str(n) for n in _list(estimate.get("notes"))]
    return lines


def _decision_cell(decision: Any) -> Any:
    """The choice, with the saving it rests on and where that figure came from."""
    if not isinstance(decision, Mapping) or not decision.get("choice"):
        return "–"
    choice = str(decision["choice"])
    saving = decision.get("saving_frac")
    details = []
    if isinstance(saving, Mapping) and _finite(saving.get("value")):
        details.append(f"saves {float(saving['value']):.0%} ({saving.get('source', '?')})")
    return {"text": choice, "cls": "decision decision-" + _css_word(choice), "details": details}


def _decision_lines(decision: Any) -> list[str]:
    """The decision's reasons, then each figure with its source (unknowns said so)."""
    if not isinstance(decision, Mapping):
        return []
    lines = [f"{decision.get('choice', '?')}"] + [str(r) for r in _list(decision.get("reasons"))]
    for key, label in (
        ("saving_us", "saving µs"),
        ("capture_ms", "capture ms"),
        ("repay_requests", "requests to repay the capture"),
        ("graph_memory_mib", "graph memory MiB"),
        ("fallback_share", "fallback share"),
    ):
        figure = decision.get(key)
        if not isinstance(figure, Mapping):
            continue
        value = figure.get("value")
        shown = f"{float(value):,.3g}" if _finite(value) else "unknown"
        lines.append(f"{label}: {shown} ({figure.get('source', 'unknown')})")
    return lines


def _capture_cell(capture: Any) -> Any:
    if not isinstance(capture, Mapping) or capture.get("capturable") is None:
        return "–"
    ok = bool(capture.get("capturable"))
    blockers = len(_list(capture.get("blockers")))
    text = str(capture.get("verdict") or ("capturable" if ok else "not capturable"))
    return {
        "text": text,
        "cls": "capture-yes" if ok else "capture-no",
        "details": [f"{blockers} blocker{'s' if blockers != 1 else ''}"] if blockers else [],
    }


def _blocker_lines(capture: Any) -> list[str]:
    if not isinstance(capture, Mapping):
        return []
    lines = []
    for blocker in _list(capture.get("blockers")):
        if not isinstance(blocker, Mapping):
            lines.append(str(blocker))
            continue
        severity = f" [{blocker['severity']}]" if blocker.get("severity") else ""
        count = blocker.get("count")
        times = f" ×{_count(count)}" if _finite(count) else ""
        fix = f" — fix: {blocker['fix']}" if blocker.get("fix") else ""
        lines.append(f"{blocker.get('kind', '?')}{severity}{times}: {blocker.get('what', '')}{fix}")
    return lines


def health_groups(health: Any, summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Warnings grouped by kind (first appearance order): ``{"kind", "messages"}``."""
    items = [
        (str(h.get("kind", "")), str(h.get("message", "")))
        for h in _list(health)
        if isinstance(h, Mapping)
    ]
    if health is None:  # no diagnosis: still surface what the reader noticed
        items += [("reader", str(n)) for n in _list(summary.get("notes"))]
    groups: dict[str, list[str]] = {}
    for kind, message in items:
        groups.setdefault(kind, []).append(message)
    return [{"kind": kind, "messages": messages} for kind, messages in groups.items()]


def summary_section(summary: Mapping[str, Any]) -> dict[str, Any]:
    acts = summary.get("activities") if isinstance(summary.get("activities"), Mapping) else {}
    assert isinstance(acts, Mapping)
    facts = [
        f"{_count(acts.get('kernel'))} kernels",
        f"{_count(acts.get('memcpy'))} memcpy",
        f"{_count(acts.get('memset'))} memset",
    ]
    if acts.get("graph"):
        facts.append(f"{_count(acts.get('graph'))} whole-graph records")
    if summary.get("from_graph"):
        facts.append(f"{_count(summary.get('from_graph'))} GPU activities from graph launches")
    if summary.get("without_launch_record"):
        unlaunched = _count(summary.get("without_launch_record"))
        text = f"{unlaunched} GPU activities without a launch record"
        queued = summary.get("queued_before_recording")
        if queued:
            ms = float(summary.get("queued_before_recording_us") or 0.0) / 1000
            text += (
                f" ({_count(queued)} launched before the recording began: the GPU's first "
                f"{ms:,.1f} ms; they join no region)"
            )
        facts.append(text)
    busy_rows = []
    for dev in _list(summary.get("gpu")):
        if not isinstance(dev, Mapping):
            continue
        streams = [s for s in _list(dev.get("streams")) if isinstance(s, Mapping)]
        share = dev.get("busy_share")
        busy_rows.append(
            [
                {"text": str(dev.get("device", "?")), "cls": "strong"},
                "all",
                _count(sum(int(s.get("activities", 0)) for s in streams)),
                _count(sum(int(s.get("kernels", 0)) for s in streams)),
                _num_ns(dev.get("busy_ns")),
                _num_ns(dev.get("span_ns")),
                _share(share),
            ]
        )
        busy_rows.extend(
            [
                "",
                str(s.get("stream", "?")),
                _count(s.get("activities")),
                _count(s.get("kernels")),
                _num_ns(s.get("busy_ns")),
                "",
                "",
            ]
            for s in streams
        )
    kernels = [k for k in _list(summary.get("top_kernels")) if isinstance(k, Mapping)]
    apis = [a for a in _list(summary.get("launch_apis")) if isinstance(a, Mapping)]
    annotations = [a for a in _list(summary.get("annotations")) if isinstance(a, Mapping)]
    return {
        "facts": facts,
        "tables": [
            {
                "title": "GPU busy",
                "columns": [
                    _col("device"),
                    _col("stream"),
                    _col("activities", num=True),
                    _col("kernels", num=True),
                    _col("busy µs", num=True),
                    _col("span µs", num=True),
                    _col("busy share", num=True),
                ],
                "rows": busy_rows,
                "empty": "No GPU activity in this trace (CPU-only profile).",
            },
            {
                "title": "Top kernels by total time",
                "columns": [
                    _col("kernel"),
                    _col("count", num=True),
                    _col("total µs", num=True),
                    _col("mean µs", num=True),
                    _col("share", num=True),
                ],
                "rows": [
                    [
                        {"text": str(k.get("name", "")), "cls": "kernel-name"},
                        _count(k.get("count")),
                        _num_ns(k.get("total_ns")),
                        _num_ns(k.get("mean_ns")),
                        _share(k.get("share")),
                    ]
                    for k in kernels
                ],
                "empty": "No kernels.",
            },
            {
                "title": "Launch APIs",
                "columns": [_col("call"), _col("api"), _col("kind"), _col("count", num=True)],
                "rows": [
                    [
                        _text(a.get("name")),
                        _text(a.get("api")),
                        _text(a.get("kind")),
                        _count(a.get("count")),
                    ]
                    for a in apis
                ],
                "empty": "No launch calls recorded.",
            },
            {
                "title": "Annotations",
                "columns": [_col("name"), _col("source"), _col("count", num=True)],
                "rows": [
                    [_text(a.get("name")), _text(a.get("source")), _count(a.get("count"))]
                    for a in annotations[:MAX_SUMMARY_ROWS]
                ],
                "empty": "No annotations (record_function / NVTX ranges) in this trace.",
                "note": f"{len(annotations) - MAX_SUMMARY_ROWS:,} more not listed"
                if len(annotations) > MAX_SUMMARY_ROWS
                else "",
            },
        ],
    }


def processes_table(processes: Any) -> dict[str, Any] | None:
    """The per-process table of a trace of several processes (the JSON's ``processes``:
    :func:`~traceinspect.report.ranks.processes_report`), as the terminal draws it; None
    where the report has none."""
    if not isinstance(processes, Mapping):
        return None
    rows = []
    for r in _list(processes.get("ranks")):
        if not isinstance(r, Mapping):
            continue
        diagnosis = r.get("diagnosis") if isinstance(r.get("diagnosis"), Mapping) else {}
        assert isinstance(diagnosis, Mapping)
        ratio, launch = r.get("step_vs_median"), diagnosis.get("launch_wait_share")
        saving, wall = diagnosis.get("saving_frac"), r.get("step_wall_median_ns")
        verdict = _text(diagnosis.get("verdict")) if diagnosis else "–"
        rows.append(
            [
                {"text": _text(r.get("file")), "cls": "strong"},
                ", ".join(str(d.get("id")) for d in _list(r.get("devices"))) or "–",
                _count(r.get("kernels")),
                _share(r.get("gpu_busy_share")),
                _share(r.get("collective_share")),
                _count(r.get("steps")),
                f"{wall / 1e6:,.2f}" if _finite(wall) else "–",
                (f"{ratio:.2f}" if _finite(ratio) else "–") + ("*" if r.get("straggler") else ""),
                {"text": verdict, "cls": "verdict verdict-" + _css_word(verdict)},
                _share(launch),
                f"{saving:.0%}" if _finite(saving) else "–",
            ]
        )
    stragglers = ", ".join(str(s) for s in _list(processes.get("stragglers"))) or "none"
    together = processes.get("replayed_together")
    job = ""
    if isinstance(together, Mapping):
        from traceinspect.report.ranks import replayed_together_said

        job = ". " + replayed_together_said(together)
    return {
        "title": "Per process",
        "columns": [
            _col("process"),
            _col("GPU"),
            _col("kernels", num=True),
            _col("busy", num=True),
            _col("comm", num=True),
            _col("steps", num=True),
            _col("step ms", num=True),
            _col("×median", num=True),
            _col("verdict"),
            _col("launch", num=True),
            _col("saving", num=True),
        ],
        "rows": rows,
        "empty": "No process with GPU work.",
        "note": "busy: GPU busy share of its span; comm: share of the busy time in collective "
        "kernels; step ms: median wall of the process's own step; * straggler (step > "
        f"{processes.get('straggler_step_ratio', 1.2)}× the median process): {stragglers}; "
        "verdict, launch (share of the step's GPU window waiting on host launches) and saving: "
        "the process's step" + job,
    }


# ---------------------------------------------------------------------------- formatting helpers


def _share(value: Any) -> str:
    """A share as a percentage to 0.1; ``–`` where unknown."""
    return f"{value:.1%}" if _finite(value) else "–"


def _col(label: str, *, num: bool = False) -> dict[str, Any]:
    return {"label": label, "num": num}


def _finite(value: Any) -> TypeGuard[float]:
    return (
        isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _num(us: Any) -> str:
    """A µs value as ``1,234.5``; ``–`` when missing."""
    return f"{float(us):,.1f}" if _finite(us) else "–"


def _num_ns(ns: Any) -> str:
    return f"{float(ns) / _NS_PER_US:,.1f}" if _finite(ns) else "–"


def _count(value: Any) -> str:
    return f"{int(value):,}" if _finite(value) else "–"


def _text(value: Any) -> str:
    return "–" if value is None or value == "" else str(value)


def _depth(value: Any) -> int:
    return max(0, min(int(value), 8)) if _finite(value) else 0


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _css_word(text: str) -> str:
    return _CSS_CLASS_UNSAFE.sub("-", text.lower()).strip("-")


def device_texts(devices: Any) -> list[str]:
    """The report's devices (``{"id", "name"}`` objects) as :func:`device_groups` gives them."""
    pairs: list[tuple[object, str | None]] = []
    for device in _list(devices):
        if isinstance(device, Mapping):
            name = device.get("name")
            pairs.append((device.get("id", "?"), name if isinstance(name, str) else None))
        else:
            pairs.append((str(device), None))
    return device_groups(pairs)
