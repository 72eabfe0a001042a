"""The HTML report without a browser: page structure, embedded data, escaping, downsampling."""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import corpus_file, sample_file
from plotly.offline import get_plotlyjs

from traceinspect.analysis.diagnose import diagnose
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, make_table
from traceinspect.report.html import page_data, region_spans, render_page, safe_json
from traceinspect.report.html_timeline import (
    MAX_EMBEDDED_ACTIVITIES,
    timeline_data,
)
from traceinspect.report.json_report import report_data

XSS_KERNEL = "</script><img src=x onerror=alert(1)>"
XSS_RANGE = "<b onmouseover=alert(2)>step & 'go'\u2028</b>"
EPOCH_NS = 1_700_000_000_000_000_123  # absolute ns: a float64 would lose the last digits

_DATA = re.compile(
    r'<script type="application/json" id="traceinspect-data">(.*?)</script>', re.DOTALL
)


def payload(html: str) -> dict[str, Any]:
    """The JSON the page embeds (exactly one data block)."""
    blocks = _DATA.findall(html)
    assert len(blocks) == 1
    return json.loads(blocks[0])  # type: ignore[no-any-return]


def small_timeline() -> Timeline:
    """Two streams, one host thread with two annotation levels; names include an attack."""
    t = EPOCH_NS
    gpu = make_table(
        "gpu",
        {
            "kind": ["kernel", "kernel", "memcpy", "kernel"],
            "name": ["gemm", XSS_KERNEL, "Memcpy HtoD (Pageable -> Device)", "gemm"],
            "device": [0, 0, 0, 0],
            "stream": [7, 7, 13, 7],
            "start_ns": [t + 10_000, t + 20_000, t + 5_000, t + 40_000],
            "end_ns": [t + 15_500, t + 21_001, t + 9_000, t + 45_000],
            "from_graph": [False, False, False, True],
        },
    )
    host = make_table(
        "host",
        {
            "name": ["cudaLaunchKernel", "cudaLaunchKernel", "cudaMemcpyAsync", "cudaGraphLaunch"],
            "api": ["runtime"] * 4,
            "kind": ["launch", "launch", "memcpy", "graph_launch"],
            "pid": [1, 1, 1, 1],
            "tid": [11, 11, 11, 11],
            "start_ns": [t + 8_000, t + 18_000, t + 0, t + 30_000],
            "end_ns": [t + 9_000, t + 19_000, t + 4_000, t + 31_000],
        },
    )
    annotations = make_table(
        "annotations",
        {
            "name": ["ProfilerStep#1", XSS_RANGE],
            "source": ["profiler_step", "nvtx"],
            "pid": [1, 1],
            "tid": [11, 11],
            "start_ns": [t + 0, t + 7_000],
            "end_ns": [t + 50_000, t + 22_000],
            "depth": [0, 1],
        },
    )
    meta = TraceMeta(
        path="/traces/xss.json",
        format="kineto",
        generation="kineto",
        devices=(DeviceInfo(0, "NVIDIA H200"),),
    )
    return Timeline(meta=meta, gpu=gpu, host=host, annotations=annotations)


REPORT: dict[str, Any] = {
    "schema_version": 1,
    "trace": {
        "path": "/traces/xss.json",
        "format": "kineto",
        "devices": [{"id": 0, "name": "H200"}],
    },
    "health": [{"kind": "clock", "message": "host and GPU clocks differ by 12 µs"}],
    "regions": [
        {
            "name": "decode",
            "source": "record_function",
            "depth": 1,
            "occurrences": 32,
            "wall_us": 1234.5,
            "gpu_busy_us": 308.6,
            "gpu_busy_share": 0.25,
            "kernels": 1216,
            "idle_us": {"host_launch": 800.25, "sync": 20.0, "copy": 0.0, "dependency": 5.5},
            "verdict": "launch-bound",
            "evidence": ["GPU idle 75% of wall", "median launch gap 4.1 µs"],
            "estimate": {
                "graphed_us": 420.0,
                "low_us": 380.0,
                "high_us": 470.0,
                "saving_us": 814.5,
                "saving_frac": 0.66,
            },
            "capture": {
                "capturable": False,
                "blockers": [{"kind": "sync", "what": "cudaStreamSynchronize", "count": 32}],
            },
        },
        {"name": XSS_KERNEL, "verdict": None, "estimate": None},  # partial: tolerated
    ],
}


# ------------------------------------------------------------------------ self-contained, safe


def test_page_is_self_contained_with_plotly_inlined() -> None:
    # GIVEN a rendered page
    html = render_page(small_timeline(), REPORT)
    bundle = get_plotlyjs()
    # THEN the plotly.js bundle is in it verbatim, once
    assert html.count(bundle) == 1
    # AND outside the bundle nothing is loaded from anywhere: no src/href to a URL
    markup = html.replace(bundle, "")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", markup, re.IGNORECASE)
    assert not re.search(r"<script[^>]*\bsrc\s*=", markup, re.IGNORECASE)
    assert not re.search(r"<link\b", markup, re.IGNORECASE)
    assert "cdn.plot.ly/plotly" not in markup


def test_content_security_policy_pins_the_inline_scripts() -> None:
    html = render_page(small_timeline(), REPORT)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert csp is not None
    policy = html_lib.unescape(csp.group(1))
    assert "default-src 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    # Every executable inline script's hash is allowed, and nothing else is.
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    assert len(scripts) == 2  # plotly.js and the page's own script
    allowed = re.findall(r"'sha256-([A-Za-z0-9+/=]+)'", policy)
    digests = [
        base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode() for s in scripts
    ]
    assert sorted(allowed) == sorted(digests)


def test_user_names_never_appear_as_markup() -> None:
    html = render_page(small_timeline(), REPORT)
    # GIVEN kernel and NVTX names carrying markup, THEN no raw "<" of theirs is in the page
    assert "</script><img" not in html
    assert "<img" not in html.lower()
    assert "<b onmouseover" not in html
    assert "\u2028" not in html
    # Only the escaped JSON form is present, and it decodes back to the exact names.
    assert "\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e" in html
    data = payload(html)
    assert XSS_KERNEL in data["timeline"]["names"]
    assert XSS_RANGE in data["timeline"]["names"]
    top = data["summary"]["tables"][1]["rows"]
    assert {"text": XSS_KERNEL, "cls": "kernel-name"} in [row[0] for row in top]


def test_safe_json_escapes_html_significant_characters() -> None:
    text = safe_json({"a": "</script>&'\u2028\u2029", "b": [1, 2.5, None]})
    assert text == ('{"a":"\\u003c/script\\u003e\\u0026\\u0027\\u2028\\u2029","b":[1,2.5,null]}')
    assert json.loads(text) == {"a": "</script>&'\u2028\u2029", "b": [1, 2.5, None]}
    with pytest.raises(ValueError):
        safe_json({"x": float("nan")})  # JSON.parse would reject the page


# --------------------------------------------------------------------------------- the timeline


def test_timeline_lanes_series_and_relative_microseconds() -> None:
    data = page_data(small_timeline(), None)["timeline"]
    # Lanes: the host thread's two region levels and API calls, then one lane per stream.
    assert [lane["label"] for lane in data["lanes"]] == [
        "thread 11 · regions 0",
        "thread 11 · regions 1",
        "thread 11 · API calls",
        "GPU 0 · stream 7",
        "GPU 0 · stream 13",
    ]
    assert data["total"] == data["drawn"] == 10  # 4 GPU + 4 calls + 2 ranges
    assert data["downsampled"] is None
    assert data["t0_ns"] == EPOCH_NS
    assert data["span_us"] == 50.0
    series = {s["key"]: s for s in data["series"]}
    assert list(series) == [
        "kernel",
        "kernel (graph)",  # graph-launched kernels get their own colour
        "memcpy",
        "call:launch",
        "call:graph_launch",
        "call:memcpy",
        "profiler_step",
        "nvtx",
    ]
    kernels = series["kernel"]
    assert kernels["lane"] == [3, 3]
    # µs since trace start, exact to the ns despite the 19-digit epoch timestamps
    assert kernels["start_us"] == [10.0, 20.0]
    assert kernels["end_us"] == [15.5, 21.001]
    assert [data["names"][i] for i in kernels["name"]] == ["gemm", XSS_KERNEL]
    assert kernels["count"] == [1, 1]
    assert "busy_us" not in kernels
    assert series["kernel (graph)"]["start_us"] == [40.0]
    assert series["memcpy"]["lane"] == [4]
    assert series["call:memcpy"]["lane"] == [2]
    assert series["nvtx"]["lane"] == [1]
    assert series["nvtx"]["start_us"] == [7.0]


def test_empty_timeline_draws_nothing() -> None:
    timeline = Timeline(meta=TraceMeta(path="cpu.json", format="kineto", generation="kineto"))
    data = page_data(timeline, None)
    assert data["timeline"]["series"] == []
    assert data["timeline"]["total"] == 0
    assert data["summary"]["tables"][0]["rows"] == []
    assert "<title>" in render_page(timeline, None)


def many_kernels(n: int, period_ns: int = 2_000) -> Timeline:
    """``n`` 1 µs kernels every ``period_ns`` on one stream, then two 500 µs kernels."""
    starts = np.arange(n, dtype=np.int64) * period_ns
    long_starts = np.array([starts[-1] + 10_000, starts[-1] + 600_000], dtype=np.int64)
    gpu = make_table(
        "gpu",
        {
            "kind": ["kernel"] * (n + 2),
            "name": [f"k{i % 3}" for i in range(n)] + ["big", "big"],
            "device": [0] * (n + 2),
            "stream": [7] * (n + 2),
            "start_ns": np.concatenate([starts, long_starts]),
            "end_ns": np.concatenate([starts + 1_000, long_starts + 500_000]),
        },
    )
    return Timeline(meta=TraceMeta(path="big.json", format="kineto", generation="kineto"), gpu=gpu)


#: A small cap, so the merging below is tested on traces that build in a blink.
CAP = 50_000


def test_no_downsampling_at_the_cap() -> None:
    assert MAX_EMBEDDED_ACTIVITIES == 400_000
    data = timeline_data(many_kernels(CAP - 2), cap=CAP)
    assert data["total"] == data["drawn"] == CAP
    assert data["downsampled"] is None


@pytest.mark.parametrize(
    ("period_ns", "resolution_us", "last_end_us"),
    [
        # 1 µs gaps: the smallest resolution that meets the cap is the gap itself, and at it
        # every short kernel joins one run.
        (2_000, 1.0, 239_999.0),
        # 5 µs gaps: likewise 5 µs (the first guess, 3.605 µs, merged nothing).
        (6_000, 5.0, 719_995.0),
    ],
)
def test_downsampling_above_the_cap_merges_short_runs_and_says_so(
    period_ns: int, resolution_us: float, last_end_us: float
) -> None:
    # GIVEN 120,000 short kernels and two long ones
    data = timeline_data(many_kernels(120_000, period_ns), cap=CAP)
    # THEN at most the cap is drawn, and the page is told at what resolution
    assert data["total"] == 120_002
    assert data["downsampled"] == {"cap": CAP, "resolution_us": resolution_us}
    (kernels,) = data["series"]
    assert data["drawn"] == len(kernels["count"]) == 3
    # No activity is lost: counts and busy time add up to the originals.
    assert kernels["count"] == [120_000, 1, 1]
    assert kernels["busy_us"] == [120_000.0, 500.0, 500.0]
    assert kernels["start_us"][0] == 0.0
    assert kernels["end_us"][0] == last_end_us
    # The long kernels are drawn as recorded.
    assert [data["names"][i] for i in kernels["name"][1:]] == ["big", "big"]
    assert kernels["end_us"][1:] == [last_end_us + 509.0, last_end_us + 1_099.0]


def test_downsampling_stops_at_the_finest_resolution_that_meets_the_cap() -> None:
    # GIVEN runs of 4 kernels (1 µs long, 1 µs apart), runs 3 µs apart: 120,000 kernels
    n = 120_000
    starts = np.arange(n, dtype=np.int64) * 2_000 + (np.arange(n) // 4) * 2_000
    gpu = make_table(
        "gpu",
        {
            "kind": ["kernel"] * n,
            "name": ["k"] * n,
            "device": [0] * n,
            "stream": [7] * n,
            "start_ns": starts,
            "end_ns": starts + 1_000,
        },
    )
    meta = TraceMeta(path="runs.json", format="kineto", generation="kineto")
    data = timeline_data(Timeline(meta=meta, gpu=gpu), cap=CAP)
    # THEN at 1 µs each run becomes one block (30,000 ≤ cap); runs are not merged further
    assert data["downsampled"] == {"cap": CAP, "resolution_us": 1.0}
    (kernels,) = data["series"]
    assert data["drawn"] == 30_000
    assert set(kernels["count"]) == {4}
    assert kernels["start_us"][:3] == [0.0, 10.0, 20.0]
    assert kernels["end_us"][:3] == [7.0, 17.0, 27.0]
    assert kernels["busy_us"][:3] == [4.0, 4.0, 4.0]


def test_downsampling_keeps_lanes_and_kinds_apart() -> None:
    # GIVEN 60,000 short kernels alternating between two streams, and as many launch calls
    n = 60_000
    starts = np.arange(n, dtype=np.int64) * 2_000
    gpu = make_table(
        "gpu",
        {
            "kind": ["kernel"] * n,
            "name": ["k"] * n,
            "device": [0] * n,
            "stream": [7, 8] * (n // 2),
            "start_ns": starts + 500,
            "end_ns": starts + 1_500,
        },
    )
    host = make_table(
        "host",
        {
            "name": ["cudaLaunchKernel"] * n,
            "api": ["runtime"] * n,
            "kind": ["launch"] * n,
            "pid": [1] * n,
            "tid": [2] * n,
            "start_ns": starts,
            "end_ns": starts + 400,
        },
    )
    meta = TraceMeta(path="two.json", format="kineto", generation="kineto")
    data = timeline_data(Timeline(meta=meta, gpu=gpu, host=host), cap=CAP)
    # THEN merged blocks never span two lanes or two kinds: one block per (lane, kind)
    assert data["total"] == 120_000
    blocks = {s["key"]: (s["lane"], s["count"]) for s in data["series"]}
    assert blocks == {"kernel": ([1, 2], [30_000, 30_000]), "call:launch": ([0], [60_000])}


# ------------------------------------------------------------------------------- report tables


def test_regions_of_several_processes_carry_their_pid() -> None:
    # GIVEN a report whose regions span two processes (two ranks' ranges of one name)
    regions = [
        {**REPORT["regions"][0], "name": "step (detected)", "process": 111},
        {**REPORT["regions"][0], "name": "step (detected)", "process": 112},
    ]
    table = page_data(small_timeline(), {**REPORT, "regions": regions})["regions"]
    # THEN the table tells them apart, as the terminal does
    assert [row[0]["text"] for row in table["rows"]] == [
        "[pid 111] step (detected)",
        "[pid 112] step (detected)",
    ]


def test_regions_table_shows_the_report_values() -> None:
    data = page_data(small_timeline(), REPORT)
    table = data["regions"]
    assert [c["label"] for c in table["columns"]] == [
        "region",
        "source",
        "occurrences",
        "wall µs",
        "GPU busy µs",
        "kernels",
        "GPU idle µs by cause",
        "verdict",
        "graphed µs",
        "saving",
        "capture",
        "decision",
    ]
    decode, partial = table["rows"]
    assert decode == [
        {"text": "decode", "cls": "region-name", "indent": 1},
        "record_function",
        "32",
        "1,234.5",
        "308.6 (25%)",  # the report's gpu_busy_share
        "1,216",
        # 800.25 + 20 + 0 + 5.5; zero and missing causes are not listed
        {"text": "825.8", "details": ["launch 800.2", "sync 20.0", "dependency 5.5"]},
        {"text": "launch-bound", "cls": "verdict verdict-launch-bound"},
        {"text": "420.0", "details": ["380.0 – 470.0"]},
        "814.5 (66%)",
        {"text": "not capturable", "cls": "capture-no", "details": ["1 blocker"]},
        "–",  # no decision in this report
    ]
    assert table["details"][0] == {
        "sections": [
            {"title": "Evidence", "items": ["GPU idle 75% of wall", "median launch gap 4.1 µs"]},
            {"title": "Capture blockers", "items": ["sync ×32: cudaStreamSynchronize"]},
        ]
    }
    # The partial region: every missing value shows as missing, and it has no details.
    assert partial[0]["text"] == XSS_KERNEL
    assert partial[1:] == [
        "–", "–", "–", "–", "–", "–", {"text": "–", "cls": ""}, "–", "–", "–", "–"
    ]
    assert table["details"][1] is None


def test_regions_table_with_the_diagnosis_report_fields() -> None:
    # GIVEN the fields build_report writes beyond the minimum (shares, estimate, blockers)
    region = {
        "name": "ProfilerStep",
        "wall_us": 216_119.0,
        "gpu_busy_us": 79_470.0,
        "gpu_busy_share": 0.2119,  # of the region's GPU window, not of the wall
        "verdict": "sync-bound",
        "estimate": {
            "graphed_us": 79_724.7,
            "low_us": 72_625.8,
            "high_us": 105_359.5,
            "saving_us": 286_150.8,
            "saving_frac": 0.7821,
            "eager_us": 365_875.5,
            "eager_source": "trace-deflated",
            "calibration": "nvidia-h200",
            "graph": {"nodes": 1_075, "streams": 6},
            "parts": {"launch": 13.8, "gpu_work": 79_470.0},
            "notes": ["eager time estimated from the profiled trace"],
        },
        "capture": {
            "capturable": False,
            "verdict": "capturable after changes",
            "blockers": [
                {
                    "kind": "pageable_copy",
                    "severity": "change",
                    "what": "aten::to (cudaMemcpyAsync) ×12",
                    "count": 12,
                    "fix": "copy inputs into static device buffers",
                }
            ],
        },
    }
    table = page_data(small_timeline(), {"regions": [region]})["regions"]
    (row,) = table["rows"]
    assert row[4] == "79,470.0 (21%)"
    assert row[8:] == [
        {"text": "79,724.7", "details": ["72,625.8 – 105,359.5"]},
        "286,150.8 (78%)",
        {"text": "capturable after changes", "cls": "capture-no", "details": ["1 blocker"]},
        "–",
    ]
    assert table["details"][0]["sections"] == [  # no evidence given: no evidence section
        {
            "title": "Replay estimate",
            "items": [
                "eager 365,875.5 µs (trace-deflated) → graphed 79,724.7 µs",
                "graph: nodes 1075, streams 6",
                "replay time parts (µs): launch 13.8, gpu work 79,470.0",
                "calibration: nvidia-h200",
                "eager time estimated from the profiled trace",
            ],
        },
        {
            "title": "Capture blockers",
            "items": [
                "pageable_copy [change] ×12: aten::to (cudaMemcpyAsync) ×12"
                " — fix: copy inputs into static device buffers"
            ],
        },
    ]


def test_regions_table_carries_the_graph_decision() -> None:
    # GIVEN the mixed H200 step analyzed
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace
    from traceinspect.report.json_report import report_data

    analysis = diagnose(load_trace(sample_file("mixed.eager.json.gz")))
    table = page_data(analysis.timeline, report_data(analysis))["regions"]
    names = [row[0]["text"] for row in table["rows"]]
    attention = names.index("attention")
    cell = table["rows"][attention][-1]
    # THEN the decision column says enable, on an estimated saving
    assert cell["text"] == "enable"
    assert cell["cls"] == "decision decision-enable"
    (saving,) = cell["details"]
    assert saving.startswith("saves ") and saving.endswith("% (estimated)")
    section = table["details"][attention]["sections"][0]
    assert section["title"] == "Decision: enable CUDA graphs?"
    assert section["items"][0] == "enable"
    assert "capture ms: unknown (unknown)" in section["items"]
    assert "graph memory MiB: unknown (unknown)" in section["items"]


def test_regions_know_their_occurrences_in_the_timeline() -> None:
    # GIVEN the analysis of a trace with a profiler step and an NVTX range inside it
    analysis = diagnose(small_timeline(), estimate=False)
    assert [(r.name, r.region.source) for r in analysis.region_results] == [
        ("ProfilerStep", "profiler_step"),
        (XSS_RANGE, "nvtx"),
    ]
    # WHEN the page is built from it
    spans = region_spans(analysis)
    table = page_data(analysis.timeline, report_data(analysis), spans=spans)["regions"]
    # THEN each row carries the region's own occurrences in µs since the trace start
    assert table["spans"] == [[[0.0, 50.0]], [[7.0, 22.0]]]
    # and a report without the analysis highlights none
    assert page_data(small_timeline(), report_data(analysis))["regions"]["spans"] == [[], []]


def test_health_and_trace_come_from_the_report() -> None:
    report = {
        **REPORT,
        "health": [
            {"kind": "clock", "message": "host and GPU clocks differ by 12 µs"},
            {"kind": "overlap_matched", "message": "872 activities of ProfilerStep joined it"},
            {"kind": "warmup_included", "message": "first occurrence of decode took 2.1×"},
            {"kind": "overlap_matched", "message": "3 activities of forward joined it"},
        ],
    }
    data = page_data(small_timeline(), report)
    # Warnings are grouped by kind, in order of first appearance.
    assert data["health"] == [
        {"kind": "clock", "messages": ["host and GPU clocks differ by 12 µs"]},
        {
            "kind": "overlap_matched",
            "messages": [
                "872 activities of ProfilerStep joined it",
                "3 activities of forward joined it",
            ],
        },
        {"kind": "warmup_included", "messages": ["first occurrence of decode took 2.1×"]},
    ]
    assert data["trace"] == {
        "path": "/traces/xss.json",
        "format": "kineto",
        "generation": "kineto",
        "devices": ["0: H200"],
    }


def test_without_a_report_the_summary_is_computed_and_regions_say_so() -> None:
    data = page_data(small_timeline(), None)
    assert data["regions"]["rows"] == []
    assert data["regions"]["empty"] == "No region analysis in this report."
    assert data["trace"]["devices"] == ["0: NVIDIA H200"]
    assert data["summary"]["facts"] == [
        "3 kernels",
        "1 memcpy",
        "0 memset",
        "1 GPU activities from graph launches",
        "4 GPU activities without a launch record",
    ]
    busy = data["summary"]["tables"][0]["rows"]
    # Device 0: kernels 5.5 + 1.001 + 5 µs on stream 7, 4 µs of copy on 13; span 5..45 µs.
    assert busy[0] == [{"text": "0", "cls": "strong"}, "all", "4", "3", "15.5", "40.0", "38.8%"]
    assert busy[1] == ["", "7", "3", "3", "11.5", "", ""]
    assert busy[2] == ["", "13", "1", "0", "4.0", "", ""]


# ------------------------------------------------------------------------------- a real trace


@pytest.mark.corpus
def test_corpus_trace_with_graph_launches() -> None:
    from traceinspect.parse import load_trace

    path = corpus_file("HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz")
    data = page_data(load_trace(path), None)["timeline"]
    # 6 host threads (one with 6 region levels drawn, one with 2), 6 streams of GPU 0
    assert len(data["lanes"]) == 20
    assert [lane["label"] for lane in data["lanes"][-6:]] == [
        f"GPU 0 · stream {s}" for s in (7, 25, 27, 84, 285, 363)
    ]
    counts = {s["key"]: len(s["lane"]) for s in data["series"]}
    # 345 graph-launched activities: 135 kernels and 210 memsets; 70 cudaGraphLaunch calls
    assert counts["kernel (graph)"] == 135
    assert counts["memset (graph)"] == 210
    assert counts["kernel"] == 6_080 - 135
    assert counts["call:graph_launch"] == 70
    # 7,747 GPU + 33,924 calls + 340 of the 360 ranges (20 are nested 7 and 8 deep)
    assert data["total"] == data["drawn"] == 42_011
    assert data["annotations_not_drawn"] == 20
    assert data["downsampled"] is None
    assert data["span_us"] == 1_232_469.0


@pytest.mark.corpus
def test_analyze_cli_writes_the_page(tmp_path: Path) -> None:
    # GIVEN a ROCm vLLM decode step: one hipGraphLaunch fanning out to 421 of its 425 kernels
    from traceinspect.cli import main

    trace = corpus_file("TraceLens__vllm_decode_full__graph_execution.json.gz")
    out = tmp_path / "report.html"
    # WHEN analyze writes the HTML report
    assert main(["analyze", str(trace), "--html", str(out)]) == 0
    data = payload(out.read_text(encoding="utf-8"))
    # THEN it carries the timeline of the trace and the diagnosis of its one region
    timeline = data["timeline"]
    assert [lane["label"] for lane in timeline["lanes"]] == [
        "thread 851 · regions 0",
        "thread 851 · API calls",
        "GPU 2 · stream 0",
    ]
    counts = {s["key"]: len(s["lane"]) for s in timeline["series"]}
    assert counts["kernel (graph)"] == 421
    assert counts["kernel"] == 4
    assert counts["call:graph_launch"] == 1
    assert timeline["total"] == 455
    (region,) = data["regions"]["rows"]
    assert region[0]["text"].startswith("execute_32_context_0(")
    assert region[1:3] == ["record_function", "1"]
    assert region[5] == "425"
    assert region[7] == {"text": "already-graphed", "cls": "verdict verdict-already-graphed"}
    # AND a second run refuses to overwrite it
    assert main(["analyze", str(trace), "--html", str(out)]) == 2


def test_sample_graph_replay_trace() -> None:
    # GIVEN decode_step replayed as a CUDA graph on the H200: 5 steps, each one
    # cudaGraphLaunch of 168 kernels plus 8 captured copies, after 2 input copies
    from traceinspect.parse import load_trace

    data = page_data(load_trace(sample_file("decode_step.graphed.json.gz")), None)["timeline"]
    assert [lane["label"] for lane in data["lanes"]] == [
        "thread 441 · regions 0",  # ProfilerStep#N
        "thread 441 · regions 1",  # step
        "thread 441 · API calls",
        "GPU 0 · stream 7 · regions",  # kineto's GPU projection of the ranges
        "GPU 0 · stream 7",
    ]
    counts = {s["key"]: len(s["lane"]) for s in data["series"]}
    assert counts == {
        "kernel (graph)": 840,  # every kernel marked graph-launched, none eager
        "memcpy": 10,
        "memcpy (graph)": 40,
        "call:graph_launch": 5,
        "call:memcpy": 10,
        "call:sync": 6,
        "call:other": 5,
        "profiler_step": 5,
        "record_function": 5,
        "gpu_user_annotation": 5,
    }
    assert data["total"] == data["drawn"] == 931
    assert data["span_us"] == 3_949.629
