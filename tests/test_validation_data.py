"""The H200 validation set recorded through `traceinspect profile` (sample_traces/validation/)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "sample_traces" / "validation"
ANNOTATED = sorted(p.stem for p in (ROOT / "workloads").glob("[a-z]*.py"))
UNANNOTATED = sorted(p.stem for p in (ROOT / "unannotated").glob("[a-z]*.py"))


def _rows(path: Path) -> dict[str, dict]:
    data = json.loads(path.read_text())
    assert data["options"]["repeats"] == 5
    return {r["mode"]: r for r in data["rows"]}


def test_the_set_has_the_families_and_sizes() -> None:
    assert len(ANNOTATED) == 17 and len(UNANNOTATED) == 6
    # 160 MB: every hold-out set adds 0.2-5.2 MB of gzipped traces and logs (120.1 MB with
    # holdout49's two H100 recordings, 128.4 MB with holdout50's, 133.0 MB with
    # holdout51's, 142.9 MB with holdout52's and holdout53's, 151.3 MB with holdout54's and
    # holdout55's, 158.5 MB with holdout56's, 162.8 MB with holdout57's, 174.3 MB with
    # holdout58's two, 181.8 MB with holdout59's, 188.6 MB with holdout60's two, 192.8 MB
    # with holdout57's rerun, 199.4 MB with holdout61's two, 201.8 MB with holdout62's, 209.3
    # MB with holdout63's two and holdout62's PANNs on an H200, 219.6 MB with holdout64's two
    # and holdout63's NASNet rerun, 229.3 MB with holdout66's H100 recording and its
    # partial rerun (234.5 counted then with the workloads' __pycache__, left out since),
    # 231.7 MB with that rerun completed: 260 MB since, for the H200 recordings owed. Nothing
    # recorded can shrink without changing what it predicts: the traces are already compact
    # JSON (gzip -9 gains 0.0 %), and each eager trace holds the five profiled steps its
    # estimate reads). A device run carries at most 64 MiB: the recorded sets are moved out
    # of the tree for it (README.md, "Re-recording")
    files = [f for f in ROOT.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert sum(f.stat().st_size for f in files) <= 260_000_000
    assert not list(ROOT.rglob("*.log")), "run logs are kept gzipped (record.sh)"
    for trace in ROOT.rglob("*.json.gz"):
        assert trace.stat().st_size <= 1_500_000, trace


@pytest.mark.parametrize("name", ANNOTATED)
def test_each_workload_was_measured_in_five_rounds(name: str) -> None:
    rows = _rows(ROOT / name / "results.json")
    for mode in ("eager", "graphed"):
        row = rows[mode]
        assert row["status"] == "ok"
        assert row["rounds"] == 5 and row["iterations"] == 250
        assert row["round_host_p50_min_ns"] <= row["host_p50_ns"] <= row["round_host_p50_max_ns"]
        assert (ROOT / name / row["trace"]).is_file()
    assert rows["graphed"]["correct"] in (True, None)


def test_recorded_values() -> None:
    # Values as recorded on the H200 (README table): a launch-bound and a compute-bound step.
    mlp = _rows(ROOT / "mlp_narrow_fp32" / "results.json")
    assert mlp["eager"]["host_p50_ns"] == 3_626_972
    assert mlp["graphed"]["host_p50_ns"] == 914_581
    assert mlp["eager"]["round_host_p50_ns"][0] == 2_603_988  # round 1, before the drift
    conv = _rows(ROOT / "unannotated" / "conv_loop" / "mark.results.json")
    assert 1 - conv["graphed"]["host_p50_ns"] / conv["eager"]["host_p50_ns"] < 0.05


@pytest.mark.parametrize("name", UNANNOTATED)
def test_unannotated_runs_have_no_annotations(name: str) -> None:
    folder = ROOT / "unannotated" / name
    with gzip.open(folder / "trace.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    names = {e.get("name") for e in events if e.get("cat") == "user_annotation"}
    assert not any(str(n).startswith(("step", "ProfilerStep")) for n in names)
    assert sum(e.get("cat") == "kernel" for e in events) > 100
    with gzip.open(folder / "trace.stacks.json.gz", "rt") as f:
        stacked = json.load(f)["traceEvents"]
    assert any(e.get("cat") == "python_function" for e in stacked)
    assert _rows(folder / "mark.results.json")["graphed"]["status"] == "ok"
