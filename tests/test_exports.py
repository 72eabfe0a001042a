"""``--csv DIR`` and ``--perfetto PATH`` through the CLI: same numbers as ``--json``, and a
Chrome trace that reads back."""

from __future__ import annotations

import csv
import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import sample_file
from typer.testing import CliRunner

from traceinspect.cli import app
from traceinspect.parse import load_trace
from traceinspect.report.perfetto import COUNTERS_PID, GAPS_PID, REGIONS_PID


def analyze(*args: str) -> Any:
    result = CliRunner().invoke(app, ["analyze", *args], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    return result


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def num(text: str) -> float | None:
    return None if text == "" else float(text)


def test_csv_has_the_numbers_of_the_json(tmp_path: Path) -> None:
    # GIVEN the host_sync H200 step, WHEN analyzed with --json and --csv
    out = tmp_path / "csv"
    report_path = tmp_path / "r.json"
    analyze(str(sample_file("host_sync.eager.json.gz")), "--json", str(report_path),
            "--csv", str(out))
    report = json.loads(report_path.read_text())
    # (processes.csv only its header: one process)
    assert sorted(p.name for p in out.iterdir()) == [
        "gaps.csv", "kernels.csv", "processes.csv", "regions.csv"
    ]
    assert (out / "processes.csv").read_text().startswith("process,devices,kernels,")
    assert read_csv(out / "processes.csv") == []
    # THEN regions.csv holds each region's JSON values
    regions = read_csv(out / "regions.csv")
    assert [r["name"] for r in regions] == [r["name"] for r in report["regions"]]
    for row, region in zip(regions, report["regions"], strict=True):
        assert row["verdict"] == region["verdict"]
        assert row["capture"] == region["capture"]["verdict"]
        assert num(row["wall_us"]) == region["wall_us"]
        assert num(row["window_us"]) == region["window_us"]
        assert num(row["idle_host_launch_us"]) == region["idle_us"]["host_launch"]
        est = region["estimate"]
        assert num(row["graphed_us"]) == (est and est["graphed_us"])
        assert num(row["saving_frac"]) == (est and est["saving_frac"])
        assert row["decision"] == region["decision"]["choice"]
    step = next(r for r in regions if r["name"] == "ProfilerStep")
    assert step["verdict"] == "launch-bound"
    assert step["decision"] == "enable after changes"
    # AND kernels.csv the summary's kernels, gaps.csv one row per gap adding up per cause
    kernels = read_csv(out / "kernels.csv")
    top = report["summary"]["top_kernels"]
    assert [k["name"] for k in kernels[: len(top)]] == [k["name"] for k in top]
    assert int(kernels[0]["count"]) == top[0]["count"]
    gaps = read_csv(out / "gaps.csv")
    assert set(gaps[0]) == {"start_us", "end_us", "duration_us", "device", "stream", "region",
                            "source", "process", "occurrence", "cause", "detail",
                            "next_activity"}
    assert {g["process"] for g in gaps} == {""}  # one process
    prepare = [g for g in gaps if g["region"] == "prepare"]
    assert {g["device"] for g in prepare} == {"0"}
    assert {g["cause"] for g in prepare} <= {"host_launch", "sync", "copy", "dependency",
                                              "other"}
    for g in prepare:  # exact to the ns: epoch µs as decimals, not floats
        assert Decimal(g["end_us"]) - Decimal(g["start_us"]) == Decimal(g["duration_us"])
    # the per-occurrence sums, medianed, are the JSON's idle_us of the region
    region = next(r for r in report["regions"] if r["name"] == "prepare")
    by_occ: dict[int, float] = {}
    for g in prepare:
        if g["cause"] == "host_launch":
            by_occ[int(g["occurrence"])] = by_occ.get(int(g["occurrence"]), 0.0) + float(
                g["duration_us"])
    values = sorted(by_occ.values())
    assert values[len(values) // 2] == pytest.approx(region["idle_us"]["host_launch"], abs=1e-3)


def test_csv_tells_the_processes_of_a_multi_process_export_apart(tmp_path: Path) -> None:
    # GIVEN the two-process DDP (NCCL) Nsight export, WHEN analyzed with --json and --csv
    out = tmp_path / "csv"
    report_path = tmp_path / "r.json"
    analyze(str(sample_file("nsys/ddp_nccl.sqlite.gz")), "--json", str(report_path),
            "--csv", str(out))
    report = json.loads(report_path.read_text())
    # THEN regions.csv gives each region the JSON's process
    regions = read_csv(out / "regions.csv")
    assert [(r["name"], int(r["process"])) for r in regions] == [
        (r["name"], r["process"]) for r in report["regions"]
    ]
    assert {r["process"] for r in regions} == {"751", "752"}
    # AND each gap the process of its region
    gaps = read_csv(out / "gaps.csv")
    assert {(g["region"], g["process"]) for g in gaps} <= {
        (r["name"], r["process"]) for r in regions
    }
    assert {g["process"] for g in gaps} == {"751", "752"}
    # AND processes.csv the per-process table, the JSON's numbers
    processes = read_csv(out / "processes.csv")
    rows = report["processes"]["ranks"]
    assert [int(p["process"]) for p in processes] == [r["process"] for r in rows] == [751, 752]
    assert [float(p["collective_share"]) for p in processes] == [
        r["collective_share"] for r in rows
    ]
    assert [p["verdict"] for p in processes] == ["launch-bound", "communication-bound"]
    assert [p["step_wall_us"] for p in processes] == ["5422.131", "3631.072"]
    # AND a one-process trace written over them (--force) leaves no process of the export
    analyze(str(sample_file("tiny_mlp.eager.json.gz")), "--csv", str(out), "--force")
    assert read_csv(out / "processes.csv") == []
    assert {r["process"] for r in read_csv(out / "regions.csv")} == {""}


def test_csv_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "csv"
    trace = str(sample_file("tiny_mlp.eager.json.gz"))
    analyze(trace, "--csv", str(out))
    again = CliRunner().invoke(app, ["analyze", trace, "--csv", str(out)])
    assert again.exit_code != 0
    analyze(trace, "--csv", str(out), "--force")


def test_perfetto_holds_the_trace_and_the_diagnosis(tmp_path: Path) -> None:
    # GIVEN the mixed H200 step; WHEN exported for Perfetto
    trace = sample_file("mixed.eager.json.gz")
    out = tmp_path / "mixed.perfetto.json"
    analyze(str(trace), "--perfetto", str(out))
    doc = json.loads(out.read_text())
    original = json.loads(gzip.decompress(trace.read_bytes()))
    events = doc["traceEvents"]
    # THEN the input's events are all there, unchanged, in order
    assert events[: len(original["traceEvents"])] == original["traceEvents"]
    assert doc["deviceProperties"] == original["deviceProperties"]
    ours = events[len(original["traceEvents"]):]
    # AND every event we add is well-formed Chrome trace JSON: a phase Perfetto reads,
    # integer pid/tid, µs ts and (for slices) a non-negative dur
    for e in ours:
        assert e["ph"] in ("X", "C", "M")
        assert isinstance(e["pid"], int)
        assert isinstance(e.get("tid", 0), int)
        if e["ph"] != "M":
            assert isinstance(e["ts"], float) and e["ts"] > 0
        if e["ph"] == "X":
            assert isinstance(e["dur"], float) and e["dur"] >= 0
            assert isinstance(e["name"], str) and isinstance(e["args"], dict)
    # AND regions are slices carrying verdict and saving, on their own process
    regions = [e for e in ours if e["pid"] == REGIONS_PID and e["ph"] == "X"]
    attention = [e for e in regions if e["name"] == "attention"]
    assert len(attention) == 5
    assert attention[0]["args"]["verdict"] == "launch-bound"
    assert 0.6 < attention[0]["args"]["saving_frac"] < 0.95
    assert attention[0]["args"]["decision"] == "enable"
    # AND idle gaps are slices named by cause, GPU busy a counter
    gaps = [e for e in ours if e["pid"] == GAPS_PID and e["ph"] == "X"]
    assert {e["name"] for e in gaps} <= {"host_launch", "sync", "copy", "dependency", "other"}
    assert "host_launch" in {e["name"] for e in gaps}
    counters = [e for e in ours if e["pid"] == COUNTERS_PID and e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"GPU 0 busy %"}
    assert all(0 <= e["args"]["busy %"] <= 100 for e in counters)
    names = {e["args"]["name"] for e in ours if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {"traceinspect · regions", "traceinspect · idle GPU (by cause)",
                     "traceinspect · GPU busy"}
    # AND our slices sit on the trace's clock: the first attention slice starts where the
    # trace's own attention range does
    first_range = min(
        (e for e in original["traceEvents"] if e.get("name") == "attention"),
        key=lambda e: float(e["ts"]),
    )
    assert float(attention[0]["ts"]) == pytest.approx(float(first_range["ts"]), abs=0.001)


def test_perfetto_file_reads_back_through_our_kineto_reader(tmp_path: Path) -> None:
    trace = sample_file("host_sync.eager.json.gz")
    out = tmp_path / "p.json"
    analyze(str(trace), "--perfetto", str(out))
    back, original = load_trace(out), load_trace(trace)
    # the same GPU activities and API calls (our slices are neither)
    assert len(back.gpu) == len(original.gpu)
    assert (back.gpu["start_ns"].to_numpy() == original.gpu["start_ns"].to_numpy()).all()
    assert len(back.host) == len(original.host)


def test_perfetto_from_an_nsys_export_synthesizes_the_events(tmp_path: Path) -> None:
    out = tmp_path / "n.json"
    analyze(str(sample_file("nsys/mixed.eager.sqlite.gz")), "--perfetto", str(out))
    doc = json.loads(out.read_text())
    kinds = {e.get("cat") for e in doc["traceEvents"]}
    assert {"kernel", "cuda_runtime", "user_annotation", "traceinspect.region",
            "traceinspect.idle"} <= kinds
    back, original = load_trace(out), load_trace(sample_file("nsys/mixed.eager.sqlite.gz"))
    assert len(back.gpu) == len(original.gpu)
    assert len(back.annotations) > 0
