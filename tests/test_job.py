"""The ranks of one job replayed together: collectives at their wait-free time, the job's
step the slowest rank's (:mod:`traceinspect.analysis.job`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT, corpus_file

from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.job import wait_free_ends
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
