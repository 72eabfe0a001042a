"""The Python API (``traceinspect.load`` / ``traceinspect.analyze``) and the one-object rule:
the DataFrames equal the ``--json`` report, and terminal, JSON and HTML are drawn from one
:class:`TraceAnalysis` without computing anything of their own."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, sample_file

import traceinspect
from traceinspect.analysis.gaps import CAUSES
from traceinspect.cli import main
from traceinspect.report.html import render_html
from traceinspect.report.json_report import render_json, report_data
from traceinspect.report.terminal import render_terminal

#: Real H200 traces: Kineto with a profiler step, nested regions and a host sync; an Nsight
#: Systems export of two streams; one of two DDP processes (NCCL on two H200s), whose regions
#: are per process.
TRACES = (
    "mixed.eager.json.gz",
    "host_sync.eager.json.gz",
    "nsys/two_streams.eager.sqlite.gz",
    "nsys/ddp_nccl.sqlite.gz",
)


def json_report(trace: Path, tmp_path: Path) -> dict[str, Any]:
    """What ``traceinspect analyze TRACE --json OUT`` writes."""
    out = tmp_path / "report.json"
    assert main(["analyze", str(trace), "--json", str(out)]) == 0
    report: dict[str, Any] = json.loads(out.read_text())
    return report


@pytest.mark.parametrize("name", TRACES)
def test_dataframes_equal_the_json_report(name: str, tmp_path: Path) -> None:
    trace = sample_file(name)
    # GIVEN the CLI's JSON report and the API's analysis of the same trace
    report = json_report(trace, tmp_path)
    analysis = traceinspect.analyze(trace)
    regions = analysis.regions
    # THEN one row per region, in the report's order, with the report's numbers
    assert list(regions["name"]) == [r["name"] for r in report["regions"]]
    assert str(regions["process"].dtype) == "Int64"
    for row, r in zip(regions.itertuples(index=False), report["regions"], strict=True):
        assert row.source == r["source"]
        assert row.process is pd.NA if r["process"] is None else row.process == r["process"]
        assert row.verdict == r["verdict"]
        assert row.capture == r["capture"]["verdict"]
        assert row.occurrences == r["occurrences"]
        assert (row.wall_us, row.window_us, row.gpu_busy_us) == (
            r["wall_us"],
            r["window_us"],
            r["gpu_busy_us"],
        )
        assert row.kernels == r["kernels"]
        share = r["gpu_busy_share"]
        assert np.isnan(row.gpu_busy_share) if share is None else row.gpu_busy_share == share
        for cause in CAUSES:
            assert getattr(row, f"idle_{cause}_us") == r["idle_us"][cause]
        est = r["estimate"]
        if est is None:
            assert np.isnan(row.graphed_us)
        else:
            assert (row.graphed_us, row.low_us, row.high_us) == (
                est["graphed_us"],
                est["low_us"],
                est["high_us"],
            )
            assert (row.saving_us, row.saving_frac) == (est["saving_us"], est["saving_frac"])
            assert (row.eager_us, row.eager_source) == (est["eager_us"], est["eager_source"])
    # AND the kernels table starts with the report's top kernels
    top = report["summary"]["top_kernels"]
    kernels = analysis.kernels.head(len(top))
    assert list(kernels["name"]) == [k["name"] for k in top]
    assert list(kernels["count"]) == [k["count"] for k in top]
    assert list(kernels["total_us"]) == [k["total_ns"] / 1000 for k in top]
    # AND health is the report's
    assert analysis.health.to_dict("records") == report["health"]


@pytest.mark.parametrize("name", TRACES)
def test_gaps_add_up_to_the_reported_idle_time_by_cause(name: str, tmp_path: Path) -> None:
    trace = sample_file(name)
    report = json_report(trace, tmp_path)
    analysis = traceinspect.analyze(trace)
    gaps = analysis.gaps
    assert set(gaps["cause"]) <= set(CAUSES)
    assert (np.round(gaps["duration_us"] * 1000) == gaps["end_ns"] - gaps["start_ns"]).all()
    for diag, r in zip(analysis.region_results, report["regions"], strict=True):
        pid = r["process"]
        process = gaps["process"].isna() if pid is None else gaps["process"] == pid
        mine = gaps[(gaps["region"] == r["name"]) & (gaps["source"] == r["source"]) & process]
        # per occurrence and cause, summed; median over the occurrences with GPU work
        used = np.flatnonzero(diag.gaps.window_start_ns >= 0)
        per_occurrence = (
            mine.groupby(["occurrence", "cause"])["duration_us"]
            .sum()
            .unstack(fill_value=0.0)
            .reindex(index=used, columns=list(CAUSES), fill_value=0.0)
        )
        for cause in CAUSES:
            median = float(np.median(per_occurrence[cause])) if len(used) else 0.0
            assert median == pytest.approx(r["idle_us"][cause], abs=1e-3), (r["name"], cause)


def test_mixed_attention_gaps_are_mostly_host_launch() -> None:
    # GIVEN the launch-bound attention of the mixed sample (92 % of its window is launch gaps)
    analysis = traceinspect.analyze(sample_file("mixed.eager.json.gz"))
    gaps = analysis.gaps
    attention = gaps[gaps["region"] == "attention"]
    by_cause = attention.groupby("cause")["duration_us"].sum()
    # THEN host_launch holds nearly all of its idle time, over its 5 occurrences
    assert by_cause["host_launch"] / by_cause.sum() > 0.95
    assert sorted(attention["occurrence"].unique()) == [0, 1, 2, 3, 4]
    assert attention["next_activity"].str.len().gt(0).all()


def test_regions_of_a_multi_process_export_say_their_process() -> None:
    # GIVEN the two-process DDP (NCCL) Nsight export: train_step, forward, backward and
    # optimizer in each of pids 751 and 752
    analysis = traceinspect.analyze(sample_file("nsys/ddp_nccl.sqlite.gz"))
    regions = analysis.regions
    # THEN each name is one row per process, told apart by the process column
    per_name = regions.groupby("name")["process"].apply(sorted).to_dict()
    assert per_name == {n: [751, 752] for n in ("backward", "forward", "optimizer", "train_step")}
    # AND it is the typed result's process
    assert list(regions["process"]) == [r.region.process for r in analysis.region_results]
    backward = regions[regions["name"] == "backward"].set_index("process")
    # pid 752 waits in the all-reduce for 751, whose host sets the pace
    assert backward.loc[752, "verdict"] == "communication-bound"
    assert backward.loc[751, "verdict"] == "launch-bound"
    assert list(backward["kernels"]) == [65, 65]
    # AND each process's gaps carry it too
    gaps = analysis.gaps
    assert set(gaps["process"]) == {751, 752}
    # AND a one-process trace has no process
    single = traceinspect.analyze(sample_file("mixed.eager.json.gz"))
    assert single.regions["process"].isna().all()
    # AND the per-process table is a frame too, equal to the JSON's
    processes = analysis.processes.set_index("process")
    assert list(processes.index) == [751, 752]
    assert list(processes["devices"]) == ["0", "1"]
    assert processes.loc[751, "step_wall_us"] == 5_422.131
    assert processes.loc[752, "verdict"] == "communication-bound"
    rows = report_data(analysis)["processes"]["ranks"]
    assert list(processes["collective_share"]) == [r["collective_share"] for r in rows]
    assert list(processes["saving_frac"]) == [r["diagnosis"]["saving_frac"] for r in rows]
    assert single.processes.empty


def test_terminal_json_and_html_are_drawn_from_one_analysis(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    analysis = traceinspect.analyze(sample_file("mixed.eager.json.gz"))
    analysis_module = sys.modules["traceinspect.analysis.diagnose"]
    summary_module = sys.modules["traceinspect.analysis.summary"]
    html_module = sys.modules["traceinspect.report.html"]

    def no_analysis(*args: object, **kwargs: object) -> None:
        raise AssertionError("a renderer analyzed the trace again")

    # GIVEN no analysis can run while rendering
    monkeypatch.setattr(analysis_module, "diagnose", no_analysis)
    monkeypatch.setattr(summary_module, "summarize", no_analysis)
    monkeypatch.setattr(html_module, "summarize", no_analysis)
    # WHEN the three renderers draw the same object
    text = render_terminal(analysis, width=200)
    report = json.loads(render_json(analysis))
    page = render_html(analysis)
    data = json.loads(
        re.search(
            r'<script type="application/json" id="traceinspect-data">(.*?)</script>',
            page,
            re.DOTALL,
        ).group(1)  # type: ignore[union-attr]
    )
    # THEN they agree region by region: names, verdicts, graphed time and saving
    rows = data["regions"]["rows"]
    assert [row[0]["text"] for row in rows] == [r["name"] for r in report["regions"]]
    for region, row in zip(report["regions"], rows, strict=True):
        line = next(t for t in text.splitlines() if t.strip().startswith(region["name"] + " "))
        assert region["verdict"] in line
        est = region["estimate"]
        graphed = f"{est['graphed_us']:,.0f} µs"
        assert graphed in line
        assert f"{est['saving_frac']:.0%}" in line
        assert row[7]["text"] == region["verdict"]
        assert row[8]["text"] == f"{est['graphed_us']:,.1f}"
    # AND the page highlights each region's own occurrences (5 profiler steps)
    assert [len(spans) for spans in data["regions"]["spans"]] == [5, 5, 5, 5]
    assert report["regions"][0]["occurrences"] == 5


def test_load_gives_the_timeline_tables() -> None:
    timeline = traceinspect.load(sample_file("mixed.eager.json.gz"))
    assert len(timeline.kernels) == 365
    assert set(timeline.launches["kind"]) <= {"launch", "graph_launch", "memcpy", "memset"}
    assert len(timeline.launches) == (timeline.gpu["launch_row"] >= 0).sum()
    assert timeline.copies.empty  # the mixed step copies nothing
    assert timeline.annotations["name"].str.startswith("ProfilerStep#").sum() == 5
    assert timeline.kernels["start_ns"].dtype == np.int64
    # analyze accepts the loaded timeline as well as a path
    assert traceinspect.analyze(timeline).regions["name"].tolist() == [
        "ProfilerStep",
        "step",
        "attention",
        "mlp",
    ]


def test_measured_eager_time_changes_the_step_saving_only() -> None:
    timeline = traceinspect.load(sample_file("mixed.eager.json.gz"))
    traced = traceinspect.analyze(timeline).regions.set_index("name")
    measured = traceinspect.analyze(timeline, eager_us=2939.7).regions.set_index("name")
    step = measured.loc["ProfilerStep"]
    assert (step["eager_us"], step["eager_source"]) == (2939.7, "measured")
    assert traced.loc["ProfilerStep", "eager_source"] != "measured"
    assert measured.loc["attention", "eager_us"] == traced.loc["attention", "eager_us"]
    by_name = traceinspect.analyze(timeline, eager_us={"attention": 700.0}).regions
    assert by_name.set_index("name").loc["attention", "eager_us"] == 700.0


def test_import_is_light() -> None:
    # GIVEN a fresh interpreter, WHEN traceinspect is imported
    code = (
        "import sys, traceinspect; "
        "print(sorted(m for m in ('pandas', 'numpy', 'torch', 'rich', 'typer') "
        "if m in sys.modules)); print(sorted(traceinspect.__all__))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.splitlines()
    # THEN none of the heavy libraries came with it, and the API is exported
    assert out[0] == "[]"
    for name in ("analyze", "load", "TraceAnalysis", "region", "graph_candidate"):
        assert repr(name) in out[1]


def test_frames_are_built_once_and_typed_objects_stay_available() -> None:
    analysis = traceinspect.analyze(sample_file("host_sync.eager.json.gz"))
    assert analysis.regions is analysis.regions  # cached
    assert isinstance(analysis.gaps, pd.DataFrame)
    check = analysis.region("check")
    assert check.capture.verdict == "capturable after changes"
    assert analysis.step is not None and analysis.step.name == "ProfilerStep"
    with pytest.raises(KeyError):
        analysis.region("no such region")
