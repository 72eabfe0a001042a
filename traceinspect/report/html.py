"""The HTML report: one self-contained page (plotly.js inlined) that works offline.

:func:`page_data` builds plain JSON-ready data from a timeline and the analysis report: the
timeline's lanes and drawn activities (times in µs since the trace start), and every table as
pre-formatted text cells. :func:`render_html` embeds that data as JSON through
:func:`safe_json` in an autoescaping template; the page's script builds the DOM from it with
``textContent`` only, so names from the trace (kernels, NVTX ranges) can never become markup.

The timeline's data and its utilization overview come from
:mod:`traceinspect.report.html_timeline`, the tables from :mod:`traceinspect.report.html_tables`.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, Final

import jinja2
import numpy as np
from markupsafe import Markup

from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.result import TraceAnalysis
from traceinspect.analysis.summary import summarize
from traceinspect.model import Timeline
from traceinspect.report.html_tables import (
    device_texts,
    health_groups,
    processes_table,
    regions_table,
    summary_section,
)
from traceinspect.report.html_timeline import timeline_data, us_since
from traceinspect.report.json_report import TOP_KERNELS, report_data, summary_json

#: Occurrences of a region highlighted in the timeline (one shape each; plotly redraws every
#: shape on each zoom).
MAX_HIGHLIGHTED_OCCURRENCES: Final = 500

_NS_PER_US: Final = 1000
_PAGE_DATA_ID: Final = "traceinspect-data"
_CSS_CLASS_UNSAFE = re.compile(r"[^a-z0-9_-]+")
# json.dumps output is ASCII-safe JSON; these are the characters that could end a <script>
# element, start a comment or entity, or end a line for older JS parsers.
_JSON_HTML_ESCAPES: Final = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "'": "\\u0027",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_HTML_UNSAFE = re.compile("[<>&'\u2028\u2029]")


# --------------------------------------------------------------------------- public entry points


def render_html(analysis: TraceAnalysis, *, top: int = TOP_KERNELS) -> str:
    """The complete page for ``analysis``: its timeline, regions (with their occurrences
    highlighted on the timeline), summary and health."""
    return render_page(
        analysis.timeline, report_data(analysis, top=top), spans=region_spans(analysis)
    )


def render_page(
    timeline: Timeline,
    report: Mapping[str, Any] | None = None,
    *,
    spans: Sequence[IntArray] | None = None,
) -> str:
    """The page for ``timeline`` and a JSON ``report`` of it (may be None or partial);
    ``spans`` are the occurrences of the report's regions (:func:`region_spans`)."""
    data = page_data(timeline, report, spans=spans)
    app_js = _script_text(_asset("report.js"))
    plotly_js = _script_text(_plotly_js())
    template = _environment().get_template("report.html.j2")
    return template.render(
        csp=_content_security_policy(app_js, plotly_js),
        data_id=_PAGE_DATA_ID,
        data_json=Markup(safe_json(data)),
        css=Markup(_asset("report.css")),
        app_js=Markup(app_js),
        plotly_js=Markup(plotly_js),
    )


def region_spans(analysis: TraceAnalysis) -> list[IntArray]:
    """Per region, its occurrences as ``[start_ns, end_ns]`` rows (at most
    :data:`MAX_HIGHLIGHTED_OCCURRENCES`, the first ones)."""
    return [
        np.column_stack([r.region.start_ns, r.region.end_ns])[:MAX_HIGHLIGHTED_OCCURRENCES]
        for r in analysis.region_results
    ]


def safe_json(value: Any) -> str:
    """JSON text that is inert inside an HTML ``<script>`` element.

    ``<``, ``>``, ``&``, ``'`` and U+2028/U+2029 become ``\\uXXXX`` escapes, which can only
    occur inside JSON strings, where they decode to the same characters. NaN is refused:
    ``JSON.parse`` would reject the whole page.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _JSON_HTML_UNSAFE.sub(lambda m: _JSON_HTML_ESCAPES[m.group(0)], text)


def page_data(
    timeline: Timeline,
    report: Mapping[str, Any] | None = None,
    *,
    spans: Sequence[IntArray] | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data; text cells are already formatted.
    ``spans``: per region of the report, its occurrences (none highlighted without)."""
    report = report or {}
    summary = report.get("summary")
    if not isinstance(summary, Mapping):
        summary = summary_json(summarize(timeline))
    trace = report.get("trace") if isinstance(report.get("trace"), Mapping) else {}
    assert isinstance(trace, Mapping)
    meta = timeline.meta
    devices = (
        trace.get("devices")
        or summary.get("devices")
        or [{"id": d.id, "name": d.name} for d in meta.devices]
    )
    timeline_part = timeline_data(timeline)
    regions = regions_table(report.get("regions"))
    t0 = timeline_part["t0_ns"]
    if spans is None:
        spans = [np.empty((0, 2), np.int64)] * len(regions["rows"])
    regions["spans"] = [
        np.column_stack([us_since(span[:, 0], t0), us_since(span[:, 1], t0)]).tolist()
        if len(span)
        else []
        for span in spans
    ]
    return {
        "trace": {
            "path": str(trace.get("path") or meta.path),
            "format": str(trace.get("format") or meta.format),
            "generation": str(summary.get("generation") or meta.generation),
            "devices": device_texts(devices),
        },
        "health": health_groups(report.get("health"), summary),
        "regions": regions,
        "summary": _with_processes(summary_section(summary), report.get("processes")),
        "timeline": timeline_part,
    }


def _with_processes(summary: dict[str, Any], processes: Any) -> dict[str, Any]:
    """The summary section with the per-process table first, where the trace holds several
    processes with GPU work (:func:`processes_table`)."""
    table = processes_table(processes)
    if table is None:
        return summary
    return {**summary, "tables": [table, *summary["tables"]]}


# ----------------------------------------------------------------------------------- page assets


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("traceinspect.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


@functools.cache
def _asset(name: str) -> str:
    return (resources.files("traceinspect.report") / "templates" / name).read_text("utf-8")


@functools.cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


_SCRIPT_END = re.compile(r"</(script)", re.IGNORECASE)


@functools.cache
def _script_text(js: str) -> str:
    """``js`` made safe to inline: a ``</script`` inside it (in a string) would end the element,
    and line ends normalised as the HTML parser will, so the CSP hash matches what runs."""
    js = js.replace("\r\n", "\n").replace("\r", "\n")
    return _SCRIPT_END.sub(r"<\\/\1", js)


def _content_security_policy(*scripts: str) -> str:
    """Only the page's own scripts may run (by hash, so no inline event handler ever does) and
    nothing is fetched from anywhere; plotly sets inline styles and reads data: images."""
    hashes = " ".join(f"'sha256-{_sha256_b64(js)}'" for js in scripts)
    return (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "img-src data: blob:; font-src data:"
    )


@functools.cache
def _sha256_b64(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
