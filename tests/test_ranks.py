"""``traceinspect analyze DIR``: per-rank rows from real traces, stragglers, broken files."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, corpus_file
from rich.console import Console

from traceinspect.analysis.diagnose import diagnose
from traceinspect.commands.ranks import analyze_one, run_analyze_dir, trace_files, worker_count
from traceinspect.errors import TraceFormatError, UsageError
from traceinspect.parse import load_trace
from traceinspect.report.html import page_data
from traceinspect.report.json_report import report_data
from traceinspect.report.ranks import STRAGGLER_STEP_RATIO, processes_report, ranks_report
from traceinspect.report.terminal import render_terminal

# Rank 3 of an 8-rank A100 job: 8,568 kernels on device 3, 6 ProfilerSteps of 76.83 ms median.
CONTROL = "HolisticTraceAnalysis__trace_diff__control.json.gz"
# Rank 0 of a 2-rank A100 NCCL job: 2,700 kernels, 3 steps of 222.44 ms median.
NCCL = "HolisticTraceAnalysis__nccl_data.json.gz"
# Tiny traces without distributedInfo: ROCm MI250 (14 kernels, one step of 9.29 ms and an
# empty second that the profiler stopped in) and a Triton kernel.
MI250 = "HolisticTraceAnalysis__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
TRITON = "HolisticTraceAnalysis__triton_example.json.gz"


def _truncated_gzip(source: Path, target: Path) -> None:
    target.write_bytes(gzip.compress(gzip.decompress(source.read_bytes())[:5000]))


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rank 3, the NCCL rank 0 (3x slower steps), the MI250 trace named as a second rank 3
    (it has no distributedInfo), a broken trace and a README."""
    folder = tmp_path_factory.mktemp("job")
    shutil.copy(corpus_file(CONTROL), folder / "control.json.gz")
    shutil.copy(corpus_file(NCCL), folder / "nccl.json.gz")
    shutil.copy(corpus_file(MI250), folder / "rank3.json.gz")
    _truncated_gzip(corpus_file(CONTROL), folder / "rank9.json.gz")
    (folder / "README.txt").write_text("not a trace")
    return folder


@pytest.fixture(scope="module")
def report(job: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("out") / "ranks.json"
    console = Console(file=open(out.with_suffix(".txt"), "w"), width=150)  # noqa: SIM115
    run_analyze_dir(job, json_out=str(out), workers=2, console=console)
    console.file.close()
    data: dict[str, Any] = json.loads(out.read_text())
    data["_text"] = out.with_suffix(".txt").read_text()
    return data


@pytest.mark.corpus
def test_rows_hold_each_ranks_real_numbers(report: dict[str, Any]) -> None:
    assert report["schema_version"] == 1
    ranks = report["ranks"]
    # Sorted by rank, then file: the NCCL trace's rank 0, then the two rank 3s.
    assert [(r["rank"], r["rank_source"], r["file"]) for r in ranks] == [
        (0, "distributedInfo", "nccl.json.gz"),
        (3, "distributedInfo", "control.json.gz"),
        (3, "file name", "rank3.json.gz"),
    ]
    nccl, control = ranks[0], ranks[1]
    assert nccl["rank_source"] == "distributedInfo"
    assert nccl["world_size"] == 2
    assert nccl["kernels"] == 2700
    assert nccl["steps"] == 3
    assert nccl["step_wall_median_ns"] == 222_442_191
    assert nccl["devices"] == [{"id": 0, "name": "NVIDIA A100-PG509-200"}]
    assert nccl["gpu_busy_share"] == pytest.approx(0.2384, abs=1e-4)
    assert control["kernels"] == 8568
    assert control["devices"][0]["id"] == 3
    assert control["steps"] == 6
    assert control["step_wall_median_ns"] == 76_833_500
    assert control["gpu_busy_share"] == pytest.approx(0.836, abs=1e-3)
    # NCCL kernels: 42.1 % of rank 3's busy GPU time.
    assert control["collective_share"] == pytest.approx(0.421, abs=1e-3)
    assert ranks[2]["kernels"] == 14
    # one step: the 49 µs ProfilerStep the profiler stopped in is not a step (it halved the
    # median to 4.67 ms)
    assert (ranks[2]["steps"], ranks[2]["step_wall_median_ns"]) == (1, 9_288_291)


@pytest.mark.corpus
def test_rows_carry_the_step_diagnosis(report: dict[str, Any]) -> None:
    nccl, control = report["ranks"][0]["diagnosis"], report["ranks"][1]["diagnosis"]
    for diagnosis, steps in ((nccl, 3), (control, 6)):
        assert diagnosis["region"] == "ProfilerStep"
        assert diagnosis["occurrences"] == steps
        idle = diagnosis["idle_by_cause_ns"]
        assert set(idle) == {"host_launch", "sync", "copy", "dependency", "other"}
        assert diagnosis["launch_wait_share"] == idle["host_launch"] / diagnosis["window_ns"]
        # Both steps wait on host launches more than on anything else.
        assert max(idle, key=idle.get) == "host_launch"
    # Rank 0 (NCCL job): a 215.8 ms GPU window per step, more than half of it waiting on
    # launches; rank 3: a 76.3 ms window, launch gaps about an eighth of it.
    assert nccl["window_ns"] == pytest.approx(215_769_424, rel=0.01)
    assert nccl["launch_wait_share"] > 0.5
    assert control["window_ns"] == pytest.approx(76_324_000, rel=0.01)
    assert 0.05 < control["launch_wait_share"] < 0.25
    assert "launch 8" in report["_text"]  # rank 3's top idle cause: "launch 80%"


@pytest.mark.corpus
def test_slow_rank_is_flagged_against_the_median_step(report: dict[str, Any]) -> None:
    # Median of (222.44, 76.83, 4.67) ms is 76.83 ms; rank 0 is 2.9x that.
    assert report["step_wall_median_ns"] == 76_833_500
    assert report["straggler_step_ratio"] == STRAGGLER_STEP_RATIO
    assert report["stragglers"] == [0]
    assert report["ranks"][0]["step_vs_median"] == pytest.approx(222_442_191 / 76_833_500)
    assert [r["straggler"] for r in report["ranks"]] == [True, False, False]
    assert "2.90*" in report["_text"]  # the ×median cell marks the straggler


@pytest.mark.corpus
def test_broken_file_is_listed_and_others_still_analyzed(report: dict[str, Any]) -> None:
    assert report["failed"] == [{"file": "rank9.json.gz", "error": report["failed"][0]["error"]}]
    assert "truncated" in report["failed"][0]["error"]
    assert "\n" not in report["failed"][0]["error"]
    assert report["ignored_files"] == 1  # README.txt
    assert "rank 3 appears in 2 files" in report["notes"]
    assert "world sizes differ (2, 8): traces from different jobs?" in report["notes"]
    assert "failed: rank9.json.gz" in report["_text"]


@pytest.mark.corpus
def test_worker_rows_equal_in_process_rows(job: Path, report: dict[str, Any]) -> None:
    row = analyze_one(str(job / "nccl.json.gz"))["row"]
    pooled = {k: v for k, v in report["ranks"][0].items() if k in row}
    assert pooled == row


@pytest.mark.corpus
def test_rank_falls_back_to_the_file_name(tmp_path: Path) -> None:
    shutil.copy(corpus_file(MI250), tmp_path / "rank-5.pt.trace.json.gz")
    shutil.copy(corpus_file(TRITON), tmp_path / "triton.json.gz")
    out = tmp_path / "out.json"
    run_analyze_dir(tmp_path, json_out=str(out), workers=1, console=Console(file=None, quiet=True))
    ranks = json.loads(out.read_text())["ranks"]
    assert [(r["rank"], r["rank_source"], r["kernels"]) for r in ranks] == [
        (5, "file name", 14),
        (None, "", 1),
    ]
    # One ROCm step of 9.29 ms (its empty second, 49 µs, left out); one Triton step of 1.67
    # ms (written as 13.34 s: it was still open when recording stopped, and is cut there).
    # With two ranks the median is their mean (5.48 ms), and the ROCm rank at 1.69x of it is
    # flagged.
    assert [(r["steps"], r["step_wall_median_ns"]) for r in ranks] == [
        (1, 9_288_291),
        (1, 1_673_183),
    ]
    assert [r["straggler"] for r in ranks] == [True, False]


@pytest.mark.corpus
def test_cli_on_a_folder_writes_json_to_stdout(tmp_path: Path) -> None:
    shutil.copy(corpus_file(MI250), tmp_path / "rank0.json.gz")
    shutil.copy(corpus_file(TRITON), tmp_path / "rank1.json.gz")
    (tmp_path / "rank2.json").write_text('{"traceEvents": [')
    proc = subprocess.run(
        [sys.executable, "-m", "traceinspect", "analyze", str(tmp_path), "--json", "-"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [r["rank"] for r in data["ranks"]] == [0, 1]
    assert [f["file"] for f in data["failed"]] == ["rank2.json"]
    assert "2 rank traces analyzed, 1 failed" in proc.stderr


def test_folder_without_readable_traces_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="no trace files"):
        run_analyze_dir(tmp_path, console=Console(quiet=True))
    (tmp_path / "rank0.json").write_text("{")
    (tmp_path / "rank1.json").write_text("")
    with pytest.raises(TraceFormatError, match="none of the 2 trace files could be read"):
        run_analyze_dir(tmp_path, workers=1, console=Console(quiet=True))
    proc = subprocess.run(
        [sys.executable, "-m", "traceinspect", "analyze", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("traceinspect: ")
    assert "Traceback" not in proc.stderr


def test_html_of_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--html draws one trace"):
        run_analyze_dir(tmp_path, html_out=tmp_path / "x.html", console=Console(quiet=True))


def test_trace_files_picks_trace_suffixes_only(tmp_path: Path) -> None:
    for name in ("b.json", "a.json.gz", "c.sqlite", "d.nsys-rep", "notes.txt", ".hidden.json"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub.json").mkdir()
    files, ignored = trace_files(tmp_path)
    assert [p.name for p in files] == ["a.json.gz", "b.json", "c.sqlite", "d.nsys-rep"]
    assert ignored == 2  # notes.txt and the sub.json folder


def test_workers_bounded_by_cores_files_and_memory(tmp_path: Path) -> None:
    files = []
    for i in range(3):
        path = tmp_path / f"rank{i}.json"
        path.write_bytes(b" " * 1000)
        files.append(path)
    assert worker_count(files, cpus=2, available_bytes=10**9) == 2
    assert worker_count(files[:1], cpus=8, available_bytes=10**9) == 1
    # 1,000-byte traces need 2,000 bytes each: 3,000 bytes of memory hold one worker.
    assert worker_count(files, cpus=8, available_bytes=3000) == 1
    assert worker_count(files, cpus=8, available_bytes=6000) == 3


def test_straggler_rule_on_given_rows() -> None:
    def row(rank: int, wall: int | None) -> dict[str, Any]:
        return {"file": f"r{rank}", "rank": rank, "world_size": 4, "step_wall_median_ns": wall}

    # Median of (100, 110, 125, 119) ms = 114.5 ms; 1.2x = 137.4 ms: nobody is a straggler.
    data = ranks_report([row(0, 100), row(1, 110), row(2, 125), row(3, 119)], [], folder="f")
    assert data["stragglers"] == []
    # Rank 2 at 140 ms against a median of 114.5 ms: 1.22x, flagged.
    data = ranks_report([row(0, 100), row(1, 110), row(2, 140), row(3, 119)], [], folder="f")
    assert data["stragglers"] == [2]
    assert data["notes"] == []
    # A missing rank of the world is noted.
    data = ranks_report([row(0, 100), row(1, None)], [], folder="f")
    assert data["stragglers"] == []
    assert data["notes"] == ["2 of 4 ranks present"]


@pytest.mark.corpus
def test_cross_rank_view_of_the_real_ranks(report: dict[str, Any]) -> None:
    view = report["cross_rank"]
    # Three ranks with a step diagnosis; their verdicts are counted, whatever they are.
    assert view["ranks_with_diagnosis"] == 3
    assert sum(view["verdicts"].values()) == 3
    verdicts = [r["diagnosis"]["verdict"] for r in report["ranks"]]
    assert view["verdicts"] == {v: verdicts.count(v) for v in set(verdicts)}
    shares = sorted(r["diagnosis"]["launch_wait_share"] for r in report["ranks"])
    assert view["launch_wait_share"]["median"] == shares[1]
    assert view["launch_wait_share"]["max"] == shares[2]
    # The median rank (of 3) is rank 3 of the control job: its per-step components.
    control = report["ranks"][1]
    typical = view["median_rank_step_ns"]
    assert typical["launch_gap_ns"] == control["diagnosis"]["idle_by_cause_ns"]["host_launch"]
    # Only the NCCL rank is slower than the median rank: 2.9x, from launch gaps (its step
    # waits on host launches for more than half of a 216 ms window; rank 3's for 12 %).
    (slow,) = view["slowest"]
    assert (slow["rank"], slow["file"]) == (0, "nccl.json.gz")
    assert slow["why"][0] == "launch_gap_ns"
    nccl_launch = report["ranks"][0]["diagnosis"]["idle_by_cause_ns"]["host_launch"]
    assert slow["excess_ns"]["launch_gap_ns"] == nccl_launch - typical["launch_gap_ns"]
    assert slow["excess_ns"]["launch_gap_ns"] > 100_000_000
    # Each rank carries the replay estimate's saving for its step; the view spreads them.
    by_file = {r["file"]: r["diagnosis"]["saving_frac"] for r in report["ranks"]}
    assert by_file["rank3.json.gz"] is None  # the MI250 trace: no calibrated estimate
    savings = [by_file["nccl.json.gz"], by_file["control.json.gz"]]
    assert view["saving_frac"]["min"] == min(savings)
    assert view["saving_frac"]["max"] == max(savings)
    # The launch-bound-ish NCCL rank would gain most (about half of its step: 0.63 before its
    # host, whose launch calls took a median 9.7 µs, was brought to a typical process's
    # pace), the compute-heavy rank 3 almost nothing.
    assert by_file["nccl.json.gz"] == pytest.approx(0.48, abs=0.1)
    assert by_file["control.json.gz"] < 0.1
    assert "replay would save" in report["_text"].replace("\n", " ")
    assert "rank 0: step 222.44 ms (2.90× median) — more than the median rank in launch gaps" in (
        report["_text"].replace("\n", " ")
    )


def test_cross_rank_names_what_makes_a_rank_slow() -> None:
    # GIVEN four ranks of 10 steps: three alike, one whose steps wait 6 ms more on syncs and
    # spend 2 ms more in collectives
    def row(rank: int, wall_ms: float, sync_ms: float, collective_ms: float) -> dict[str, Any]:
        idle = {"host_launch": 3_000_000, "sync": int(sync_ms * 1e6), "copy": 0,
                "dependency": 0, "other": 0}  # fmt: skip
        return {
            "file": f"rank{rank}.json", "rank": rank, "world_size": 4,
            "step_wall_median_ns": int(wall_ms * 1e6), "steps": 10,
            "gpu_busy_ns": int(10 * (20 + collective_ms) * 1e6),
            "collective_kernel_ns": int(10 * collective_ms * 1e6),
            "diagnosis": {"verdict": "launch-bound" if rank != 2 else "sync-bound",
                          "launch_wait_share": 0.1 * (rank + 1), "idle_by_cause_ns": idle},
        }  # fmt: skip

    rows = [row(0, 30, 1, 4), row(1, 30, 1, 4), row(2, 38, 7, 6), row(3, 30.5, 1, 4)]
    data = ranks_report(rows, [], folder="job")
    view = data["cross_rank"]
    # THEN the verdicts are counted, the shares spread, and rank 2 is explained by syncs
    # first (+6 ms per step), then collectives (+2 ms); rank 3 (+0.5 ms) by nothing
    assert view["verdicts"] == {"launch-bound": 3, "sync-bound": 1}
    assert view["launch_wait_share"]["min"] == pytest.approx(0.1)
    assert view["launch_wait_share"]["max"] == pytest.approx(0.4)
    assert view["saving_frac"] is None
    assert [s["rank"] for s in view["slowest"]] == [2, 3]
    assert view["slowest"][0]["why"] == ["sync_ns", "collective_ns"]
    assert view["slowest"][0]["excess_ns"]["sync_ns"] == pytest.approx(6e6)
    assert view["slowest"][0]["excess_ns"]["collective_ns"] == pytest.approx(2e6)
    assert view["slowest"][1]["why"] == []


@pytest.mark.corpus
def test_progress_counts_ranks_as_they_finish(tmp_path: Path) -> None:
    from traceinspect.commands.ranks import analyze_files

    shutil.copy(corpus_file(MI250), tmp_path / "rank-0.json.gz")
    shutil.copy(corpus_file(TRITON), tmp_path / "rank-1.json.gz")
    (tmp_path / "rank-2.json.gz").write_bytes(b"\x1f\x8b not really gzip")
    files, _ = trace_files(tmp_path)
    calls: list[tuple[int, int, int]] = []
    results = analyze_files(files, workers=2, progress=lambda *c: calls.append(c))
    # One call per finished rank, counting up; the broken rank counts as failed.
    assert [c[:2] for c in calls] == [(1, 3), (2, 3), (3, 3)]
    assert calls[-1][2] == 1
    assert [("row" in r) for r in results] == [True, True, False]


def test_one_trace_of_two_processes_gets_the_per_process_table() -> None:
    """The bundled Nsight Systems export of a two-process DDP step (NCCL, one H200 each,
    12 ``train_step`` ranges a process): each process gets the row a rank's own trace
    would. Process 751's host is slow (launch-bound, 83 % of its step's GPU window waiting
    on launches); process 752 spends 92 % of its GPU time in collectives waiting for it."""
    analysis = diagnose(load_trace(ROOT / "sample_traces" / "nsys" / "ddp_nccl.sqlite.gz"))
    data = processes_report(analysis)
    assert data is not None and data["unit"] == "process"
    slow, waiting = data["ranks"]
    assert (slow["process"], slow["file"], slow["rank"]) == (751, "pid 751", None)
    assert [d["id"] for d in slow["devices"]] == [0]
    assert [d["id"] for d in waiting["devices"]] == [1]
    assert (slow["kernels"], slow["gpu_activities"], slow["steps"]) == (1_224, 1_512, 12)
    assert slow["gpu_busy_share"] == pytest.approx(0.1441, abs=1e-4)
    assert slow["collective_share"] == pytest.approx(0.3170, abs=1e-4)
    assert waiting["collective_share"] == pytest.approx(0.9220, abs=1e-4)
    assert (slow["step_wall_median_ns"], waiting["step_wall_median_ns"]) == (5_422_131, 3_631_072)
    assert slow["diagnosis"]["region"] == "train_step"
    assert slow["diagnosis"]["verdict"] == "launch-bound"
    assert slow["diagnosis"]["launch_wait_share"] == pytest.approx(0.8284, abs=1e-4)
    assert waiting["diagnosis"]["verdict"] == "communication-bound"
    # each step diagnosis is that process's own step region
    steps = {r.region.process: r for r in analysis.region_results if r.region.name == "train_step"}
    assert slow["diagnosis"]["window_ns"] == int(steps[751].window_ns)
    assert waiting["diagnosis"]["window_ns"] == int(steps[752].window_ns)
    # the slower process: more launch gaps per step than the median, fewer collectives
    (slowest,) = data["cross_rank"]["slowest"]
    assert slowest["file"] == "pid 751" and slowest["why"] == ["launch_gap_ns", "compute_ns"]
    assert slowest["excess_ns"]["collective_ns"] < 0
    # AND the JSON and the terminal carry it
    report = report_data(analysis)
    assert report["processes"] == json.loads(json.dumps(data))
    text = render_terminal(analysis, width=160)
    assert "2 processes with GPU work in this trace" in text
    assert "Per process" in text and "Per rank" not in text
    row = next(line for line in text.splitlines() if line.strip().startswith("pid 751"))
    assert row.split()[2:] == [
        "0", "1,224", "14.4%", "31.7%", "12", "5.42", "1.20", "launch-bound", "82.8%",
        "launch", "99%", "87%",
    ]  # fmt: skip
    assert "Across 2 processes: communication-bound 1, launch-bound 1" in text
    assert "Slowest processes, per step against the median process:" in text
    # AND the HTML page's summary opens with the same table
    page = page_data(analysis.timeline, report)
    table = page["summary"]["tables"][0]
    assert table["title"] == "Per process"
    assert [cell if isinstance(cell, str) else cell["text"] for cell in table["rows"][0]] == [
        "pid 751", "0", "1,224", "14.4%", "31.7%", "12", "5.42", "1.20", "launch-bound",
        "82.8%", "87%",
    ]  # fmt: skip
    assert "straggler (step > 1.2× the median process): none" in table["note"]


def test_a_trace_of_one_process_has_no_per_process_table() -> None:
    analysis = diagnose(load_trace(ROOT / "sample_traces" / "mixed.eager.json.gz"))
    assert processes_report(analysis) is None
    assert report_data(analysis)["processes"] is None
    assert "Per process" not in render_terminal(analysis, width=160)
    page = page_data(analysis.timeline, report_data(analysis))
    assert [t["title"] for t in page["summary"]["tables"]][0] == "GPU busy"


def test_ranges_on_one_rank_alone_leave_the_other_ranks_steps_to_be_found() -> None:
    # GIVEN the DDP export with process 752's NVTX ranges removed (ranges on rank 0 alone):
    # the ranges all come from one process, so they carry no process of their own (-1)
    timeline = load_trace(ROOT / "sample_traces" / "nsys" / "ddp_nccl.sqlite.gz")
    ann = timeline.annotations
    one = dataclasses.replace(timeline, annotations=ann[ann["pid"] == 751].reset_index(drop=True))
    analysis = diagnose(one)
    assert {r.region.process for r in analysis.region_results if r.region.depth > 0} == {-1, 752}
    # THEN process 752's steps are found (its ranges' absence no longer reads as 751's
    # covering its GPU work), beside 751's train_step ranges, under the whole trace
    labels = [(r.region.label, r.region.depth) for r in analysis.region_results]
    assert labels == [
        ("whole trace", 0),
        ("train_step", 1),
        ("forward", 2),
        ("backward", 2),
        ("optimizer", 2),
        ("[pid 752] step (detected)", 1),
    ]
    # AND each process's regions weigh their savings against their own step
    in_step = {r.region.label: r.in_step.name for r in analysis.region_results if r.in_step}
    assert in_step == {
        "train_step": "train_step",
        "forward": "train_step",
        "backward": "train_step",
        "optimizer": "train_step",
        "[pid 752] step (detected)": "step (detected)",
    }
    # AND each gets its own step's row
    data = processes_report(analysis)
    assert data is not None
    slow, other = data["ranks"]
    assert (slow["process"], slow["steps"], slow["step_wall_median_ns"]) == (751, 12, 5_422_131)
    assert slow["diagnosis"]["region"] == "train_step"
    assert slow["diagnosis"]["verdict"] == "launch-bound"
    assert (other["process"], other["steps"]) == (752, 12)
    assert other["diagnosis"]["region"] == "step (detected)"
    assert other["diagnosis"]["verdict"] == "communication-bound"
    assert other["kernels"] == 1_224
    # AND a measured step time (--eager-us 6000) is each rank's step's, whatever it is named
    measured = diagnose(one, eager_unprofiled_ns=6_000_000)
    eager = {r.region.label: r.estimate.eager_source for r in measured.region_results if r.estimate}
    assert eager["train_step"] == eager["[pid 752] step (detected)"] == "measured"
    assert eager["forward"] == "trace"
