"""`traceinspect profile --nsys` on CPU, with a stand-in `nsys` (tests/fixtures/fake_nsys) that
runs the target as nsys would and exports a real H200 Nsight Systems export
(sample_traces/nsys/mixed.eager: NVTX `warmup`, then 5 × `step` > `attention`/`mlp`).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import sample_file
from rich.console import Console

from traceinspect.cli import main
from traceinspect.errors import UsageError
from traceinspect.parse import load_trace

pytest.importorskip("torch")

from traceinspect.commands.profile import run_profile  # noqa: E402
from traceinspect.commands.profile_nsys import SCRIPT_SECTION, analyze_section  # noqa: E402

FAKE = Path(__file__).parent / "fixtures" / "fake_nsys"
SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"
MAIN_TID = 281489556112229  # the only thread of the mixed export
SECOND_STEP = 3_590_795_047  # start of its second `step`; the last API call ends 3,604,120,704


def export_with_section(tmp_path: Path) -> Path:
    """The mixed export with the script's section from the second step to the end."""
    plain = tmp_path / "export.sqlite"
    with gzip.open(sample_file("nsys/mixed.eager.sqlite.gz")) as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with sqlite3.connect(plain) as conn:
        conn.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
            f"VALUES ({SECOND_STEP - 1000}, 3604200000, 59, '{SCRIPT_SECTION}', {MAIN_TID}, 0)"
        )
    return plain


@pytest.fixture
def fake_nsys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH with the stand-in nsys first; returns the log of its invocations."""
    log = tmp_path / "nsys.log"
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_NSYS_LOG", str(log))
    monkeypatch.setenv("FAKE_NSYS_EXPORT", str(export_with_section(tmp_path)))
    for name in ("NSYS_PROFILING_SESSION_ID", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"):
        monkeypatch.delenv(name, raising=False)
    return log


def results_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


@pytest.mark.slow
def test_profile_nsys_records_exports_and_analyzes_the_scripts_section(
    tmp_path: Path, fake_nsys: Path
) -> None:
    # GIVEN a script with regions and a graph candidate that exits 3
    seen, out = tmp_path / "seen.json", tmp_path / "out"
    console = Console(record=True, width=200)
    # WHEN it is profiled with --nsys
    status = run_profile(
        SCRIPTS / "nsys_regions.py", [str(seen), "3"], out=out, nsys=True, console=console
    )
    # THEN the exit status is the script's, and it ran under nsys with an NVTX tool listening
    assert status == 3
    assert json.loads(seen.read_text()) == {"nvtx_tool": True, "argv": [str(seen), "3"]}
    calls = [json.loads(line) for line in fake_nsys.read_text().splitlines()]
    assert [c[0] for c in calls] == ["profile", "export"]
    profile = calls[0]
    assert profile[1:6] == [
        "--trace=cuda,nvtx",
        "--sample=none",
        "--cpuctxsw=none",
        "--cuda-graph-trace=node",
        "--force-overwrite=true",
    ]
    assert profile[6] == f"--output={out / 'report'}"
    assert profile[8:11] == ["-m", "traceinspect.commands.profile_nsys", "--child"]
    assert profile[-3:] == [str(SCRIPTS / "nsys_regions.py"), str(seen), "3"]
    assert calls[1][1:] == [
        "--type=sqlite",
        "--force-overwrite=true",
        f"--output={out / 'report.sqlite'}",
        str(out / "report.nsys-rep"),
    ]
    # AND everything lands in the output folder
    assert sorted(p.name for p in out.iterdir()) == [
        "analysis.json",
        "report.nsys-rep",
        "report.sqlite",
        "results.json",
    ]
    results = results_of(out)
    assert results["script"]["exit_status"] == 3
    assert (results["report"], results["trace"], results["analysis"]) == (
        "report.nsys-rep",
        "report.sqlite",
        "analysis.json",
    )
    assert results["collector"]["tool"] == "Nsight Systems"
    assert results["options"]["nvtx_sections"] is True
    # the candidate is listed, not measured, on a machine without CUDA
    assert [(r["callable"], r["bucket"], r["mode"], r["status"]) for r in results["rows"]] == [
        ("layer", 2, "eager", "cuda_unavailable"),
        ("layer", 2, "graphed", "cuda_unavailable"),
    ]
    # AND the analysis reads the script's section only: 4 of the export's 5 steps, no warmup
    analysis = json.loads((out / "analysis.json").read_text())
    regions = {r["name"]: r for r in analysis["regions"]}
    assert set(regions) == {"step", "attention", "mlp"}
    assert regions["step"]["occurrences"] == 4
    assert regions["step"]["depth"] == 0  # the section itself is not a region
    assert regions["attention"]["verdict"] == "launch-bound"
    assert regions["mlp"]["verdict"] == "compute-bound"
    assert "launch-bound" in console.export_text()


@pytest.mark.slow
def test_a_raw_qdstrm_is_imported_into_the_report(
    tmp_path: Path, fake_nsys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NSYS_QDSTRM", "1")
    seen, out = tmp_path / "seen.json", tmp_path / "out"
    assert run_profile(SCRIPTS / "nsys_regions.py", [str(seen), "0"], out=out, nsys=True) == 0
    assert (out / "report.nsys-rep").read_text() == "imported\n"
    assert not (out / "report.qdstrm").exists()
    assert results_of(out)["collector"]["imported_qdstrm"] is True


def test_missing_nsys_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = tmp_path / "out"
    with pytest.raises(UsageError, match="nsys \\(Nsight Systems\\) is not on PATH"):
        run_profile(SCRIPTS / "nsys_regions.py", [], out=out, nsys=True)
    assert not out.exists()
    status = main(["profile", "--nsys", "-o", str(out), str(SCRIPTS / "nsys_regions.py")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "--nsys-path" in err
    status = main(["profile", "--nsys-path", str(tmp_path), str(SCRIPTS / "nsys_regions.py")])
    assert status == 2
    assert "not an executable nsys" in capsys.readouterr().err


def test_analyze_section_without_a_section_reads_the_whole_report(tmp_path: Path) -> None:
    # A report recorded by hand (`nsys profile python script.py`) has no section: all of it
    # is the script's, and its regions are the same.
    timeline = load_trace(sample_file("nsys/mixed.eager.sqlite.gz"))
    report = analyze_section(timeline, tmp_path / "a.json", Console(file=open(os.devnull, "w")))
    regions = {r["name"]: r["occurrences"] for r in report["regions"]}
    # 3 attention/mlp pairs in the warmup, one in each of the 5 steps
    assert regions == {"warmup": 1, "step": 5, "attention": 8, "mlp": 8}


# --------------------------------------------------------------------------- H200 recordings
# examples/tiny_mlp.py --steps 30 on an H200 (sample_traces/nsys/validate_gpu.sh): once with
# `traceinspect profile --nsys --iters 30` (report trimmed to the script's section and bucket
# 1's two sections; its results.json beside it), once with `nsys profile python` by hand.


def test_h200_profile_nsys_and_a_run_by_hand_give_the_same_regions(tmp_path: Path) -> None:
    devnull = Console(file=open(os.devnull, "w"))  # noqa: SIM115 - closed with the process
    collected = analyze_section(
        load_trace(sample_file("nsys/tiny_mlp.profile_nsys.sqlite.gz")), tmp_path / "a", devnull
    )
    by_hand = analyze_section(
        load_trace(sample_file("nsys/tiny_mlp.by_hand.sqlite.gz")), tmp_path / "b", devnull
    )
    for report in (collected, by_hand):
        assert [
            (r["name"], r["source"], r["verdict"], r["occurrences"], r["kernels"])
            for r in report["regions"]
        ] == [("decode", "nvtx", "launch-bound", 30, 49)]
    # the candidates' sections are left out of the script's analysis: 1,471 kernels in it
    assert collected["regions"][0]["wall_us"] == 1314.184
    assert collected["regions"][0]["estimate"]["graphed_us"] == pytest.approx(129.4, abs=0.1)
    # and the two recordings of the same script predict the same replay
    assert by_hand["regions"][0]["estimate"]["graphed_us"] == pytest.approx(129.3, abs=0.1)


def test_h200_prediction_comes_from_the_buckets_eager_section() -> None:
    from traceinspect.commands.profile_nsys import _add_predictions

    results = json.loads(sample_file("nsys/tiny_mlp.profile_nsys.results.json").read_text())
    rows = [r for r in results["rows"] if r["bucket"] == 1]
    assert [(r["mode"], r["trace"], r["host_p50_ns"]) for r in rows] == [
        ("eager", "traceinspect:mlp.b1.eager", 1_292_097),
        ("graphed", "traceinspect:mlp.b1.graphed", 175_629),
    ]
    # as the run itself predicted, with the calibration of its day (replays timed after a
    # profiler session, 0.43 µs per tiny node)
    assert rows[1]["predicted_ns"] == 137_178
    for row in rows:
        row["predicted_ns"] = row["prediction_error"] = None
    timeline = load_trace(sample_file("nsys/tiny_mlp.profile_nsys.sqlite.gz"))
    _add_predictions(rows, timeline, Console(file=open(os.devnull, "w")))  # noqa: SIM115
    assert rows[0]["predicted_ns"] is None
    # predicted again from the bucket's eager section with the built-in calibration, whose
    # replays were timed before any profiler session: 127.0 µs (123.0 with the copy at 5.8
    # µs of host), 27.7 % under the graphed step timed inside the nsys
    # session, whose CUDA tracing stays on for the whole process and adds about 10 % to
    # the replay (README; the run predicted 21.9 % under it)
    assert rows[1]["predicted_ns"] == 127_040
    assert rows[1]["prediction_error"] == pytest.approx(127_040 / 175_629 - 1)
