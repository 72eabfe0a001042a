"""The graph decision: from a trace (per region) and from profile's measurements (per
candidate), with what is measured, estimated and unknown told apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES, sample_file

from traceinspect.analysis.decision import (
    MIN_SAVING_FRAC,
    MIN_SAVING_NS,
    EnclosingStep,
    GraphDecision,
    decide_candidate,
    decide_candidates,
    decide_region,
)
from traceinspect.analysis.diagnose import diagnose
from traceinspect.parse import load_trace


def region_decisions(name: str) -> dict[str, GraphDecision]:
    diagnosis = diagnose(load_trace(sample_file(f"{name}.eager.json.gz")))
    return {
        r.region.name: decide_region(
            r.region.name,
            verdict=r.verdict,
            capture_verdict=r.capture.verdict,
            blockers=[(b.severity, b.kind) for b in r.capture.blockers],
            estimate=r.estimate,
        )
        for r in diagnosis.region_results
    }


def test_region_decisions_on_the_h200_samples() -> None:
    # launch-bound attention (replay measured 24 % faster for the whole mixed step)
    attention = region_decisions("mixed")["attention"]
    assert attention.choice == "enable"
    assert attention.saving_frac.source == "estimated"
    assert attention.saving_frac.value is not None and attention.saving_frac.value > 0.6
    assert attention.reasons[1] == "capturable as-is"
    # and what a trace cannot know stays unknown
    for unknown in ("capture_ms", "repay_requests", "graph_memory_mib", "fallback_share"):
        assert getattr(attention, unknown).source == "unknown"
        assert getattr(attention, unknown).value is None
    assert "capture cost and graph memory: unknown from a trace" in attention.reasons[-1]
    # the .item() step: worth graphs only after splitting at the sync
    host_sync = region_decisions("host_sync")["ProfilerStep"]
    assert host_sync.choice == "enable after changes"
    assert any(
        r.startswith("not capturable as one graph (host_sync); the estimate is for the 2 graphs")
        for r in host_sync.reasons
    )
    # the compute-bound GEMM (replay measured 1.7 % slower): not worth it
    gemm = region_decisions("big_gemm")["step"]
    assert gemm.choice == "do not enable"
    assert gemm.saving_frac.value is not None and gemm.saving_frac.value < MIN_SAVING_FRAC
    assert "below 5%" in gemm.reasons[0]


def test_a_region_saving_less_than_a_graph_launch_is_not_worth_a_graph() -> None:
    # GIVEN the .item() of host_sync: replay would save 9.3 µs of its 33.2 µs (28 %), once a
    # step of 847 µs (eager, profiler inflation removed)
    diagnosis = diagnose(load_trace(sample_file("host_sync.eager.json.gz")))
    check = next(r for r in diagnosis.region_results if r.region.name == "check")
    assert check.estimate is not None and check.estimate.saving_ns == 9307
    assert check.in_step == EnclosingStep("ProfilerStep", 846_600.0, 1.0)
    # THEN it is not worth a graph, though 23 % is above MIN_SAVING_FRAC
    decision = check.decision
    assert check.estimate.saving_frac > MIN_SAVING_FRAC
    assert decision.choice == "do not enable"
    assert decision.reasons[0] == (
        "not worth a graph: saves 9.3 µs per occurrence, less than one graph launch's latency "
        "(13.4 µs); its 1 occurrence a step saves 9.3 µs, 1.1% of the step (ProfilerStep, "
        "847 µs)"
    )
    assert decision.reasons[1].startswith("replay would save 9.3 µs per occurrence (28%")
    # AND without the step it sits in, the saving per occurrence decides alone
    alone = decide_region(
        "check", verdict=check.verdict, capture_verdict=check.capture.verdict,
        estimate=check.estimate,
    )
    assert alone.choice == "do not enable"
    assert alone.reasons[0].endswith("(13.4 µs); the step it sits in is unknown")
    # AND the same saving is worth a graph where a step holds enough of them: 8 a step of
    # 847 µs add up to 74 µs, 8.8 % (> MIN_SAVING_FRAC)
    often = decide_region(
        "check", verdict=check.verdict, capture_verdict=check.capture.verdict,
        blockers=[(b.severity, b.kind) for b in check.capture.blockers],
        estimate=check.estimate, step=EnclosingStep("ProfilerStep", 846_600.0, 8.0),
    )
    assert often.choice == "enable after changes"
    assert (
        "under one graph launch (13.4 µs) per occurrence, but its 8 occurrences a step save "
        "74.5 µs, 8.8% of the step (ProfilerStep, 847 µs)"
    ) in often.reasons


def test_the_saving_floor_is_one_graph_launch_on_the_h200() -> None:
    # MIN_SAVING_NS is the H200 calibration's launch latency of one graph, as its comment says
    calibration = json.loads(
        (Path(__file__).parents[1] / "traceinspect/calibration/nvidia-h200.json").read_text()
    )
    assert calibration["graph_launch_latency_ns"] == MIN_SAVING_NS == 13_380


@pytest.mark.parametrize(
    ("trace", "region", "choice", "per_step"),
    [
        # replay measured 86 % faster (1,494 -> 207 µs a step): saves 1.7 ms per occurrence
        ("tiny_mlp.eager.json.gz", "step", "enable", 1.0),
        ("convnet_b1.eager.json.gz", "step", "enable", 1.0),
        ("decode_step.eager.json.gz", "step", "enable", 1.0),
        # 56 µs per occurrence, 8 occurrences a step
        ("decode_step.eager.json.gz", "mlp", "enable", 8.0),
        ("host_sync.eager.json.gz", "prepare", "enable", 1.0),
        ("validation/lstm_cell_loop/step.b16.eager.json.gz", "step", "enable", 1.0),
        ("validation/decoder_b1/step.b1.eager.json.gz", "step", "enable", 1.0),
    ],
)
def test_regions_with_real_savings_keep_their_decision(
    trace: str, region: str, choice: str, per_step: float
) -> None:
    diagnosis = diagnose(load_trace(sample_file(trace)))
    result = next(r for r in diagnosis.region_results if r.region.name == region)
    assert result.decision.choice == choice
    assert result.in_step is not None
    assert result.in_step.occurrences_per_step == pytest.approx(per_step)
    assert not any("not worth a graph" in reason for reason in result.decision.reasons)


def test_each_process_weighs_its_saving_against_its_own_step() -> None:
    # GIVEN the two-process NCCL DDP export: a train_step region per process
    diagnosis = diagnose(load_trace(sample_file("nsys/ddp_nccl.sqlite.gz")))
    steps = {r.region.process: r for r in diagnosis.region_results if r.name == "train_step"}
    assert sorted(steps) == [751, 752]
    for r in diagnosis.region_results:
        # THEN each region sits in its own process's step, once a step
        own = steps[r.region.process]
        assert own.estimate is not None
        assert r.in_step == EnclosingStep("train_step", float(own.estimate.eager_ns), 1.0)
    assert {s.estimate.eager_ns for s in steps.values() if s.estimate} == {5_428_194, 5_500_898}


def test_region_decision_says_whether_the_eager_side_was_measured() -> None:
    diagnosis = diagnose(
        load_trace(sample_file("tiny_mlp.eager.json.gz")), eager_unprofiled_ns=1_494_457
    )
    step = next(r for r in diagnosis.region_results if r.region.name == "ProfilerStep")
    decision = decide_region(
        "ProfilerStep",
        verdict=step.verdict,
        capture_verdict=step.capture.verdict,
        blockers=[(b.severity, b.kind) for b in step.capture.blockers],
        estimate=step.estimate,
    )
    assert "eager time measured (--eager-us)" in decision.reasons[0]


def test_already_graphed_and_idle_regions() -> None:
    graphed = decide_region("s", verdict="already-graphed", capture_verdict="already graphed",
                            estimate=None)
    assert graphed.choice == "keep graphs"
    idle = decide_region("s", verdict="idle", capture_verdict="no GPU work", estimate=None)
    assert idle.choice == "do not enable"
    assert idle.reasons == ("no GPU work to replay",)


def measured_candidate(workload: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A candidate's results as `profile` writes them, from the H200 measurements recorded
    with the sample traces (sample_traces/latencies.json: unprofiled p50 eager and graphed,
    capture time and graph pool of the workload's step)."""
    w = json.loads((SAMPLES / "latencies.json").read_text())["workloads"][workload]
    eager, graphed = w["eager"], w["graphed"]
    rows = [
        {"callable": workload, "bucket": 8, "mode": "eager", "in_bucket_set": True,
         "status": "ok", "host_p50_ns": round(eager["wall_p50_us"] * 1000)},
        {"callable": workload, "bucket": 8, "mode": "graphed", "in_bucket_set": True,
         "status": "ok", "host_p50_ns": round(graphed["wall_p50_us"] * 1000),
         "capture_ns": round(graphed["capture_us"] * 1000),
         "graph_pool_bytes": graphed["graph_pool_bytes"], "correct": True},
    ]
    return {"name": workload, "status": "measured", "buckets": [8]}, rows


def test_candidate_decision_from_measurements() -> None:
    # GIVEN tiny_mlp measured on the H200: 1,494.5 µs eager, 207.0 µs graphed, capture
    # 17.0 ms, graph pool 34 MiB
    candidate, rows = measured_candidate("tiny_mlp")
    decision = decide_candidate(candidate, rows)
    # THEN enable: saves 1,287.5 µs (86 %) per step, and capture is repaid after 14 steps
    assert decision.choice == "enable"
    assert decision.saving_us.value == pytest.approx(1_287.491)
    assert decision.saving_us.source == "measured"
    assert decision.saving_frac.value == pytest.approx(0.8615, abs=1e-4)
    assert decision.capture_ms.value == pytest.approx(16.975, abs=1e-3)
    assert decision.repay_requests.value == 14
    assert decision.graph_memory_mib.value == 34.0
    assert decision.fallback_share.source == "unknown"  # no request mix registered
    assert decision.reasons[:3] == (
        "replay saves 1,287 µs (86%) per step (median over the captured buckets) "
        "(measured, unprofiled)",
        "capture costs 17.0 ms once; repaid after 14 requests",
        "graph memory 34.0 MiB for the bucket set",
    )


def test_candidate_that_replay_does_not_speed_up() -> None:
    # big_gemm: 19,797 µs eager, 20,127 µs graphed: slower
    decision = decide_candidate(*measured_candidate("big_gemm"))
    assert decision.choice == "do not enable"
    assert decision.saving_frac.value == pytest.approx(-0.0167, abs=1e-4)
    assert decision.repay_requests.value is None  # never repaid
    assert decision.reasons[0] == "the saving is below 5%"


def test_candidate_with_a_request_mix_uses_the_picked_bucket_set() -> None:
    # GIVEN the README's mlp mix: eager 1,143.7 µs per request, buckets 2,8 174.2 µs
    candidate, rows = measured_candidate("tiny_mlp")
    candidate["recommendation"] = {
        "chosen": {"buckets": [2, 8], "expected_latency_ns": 174_200, "fallback_share": 0.02,
                   "padding_share": 0.40, "graph_memory_bytes": 4 * 2**20},
        "candidates": [{"buckets": [], "expected_latency_ns": 1_143_700,
                        "fallback_share": 1.0, "padding_share": None,
                        "graph_memory_bytes": 0}],
    }
    decision = decide_candidate(candidate, rows)
    assert decision.choice == "enable"
    assert decision.buckets == (2, 8)
    assert decision.saving_us.value == pytest.approx(969.5)
    assert decision.graph_memory_mib.value == 4.0
    assert decision.fallback_share.value == 0.02
    assert decision.fallback_share.source == "estimated"
    assert "2% of requests fall back to eager, 40% of graphed rows are padding" in (
        decision.reasons
    )


def test_failed_and_wrong_captures_are_not_enabled() -> None:
    candidate, rows = measured_candidate("host_sync")
    rows[1].update(status="capture_failed", failure={"kind": "host_sync"})
    decision = decide_candidate(candidate, rows)
    assert decision.choice == "do not enable"
    assert decision.reasons == ("capture failed in every bucket (host_sync): fix that first",)
    candidate, rows = measured_candidate("decode_step")
    rows[1]["correct"] = False
    assert decide_candidate(candidate, rows).choice == "do not enable"
    results = {"candidates": [{"name": "x", "status": "cuda_unavailable", "buckets": [1]}],
               "rows": []}
    (unmeasured,) = decide_candidates(results)
    assert unmeasured.choice == "undecided"


def test_decisions_on_the_terminal() -> None:
    import io

    from rich.console import Console

    from traceinspect.report.decision import render_decisions

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, highlight=False)
    render_decisions(
        [decide_candidate(*measured_candidate("tiny_mlp")), region_decisions("mixed")["attention"]],
        console,
    )
    lines = buffer.getvalue().splitlines()
    assert lines[:5] == [
        "Decision — enable CUDA graphs?",
        "  tiny_mlp: enable",
        "    replay saves 1,287 µs (86%) per step (median over the captured buckets) (measured, "
        "unprofiled)",
        "    capture costs 17.0 ms once; repaid after 14 requests",
        "    graph memory 34.0 MiB for the bucket set",
    ]
    assert "  attention: enable" in lines


def test_analyze_prints_and_writes_each_regions_decision(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from traceinspect.cli import app

    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        app, ["analyze", str(sample_file("mixed.eager.json.gz")), "--json", str(out)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    block = result.stdout[result.stdout.index("Decision — enable CUDA graphs?"):].splitlines()
    assert "  attention: enable" in block
    assert "  mlp: do not enable" in block
    assert block[-1].startswith("  all: capture cost and graph memory: unknown from a trace")
    regions = {r["name"]: r for r in json.loads(out.read_text())["regions"]}
    decision = regions["attention"]["decision"]
    assert decision["choice"] == "enable"
    assert decision["saving_frac"]["source"] == "estimated"
    assert decision["capture_ms"] == {"value": None, "source": "unknown"}


def test_reports_say_a_tiny_region_is_not_worth_a_graph(tmp_path: Path) -> None:
    import csv

    from typer.testing import CliRunner

    from traceinspect.cli import app

    out, tables = tmp_path / "r.json", tmp_path / "csv"
    result = CliRunner().invoke(
        app,
        ["analyze", str(sample_file("host_sync.eager.json.gz")), "--json", str(out),
         "--csv", str(tables)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    block = result.stdout[result.stdout.index("Decision — enable CUDA graphs?"):].splitlines()
    at = block.index("  check: do not enable")
    assert block[at + 1].startswith(
        "    not worth a graph: saves 9.3 µs per occurrence, less than one graph launch's"
    )
    regions = {r["name"]: r for r in json.loads(out.read_text())["regions"]}
    assert regions["check"]["decision"]["choice"] == "do not enable"
    assert regions["prepare"]["decision"]["choice"] == "enable"
    with (tables / "regions.csv").open(newline="") as f:
        rows = {row["name"]: row for row in csv.DictReader(f)}
    assert rows["check"]["decision"] == "do not enable"
    assert rows["check"]["decision_reason"].startswith(
        "do not enable: not worth a graph: saves 9.3 µs per occurrence"
    )
