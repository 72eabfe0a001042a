"""The HTML report in a real headless browser: it renders offline, and names stay text.

Needs Debian's chromium (``apt-get install -y chromium``); skipped where it is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_html_timeline import memset_storm

from traceinspect.model import DeviceInfo, Timeline, TraceMeta, make_table
from traceinspect.report import html_timeline
from traceinspect.report.html import render_page
from traceinspect.report.html_timeline import SERIES_STYLE

pytestmark = pytest.mark.slow

CHROMIUM_TIMEOUT_S = 30  # a page of a few MB renders in ~5 s on 2 cores; hangs must fail
#: Sets the page title if any injected markup ever runs.
PWNED = """</script><img src=x onerror="document.title='PWNED'">"""
PWNED_RANGE = """<svg onload="document.title='PWNED'"></svg>"""
_CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium not installed (Debian: apt-get install -y chromium)")
    return path


def dump_dom(html: str, tmp_path: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran, from headless chromium with no network;
    ``fragment`` is appended to the page's address (``#range=…``)."""
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    command = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: any fetch would fail
        "--enable-logging=stderr",  # the page's console, CSP refusals included
        "--v=0",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--virtual-time-budget=10000",
        "--dump-dom",
        page.as_uri() + fragment,
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Nothing on the console: no script error, no CSP refusal, no failed load.
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    return done.stdout


def hostile_timeline() -> Timeline:
    """A kernel, a launch call and an NVTX range whose names try to run script."""
    gpu = make_table(
        "gpu",
        {
            "kind": ["kernel", "kernel"],
            "name": [PWNED, "gemm"],
            "device": [0, 0],
            "stream": [7, 7],
            "start_ns": [10_000, 30_000],
            "end_ns": [20_000, 35_000],
        },
    )
    host = make_table(
        "host",
        {
            "name": ["cudaLaunchKernel", "cudaLaunchKernel"],
            "api": ["runtime", "runtime"],
            "kind": ["launch", "launch"],
            "pid": [1, 1],
            "tid": [2, 2],
            "start_ns": [5_000, 25_000],
            "end_ns": [8_000, 28_000],
        },
    )
    annotations = make_table(
        "annotations",
        {
            "name": [PWNED_RANGE],
            "source": ["nvtx"],
            "pid": [1],
            "tid": [2],
            "start_ns": [0],
            "end_ns": [40_000],
        },
    )
    meta = TraceMeta(
        path="/traces/hostile.json",
        format="kineto",
        generation="kineto",
        devices=(DeviceInfo(0, "NVIDIA H200"),),
    )
    return Timeline(meta=meta, gpu=gpu, host=host, annotations=annotations)


REPORT: dict[str, Any] = {
    "regions": [
        {
            "name": PWNED_RANGE,
            "source": "nvtx",
            "occurrences": 1,
            "wall_us": 40.0,
            "gpu_busy_us": 15.0,
            "kernels": 2,
            "verdict": "launch-bound",
            "evidence": [PWNED],
        }
    ]
}


def text_of(fragment: str) -> str:
    """How chromium serialises ``fragment`` as a text node."""
    return fragment.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@pytest.mark.parametrize("with_csp", [True, False], ids=["page", "page-without-csp"])
def test_hostile_names_render_as_text_and_the_timeline_draws(
    tmp_path: Path, with_csp: bool
) -> None:
    # GIVEN names carrying markup; WHEN the page is opened (also with the CSP removed, so
    # escaping alone is tested, not the policy that would block inline handlers anyway)
    # (the region's one occurrence, as the analysis gives it, highlights on the timeline)
    spans = [np.array([[0, 40_000]], np.int64)]
    html = render_page(hostile_timeline(), REPORT, spans=spans)
    if not with_csp:
        html, removed = _CSP_META.subn("", html)
        assert removed == 1
    dom = dump_dom(html, tmp_path)
    # THEN no injected handler ran: the title is the one the page's own script set
    title = re.search(r"<head>.*?<title>(.*?)</title>", dom, re.DOTALL)
    assert title is not None
    assert title.group(1) == "traceinspect · hostile.json"
    assert "PWNED</title>" not in dom
    # AND no injected element exists; the names are present as text
    assert "<img" not in dom
    assert "<svg onload" not in dom
    # the kernel name: in the region's evidence and the top kernels table, nowhere else
    assert dom.count(text_of(PWNED)) == 2
    assert f"<li>{text_of(PWNED)}</li>" in dom
    assert f'<td class="kernel-name"><span>{text_of(PWNED)}</span></td>' in dom
    assert (
        f'<td class="region-name"><span>{text_of(PWNED_RANGE)}</span>'
        '<button type="button" class="show" title="Zoom the timeline to the first occurrence '
        'and shade every occurrence">show in timeline</button></td>'
    ) in dom
    assert '<td class="verdict verdict-launch-bound"><span>launch-bound</span></td>' in dom
    # AND plotly drew the timeline offline: its SVG, one lane label per lane, 4 series
    assert '<div class="plot-container plotly"' in dom
    assert '<svg class="main-svg"' in dom
    for lane in ("thread 2 · regions 0", "thread 2 · API calls", "GPU 0 · stream 7"):
        assert f'data-unformatted="{lane}"' in dom
    # kernel, launch call, NVTX: a legend entry and bars each (every lane is sparse enough to
    # show its activities, so the busy-share areas are empty and not drawn)
    legend = re.findall(r'class="legendtext"[^>]*data-unformatted="([^"]*)"', dom)
    assert legend == ["kernel", "launch call", "NVTX range"]
    assert len(re.findall(r'<g class="trace scatter', dom)) == 3 * 2


def test_downsampled_timeline_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN 60,000 1 µs kernels 1 µs apart: above a 50,000 cap
    monkeypatch.setattr(html_timeline, "MAX_EMBEDDED_ACTIVITIES", 50_000)
    n = 60_000
    starts = np.arange(n, dtype=np.int64) * 2_000
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
    timeline = Timeline(meta=TraceMeta(path="big.json", format="kineto", generation="k"), gpu=gpu)
    dom = dump_dom(render_page(timeline, None), tmp_path)
    # THEN the page says how it was drawn: merged at the 1 µs gap, into one block
    assert (
        "Downsampled: 60,000 activities are drawn as 1 blocks (cap 50,000). Runs of activities "
        "shorter than 1.000 µs and at most that far apart were merged per lane and kind"
    ) in dom
    assert '<svg class="main-svg"' in dom
    # AND the merged block still counts as 50 % busy, not as a solid bar
    assert lane_row(dom, "GPU 0 · stream 7") == ["busy share", "50%", "kernel 50%"]


def lane_row(dom: str, lane: str) -> list[str]:
    """The cells after the lane's name in the page's "what the timeline shows" table."""
    table = re.search(r'<table id="timeline-view">(.*?)</table>', dom, re.DOTALL)
    assert table is not None
    for row in re.findall(r"<tr>(.*?)</tr>", table.group(1), re.DOTALL):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
        if cells and cells[0] == lane:
            return cells[1:]
    raise AssertionError(f"no row for {lane}")


def test_zoomed_out_overview_shows_busy_share_not_min_width_bars(tmp_path: Path) -> None:
    # GIVEN a stream where 0.7 µs memsets are 5 of every 6 activities but 11.7 % of the time
    # (one 25 µs kernel and five memsets per 30 µs, 2,000 times: 12,000 activities)
    timeline = memset_storm()
    dom = dump_dom(render_page(timeline, None), tmp_path)
    # THEN zoomed out, the lane shows its busy share by kind: kernels 83 %, memsets 12 %
    match = re.search(r'data-view="([^"]*)"', dom)
    assert match is not None and match.group(1) == "share"
    assert lane_row(dom, "GPU 0 · stream 7") == ["busy share", "95%", "kernel 83%, memset 12%"]
    assert "over 1,000 bins of the whole trace (exact)" in dom
    # AND the area is painted in the kernel colour and the memset colour, which differ
    kernel_rgb, memset_rgb = (rgb(SERIES_STYLE[k][1]) for k in ("kernel", "memset"))
    assert kernel_rgb != memset_rgb
    assert f"fill: {kernel_rgb}" in dom and f"fill: {memset_rgb}" in dom
    # AND the legend lists both kinds
    legend = re.findall(r'class="legendtext"[^>]*data-unformatted="([^"]*)"', dom)
    assert legend == ["kernel", "memset"]
    # AND it drew in time: the page records when its first plot was done
    first_plot = re.search(r'data-first-plot-ms="(\d+)"', dom)
    assert first_plot is not None


def test_zoomed_in_the_lane_shows_its_activities(tmp_path: Path) -> None:
    # GIVEN the same stream opened at a 100 µs window (#range=): 4 kernels, 15 memsets in view
    dom = dump_dom(render_page(memset_storm(), None), tmp_path, "#range=3000,3100")
    # THEN they are drawn as activities, with their names on hover
    match = re.search(r'data-view="([^"]*)"', dom)
    assert match is not None and match.group(1) == "activities"
    assert lane_row(dom, "GPU 0 · stream 7") == ["activities (19)", "", ""]
    assert "In view: 3,000.000 – 3,100.000 µs" in dom


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"
