"""The ranks of one job replayed together: collectives at their wait-free time, the job's
step the slowest rank's (:mod:`traceinspect.analysis.job`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import ROOT, corpus_file, ddp_rank_folder
from hypothesis import given, settings
from hypothesis import strategies as st

from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.job import (
    RankStep,
    plan_ranks_job,
    rank_step,
    replay_rank_step,
    wait_free_ends,
)
from traceinspect.commands.ranks import run_analyze_dir
from traceinspect.parse import load_trace
from traceinspect.report.json_report import report_data
from traceinspect.report.terminal import render_terminal

DDP = ROOT / "sample_traces" / "nsys" / "ddp_nccl.sqlite.gz"


def test_a_collective_waits_for_its_last_rank_only() -> None:
    # GIVEN one all-reduce on two ranks ending together at 1,000 ns: rank 1 reached it at
    # 100 (it waited 800 for rank 2), rank 2 at 900; a second, later one the other way round;
    # and a kernel of another name on rank 2 ending at the same time
    names = np.array(["ar", "ar", "ar", "ar", "gemm"], object)
    pid = np.array([1, 2, 1, 2, 2])
    start = np.array([100, 900, 5_950, 5_200, 800])
    end = np.array([1_000, 1_002, 6_000, 6_001, 1_000])
    collective = np.array([True, True, True, True, False])
    free = wait_free_ends(names, pid, start, end, collective)
    # THEN each kernel takes the shortest of its collective's durations over the ranks
    assert free.tolist() == [100 + 102, 900 + 102, 5_950 + 50, 5_200 + 50, 1_000]
    # AND a kernel with no partner near its end keeps its duration
    alone = wait_free_ends(
        np.array(["ar", "ar"], object),
        np.array([1, 2]),
        np.array([0, 10_000]),
        np.array([500, 10_100]),
        np.array([True, True]),
    )
    assert alone.tolist() == [500, 10_100]


def test_the_ddp_ranks_replayed_together() -> None:
    """The bundled two-process DDP export (NCCL, one H200 each): rank 0 (pid 751) is
    launch-bound, rank 1 (pid 752) waits in its all-reduces for it. Alone, 752's step
    replays at 3.99 ms (its waits kept as traced) and reads a 27 % saving; replayed
    together, the waits shrink to the all-reduces' wait-free time and the job's step
    replays at 0.70 ms, 87 % less than its 5.50 ms eager step."""
    analysis = diagnose(load_trace(DDP))
    job = analysis.job
    assert job is not None
    assert job.processes == (751, 752)
    assert (job.steps, job.collectives) == (12, 192)  # 8 all-reduces a step on each rank
    assert job.graphed_ns == 699_218
    assert (job.low_ns, job.high_ns) == (629_593, 865_421)
    assert job.eager_ns == 5_499_192 and job.eager_source == "trace"
    assert job.saving_frac == pytest.approx(0.8729, abs=1e-4)
    assert job.graphed_as_traced_ns == 3_993_011
    assert job.wait_ns == 3_715_558
    # the ranks' own estimates: 751's matches the job's (its all-reduces barely wait), 752's
    # holds its waits
    own = {
        r.region.process: r.estimate.graphed_ns
        for r in analysis.region_results
        if r.region.name == "train_step" and r.estimate
    }
    assert own == {751: 699_218, 752: 3_993_011}
    # AND each process's step decision says it beside its own saving
    for r in analysis.region_results:
        if r.region.name == "train_step":
            assert r.job is job
            assert (
                "replayed together with the other processes' steps (each collective at its "
                "wait-free time), the job's step takes 699 µs against 5,499 µs eager, 87% "
                "saved; this process's own estimate keeps its collectives' waits on the others "
                "as traced"
            ) in r.decision.reasons
        else:
            assert r.job is None
    assert analysis.step is not None and analysis.step.job is job
    # AND the JSON, the terminal and the HTML say so
    data = report_data(analysis)["processes"]["replayed_together"]
    assert data == json.loads(json.dumps(job.to_json()))
    assert data["graphed_us"] == 699.218
    text = " ".join(render_terminal(analysis, width=200).split())
    assert (
        "Replayed together (both processes' steps as graphs, each collective at its wait-free "
        "time, the shortest of its kernels over the processes): 0.70 ms a step (range "
        "0.63–0.87) against 5.50 ms eager, the slowest process's (trace): a saving of 87% "
        "(range 81% to 90%); with the collectives as traced, 3.99 ms — 3.72 ms a step of the "
        "collectives' time is waiting on another process (median of 12 paired steps)"
    ) in text


def test_a_measured_step_is_the_jobs_eager_time() -> None:
    job = diagnose(load_trace(DDP), eager_unprofiled_ns=4_200_000).job
    assert job is not None
    assert (job.eager_ns, job.eager_source) == (4_200_000, "measured")
    assert job.graphed_ns == 699_218
    assert job.saving_frac == pytest.approx(1 - 699_218 / 4_200_000)


@pytest.mark.corpus
def test_no_job_estimate_without_collectives() -> None:
    # the FSDP export's two processes run no collective kernel; a one-process trace has no job
    assert diagnose(load_trace(corpus_file("nsys-ai__h100_2gpu_1s.sqlite"))).job is None
    mixed = diagnose(load_trace(ROOT / "sample_traces" / "mixed.eager.json.gz"))
    assert mixed.job is None
    assert report_data(mixed)["processes"] is None


def _rank_step(collectives: list[list[tuple[str, int]]], *, start: int = 0) -> RankStep:
    """A rank's step of ``len(collectives)`` occurrences 1,000 ns apart, 900 ns long each."""
    n = len(collectives)
    return RankStep(
        name="train_step",
        begins=tuple(start + 1_000 * k for k in range(n)),
        ends=tuple(start + 1_000 * k + 900 for k in range(n)),
        collectives=tuple(tuple(c) for c in collectives),
        eager_ns=5_000,
        eager_low_ns=4_000,
        eager_high_ns=6_000,
        eager_source="trace-deflated",
        graphed_ns=3_000,
    )


def test_a_folders_collectives_pair_by_name_and_order() -> None:
    # GIVEN two ranks' steps of two occurrences: all-reduces and a broadcast in the first,
    # an extra all-reduce on rank 1 alone in the second (no telling which is which)
    rank0 = _rank_step([[("ar", 800), ("bc", 50), ("ar", 90)], [("ar", 700)]])
    rank1 = _rank_step(
        [[("ar", 100), ("ar", 400), ("bc", 60)], [("ar", 70), ("ar", 30)]], start=10**9
    )
    # WHEN the job is planned (clocks far apart: equal counts pair the steps by order)
    plan = plan_ranks_job([rank0, rank1])
    assert plan is not None
    assert plan.paired == ((0, 0), (1, 1))
    # THEN the i-th kernel of a name takes the shortest of the ranks' i-th of that name
    assert plan.free_ns[0] == ((100, 50, 90), (700,))
    assert plan.free_ns[1] == ((100, 90, 50), (70, 30))
    # ... and waits are what the kernels ran beyond that, over both ranks
    assert plan.waits_ns == ((800 - 100) + (400 - 90) + (60 - 50), 0)
    assert plan.collectives == 3 + 3 + 1 + 2
    assert plan.task(1) == ([0, 1], [[100, 90, 50], [70, 30]])


def test_a_folders_steps_pair_by_gpu_window_where_counts_differ() -> None:
    # GIVEN rank 1 traced one step more, before the others (same clock)
    rank0 = _rank_step([[("ar", 10)], [("ar", 20)], [("ar", 30)]], start=1_000)
    rank1 = _rank_step([[("ar", 5)], [("ar", 40)], [("ar", 25)], [("ar", 1)]])
    plan = plan_ranks_job([rank0, rank1])
    assert plan is not None
    # THEN each of rank 0's steps meets the step of rank 1 its GPU window overlaps
    assert plan.paired == ((0, 1), (1, 2), (2, 3))
    assert plan.free_ns == (((10,), (20,), (1,)), ((10,), (20,), (1,)))
    # AND fewer than two paired steps, or a single rank, give no job
    assert plan_ranks_job([rank0]) is None
    far = _rank_step([[("ar", 5)], [("ar", 5)]], start=10**9)
    assert plan_ranks_job([rank0, far]) is None


@pytest.mark.parametrize("workers", [1, 2])
def test_a_folder_of_the_ddp_ranks_replayed_together(
    tmp_path: Path, workers: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same DDP step under torch.profiler, one Kineto trace per rank in a folder (each
    read in its own worker, never one timeline): rank 0 waits in its all-reduces for rank 1
    here. Alone, rank 0's step replays at 3.62 ms (its waits kept); replayed together, the
    job's step at 0.88 ms against rank 0's 4.43 ms eager (simulated without the profiler;
    the same script measured 4.2 ms a step unprofiled) — the Nsight export of another run
    reads 0.70 ms against 5.50 ms, its eager step as nsys slowed it."""
    # WHEN the folder is analyzed (one worker and two: the steps cross back pickled)
    out = tmp_path / "ranks.json"
    run_analyze_dir(ddp_rank_folder(tmp_path), json_out=str(out), workers=workers, quiet=True)
    data = json.loads(out.read_text())
    # THEN each rank's row counts its 12 train_step ranges as its steps
    assert [(r["rank"], r["steps"]) for r in data["ranks"]] == [(0, 12), (1, 12)]
    assert [r["diagnosis"]["region"] for r in data["ranks"]] == ["train_step"] * 2
    # AND the job estimate pairs the 12 steps and their 8 all-reduces a rank
    job = data["replayed_together"]
    assert job["processes"] == [0, 1]
    assert (job["steps"], job["collectives"]) == (12, 192)
    assert job["graphed_us"] == 876.814
    assert (job["low_us"], job["high_us"]) == (787.914, 1214.448)
    assert (job["eager_us"], job["eager_source"]) == (4430.758, "trace-deflated")
    assert job["saving_frac"] == 0.8021
    assert job["graphed_as_traced_us"] == 3620.272
    assert job["wait_us"] == 3146.115
    # ... in one line of the table's report
    text = capsys.readouterr().out
    assert "Replayed together (both ranks' steps as graphs" in text
    assert "waiting on another rank (median of 12 paired steps)" in " ".join(text.split())


def test_a_rank_that_fails_its_second_pass_leaves_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a rank whose trace cannot be read again (replaced between the passes)
    def unreadable(task: tuple[str, str, list[int], list[list[int]]], **_: Any) -> dict[str, Any]:
        return {"failure": {"file": Path(task[0]).name, "error": "cannot read"}}

    monkeypatch.setattr("traceinspect.commands.ranks.replay_one", unreadable)
    out = tmp_path / "ranks.json"
    run_analyze_dir(ddp_rank_folder(tmp_path), json_out=str(out), workers=1, quiet=True)
    data = json.loads(out.read_text())
    # THEN the ranks' rows stand, with no job estimate and a note saying why
    assert len(data["ranks"]) == 2 and data["replayed_together"] is None
    assert data["notes"] == [
        "the ranks' steps replayed together: not estimated "
        "(ddp_nccl.rank0.kineto.json.gz: cannot read)"
    ]


def test_a_rank_without_collectives_leaves_the_job_unestimated(tmp_path: Path) -> None:
    # GIVEN the two DDP ranks and a third rank whose step runs no collective
    folder = ddp_rank_folder(tmp_path)
    shutil.copy(ROOT / "sample_traces" / "tiny_mlp.eager.json.gz", folder / "rank2.json.gz")
    out = tmp_path / "ranks.json"
    run_analyze_dir(folder, json_out=str(out), workers=1, quiet=True)
    data = json.loads(out.read_text())
    # THEN no job estimate from two ranks of three: the job runs at its slowest rank's pace
    assert data["replayed_together"] is None
    assert (
        "the ranks' steps replayed together: not estimated (rank2.json.gz: no step estimate "
        "with collective kernels)"
    ) in data["notes"]


@pytest.mark.corpus
def test_ranks_of_different_jobs_pair_no_step(tmp_path: Path) -> None:
    # GIVEN the DDP rank 0 (12 steps) beside HTA's NCCL rank (3 steps, another job and day)
    folder = tmp_path / "ranks"
    folder.mkdir()
    shutil.copy(ROOT / "sample_traces" / "nsys" / "ddp_nccl.rank0.kineto.json.gz", folder)
    shutil.copy(corpus_file("HolisticTraceAnalysis__nccl_data.json.gz"), folder)
    out = tmp_path / "ranks.json"
    run_analyze_dir(folder, json_out=str(out), workers=1, quiet=True)
    data = json.loads(out.read_text())
    # THEN no job estimate, and a note says why
    assert data["replayed_together"] is None
    assert any("fewer than 2 steps pair up across the ranks" in n for n in data["notes"])


def test_a_folder_without_collectives_has_no_job(tmp_path: Path) -> None:
    shutil.copy(ROOT / "sample_traces" / "mixed.eager.json.gz", tmp_path / "rank0.json.gz")
    shutil.copy(ROOT / "sample_traces" / "tiny_mlp.eager.json.gz", tmp_path / "rank1.json.gz")
    out = tmp_path / "ranks.json"
    run_analyze_dir(tmp_path, json_out=str(out), workers=1, quiet=True)
    assert json.loads(out.read_text())["replayed_together"] is None


def test_a_second_pass_on_a_changed_trace_fails_cleanly() -> None:
    # GIVEN a rank's trace whose step is not the one the first pass read
    timeline = load_trace(ROOT / "sample_traces" / "nsys" / "ddp_nccl.rank1.kineto.json.gz")
    # THEN its replay stops with one line saying so, as does a wrong collective count
    with pytest.raises(ValueError, match="no longer holds the step 'ProfilerStep'"):
        replay_rank_step(timeline, "ProfilerStep", [0], [[1]], None)
    with pytest.raises(ValueError, match="step occurrence 0: 8 collectives, 1 given"):
        replay_rank_step(timeline, "train_step", [0], [[1]], None)


def test_matching_by_order_and_by_end_agree_on_the_ddp_export() -> None:
    # GIVEN the DDP export's two processes, each's step as a folder's worker would send it
    from dataclasses import replace

    from traceinspect.analysis.diagnose import process_steps
    from traceinspect.analysis.job import _collective_rows

    analysis = diagnose(load_trace(DDP))
    assert analysis.step is not None
    steps = process_steps(analysis.region_results, analysis.step.region)
    pids = sorted(steps)
    parts = [rank_step(replace(analysis, step=steps[p])) for p in pids]
    assert all(part is not None for part in parts)
    # WHEN a folder's plan matches collectives by name and order in paired steps
    plan = plan_ranks_job([p for p in parts if p is not None])
    assert plan is not None and len(plan.paired) == 12
    # THEN each of the 192 all-reduces takes the wait-free time that one trace's matching
    # by nearest end gives it (one clock: the two ways must agree)
    gpu = analysis.timeline.gpu
    start = gpu["start_ns"].to_numpy(np.int64)
    collective = gpu["collective"].to_numpy(bool)
    free = wait_free_ends(
        gpu["name"].to_numpy(object),
        gpu["pid"].to_numpy(np.int64),
        start,
        gpu["end_ns"].to_numpy(np.int64),
        collective,
    )
    matched = 0
    for r, pid in enumerate(pids):
        for j, ks in enumerate(plan.paired):
            rows = _collective_rows(steps[pid].region.rows[ks[r]], collective, start)
            assert (free[rows] - start[rows]).tolist() == list(plan.free_ns[r][j])
            matched += len(rows)
    assert matched == 192


def test_a_folders_options_reach_every_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from traceinspect.cli import main

    folder = ddp_rank_folder(tmp_path)
    out = tmp_path / "ranks.json"

    def analyze(*args: str) -> int:
        return main(["analyze", str(folder), "--json", str(out), "-q", *args])

    # GIVEN the DDP folder, WHEN analyzed with the step measured unprofiled (4.2 ms)
    assert analyze("--eager-us", "4200") == 0
    data = json.loads(out.read_text())
    # THEN every rank weighs its saving against it, and so does the job
    savings = [r["diagnosis"]["saving_frac"] for r in data["ranks"]]
    assert savings == [
        pytest.approx(1 - 3_620_272 / 4_200_000, abs=1e-6),
        pytest.approx(0.774, abs=1e-3),
    ]
    job = data["replayed_together"]
    assert (job["eager_us"], job["eager_source"]) == (4200.0, "measured")
    assert (job["graphed_us"], job["saving_frac"]) == (876.814, 0.7912)
    # AND a calibration file is read once and used by both passes (the H100's profile)
    h100 = ROOT / "traceinspect" / "calibration" / "nvidia-h100-80gb-hbm3.json"
    assert analyze("--calibration", str(h100), "--force") == 0
    assert json.loads(out.read_text())["replayed_together"]["graphed_us"] == 857.873
    capsys.readouterr()
    # AND what one trace alone can take is refused for a folder, in one line
    for option in ("--csv", "--perfetto"):
        assert analyze(option, str(tmp_path / "x"), "--force") == 2
        assert (
            f"{option} writes one trace's tables; give one rank's file" in capsys.readouterr().err
        )
    assert analyze("--calibration", str(tmp_path / "none.json"), "--force") == 2
    assert "no such calibration file" in capsys.readouterr().err


_KERNEL = st.tuples(st.sampled_from(["ar", "ag", "rs"]), st.integers(1, 10_000))


@st.composite
def _ranks(draw: st.DrawFn) -> list[RankStep]:
    """2-4 ranks of 1-6 steps each, 0-6 collectives a step, windows on one clock or apart."""
    ranks = draw(st.integers(2, 4))
    out = []
    for _ in range(ranks):
        steps = draw(st.integers(1, 6))
        kernels = draw(st.lists(st.lists(_KERNEL, max_size=6), min_size=steps, max_size=steps))
        out.append(_rank_step(kernels, start=draw(st.sampled_from([0, 500, 10**9]))))
    return out


@settings(max_examples=200, deadline=None)
@given(_ranks())
def test_a_folders_plan_holds_for_any_ranks(steps: list[RankStep]) -> None:
    # WHEN any ranks' steps are planned
    plan = plan_ranks_job(steps)
    if plan is None:
        return
    # THEN every paired step names one occurrence of each rank, no occurrence twice
    assert len(plan.paired) >= 2
    for r in range(len(steps)):
        taken = [ks[r] for ks in plan.paired]
        assert len(set(taken)) == len(taken)
        assert all(0 <= k < len(steps[r].begins) for k in taken)
    for j, ks in enumerate(plan.paired):
        lists = [s.collectives[k] for s, k in zip(steps, ks, strict=True)]
        frees = [plan.free_ns[r][j] for r in range(len(steps))]
        # ... each collective keeps its kernel count and is never longer than as traced
        for kernels, free in zip(lists, frees, strict=True):
            assert len(free) == len(kernels)
            assert all(0 < f <= d for (_, d), f in zip(kernels, free, strict=True))
        # ... the i-th kernel of a name all ranks ran as often ends equal on every rank
        for name in {n for kernels in lists for n, _ in kernels}:
            at = [[i for i, (n, _) in enumerate(kernels) if n == name] for kernels in lists]
            if len({len(a) for a in at}) == 1:
                for ordinal in range(len(at[0])):
                    ends = {frees[r][at[r][ordinal]] for r in range(len(steps))}
                    assert len(ends) == 1
        # ... and the step's waits are what the kernels ran beyond that
        assert plan.waits_ns[j] == sum(
            d - f
            for kernels, free in zip(lists, frees, strict=True)
            for (_, d), f in zip(kernels, free, strict=True)
        )
    assert plan.collectives == sum(
        len(s.collectives[k]) for ks in plan.paired for s, k in zip(steps, ks, strict=True)
    )
