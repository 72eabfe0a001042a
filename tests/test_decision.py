"""The graph decision: from a trace (per region) and from profile's measurements (per
candidate), with what is measured, estimated and unknown told apart."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES, corpus_file, sample_file

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
from traceinspect.analysis.estimate import RegionEstimate
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


def test_the_item_check_saves_more_than_a_graph_launch() -> None:
    # GIVEN the .item() of host_sync (a one-scalar readback and its synchronize): replay is
    # predicted at 17.4 µs against 30.2 µs eager, a saving of 12.9 µs (43 %) once a step of
    # 763 µs (eager, profiler inflation removed). That is above one graph launch: a
    # synchronized 1-node graph replays in 10.1 µs wall and a small input copy costs 9.9 µs
    # of host on the H200 (the median of the copy probes), 6.5 µs at the pace of this
    # trace's host (20.7 µs predicted, a 10.7 µs saving, at 9.9; 16.7 µs and 14.8 µs at
    # the calibration's own machine's 5.8).
    diagnosis = diagnose(load_trace(sample_file("host_sync.eager.json.gz")))
    check = next(r for r in diagnosis.region_results if r.region.name == "check")
    assert check.estimate is not None
    assert (check.estimate.graphed_ns, check.estimate.eager_ns) == (17_354, 30_224)
    assert check.estimate.saving_ns == 12_870 > MIN_SAVING_NS
    assert check.in_step == EnclosingStep("ProfilerStep", 763_332.0, 1.0)
    # THEN it is worth a graph once its trailing sync is moved out of it
    decision = check.decision
    assert decision.choice == "enable after changes"
    assert decision.reasons[0].startswith("replay would save 12.9 µs per occurrence (43%")
    assert "capture needs changes first: trailing_sync" in decision.reasons
    assert not any("not worth a graph" in reason for reason in decision.reasons)


def cut_saving(estimate: RegionEstimate, saving_ns: int) -> RegionEstimate:
    """``estimate`` with replay predicted to save only ``saving_ns`` of its eager time."""
    return replace(
        estimate,
        graphed_ns=estimate.eager_ns - saving_ns,
        saving_ns=saving_ns,
        saving_frac=saving_ns / estimate.eager_ns,
    )


def test_a_region_saving_less_than_a_graph_launch_is_not_worth_a_graph() -> None:
    # GIVEN the .item() check of host_sync with its predicted saving cut to 8 µs of its
    # 30.2 µs (26 %), once a step of 763 µs (eager, profiler inflation removed)
    diagnosis = diagnose(load_trace(sample_file("host_sync.eager.json.gz")))
    check = next(r for r in diagnosis.region_results if r.region.name == "check")
    assert check.estimate is not None and check.in_step is not None
    small = cut_saving(check.estimate, 8_000)
    blockers = [(b.severity, b.kind) for b in check.capture.blockers]
    launch = f"{MIN_SAVING_NS / 1000:.1f} µs"  # one graph launch's latency
    decision = decide_region(
        "check",
        verdict=check.verdict,
        capture_verdict=check.capture.verdict,
        blockers=blockers,
        estimate=small,
        step=check.in_step,
    )
    # THEN it is not worth a graph, though 26 % is above MIN_SAVING_FRAC
    assert small.saving_frac > MIN_SAVING_FRAC
    assert decision.choice == "do not enable"
    assert decision.reasons[0] == (
        "not worth a graph: saves 8.0 µs per occurrence, less than one graph launch's latency "
        f"({launch}); its 1 occurrence a step saves 8.0 µs, 1.0% of the step (ProfilerStep, "
        "763 µs)"
    )
    assert decision.reasons[1].startswith("replay would save 8.0 µs per occurrence (26%")
    # AND without the step it sits in, the saving per occurrence decides alone
    alone = decide_region(
        "check",
        verdict=check.verdict,
        capture_verdict=check.capture.verdict,
        estimate=small,
    )
    assert alone.choice == "do not enable"
    assert alone.reasons[0].endswith(f"({launch}); the step it sits in is unknown")
    # AND the same saving is worth a graph where a step holds enough of them: 8 a step of
    # 763 µs add up to 64 µs, 8.4 % (> MIN_SAVING_FRAC)
    often = decide_region(
        "check",
        verdict=check.verdict,
        capture_verdict=check.capture.verdict,
        blockers=blockers,
        estimate=small,
        step=replace(check.in_step, occurrences_per_step=8.0),
    )
    assert often.choice == "enable after changes"
    assert (
        f"under one graph launch ({launch}) per occurrence, but its 8 occurrences a step save "
        "64.0 µs, 8.4% of the step (ProfilerStep, 763 µs)"
    ) in often.reasons


def test_occurrences_that_differ_decide_by_what_each_would_save() -> None:
    # GIVEN mixed's attention (enable, 5 occurrences, each saving 80-83 %) with its saving
    # range stretched below -100 %, as when one occurrence's collective waited on another
    # rank
    attention = next(
        r
        for r in diagnose(load_trace(sample_file("mixed.eager.json.gz"))).region_results
        if r.region.name == "attention"
    )
    assert attention.estimate is not None
    spread = attention.estimate.occurrence_saving_spread()
    assert spread is not None and 0.80 < spread[0] <= spread[1] <= spread[2] < 0.83
    wide = replace(attention.estimate, saving_low_frac=-3.0)
    n = len(wide.occurrence_saving_fracs)
    assert n == attention.estimate.occurrences == 5

    def decided(fracs: tuple[float, ...]) -> GraphDecision:
        return decide_region(
            "attention",
            verdict=attention.verdict,
            capture_verdict=attention.capture.verdict,
            estimate=replace(wide, occurrence_saving_fracs=fracs),
        )

    # THEN where every occurrence saves, the decision stands and says so
    kept = decided(wide.occurrence_saving_fracs)
    assert kept.choice == "enable"
    assert any(f"at least 5% on {n} of {n}" in r for r in kept.reasons)
    # AND where half save at least 5 %, it still stands (a tie is not "most")
    half = decided((0.0,) * 5 + (0.5,) * 5)
    assert half.choice == "enable"
    # AND where most would save less than 5 % each, it is undecided, whatever the median
    most = decided((0.0,) * 6 + (0.5,) * 4)
    assert most.choice == "undecided"
    assert (
        "undecided: most of its occurrences (6 of 10) would save less than 5% each; measure "
        "both modes before enabling (`traceinspect profile`, or pass --eager-us)"
    ) in most.reasons
    # AND a range above -100 % does not look at occurrences at all
    narrow = decide_region(
        "attention",
        verdict=attention.verdict,
        capture_verdict=attention.capture.verdict,
        estimate=replace(attention.estimate, occurrence_saving_fracs=(0.0,) * 10),
    )
    assert narrow.choice == "enable"
    assert not any("each occurrence" in r for r in narrow.reasons)


def test_the_saving_floor_is_one_graph_launch_on_the_h200() -> None:
    # MIN_SAVING_NS is the H200 calibration's launch latency of one graph, as its comment says
    calibration = json.loads(
        (Path(__file__).parents[1] / "traceinspect/calibration/nvidia-h200.json").read_text()
    )
    assert calibration["graph_launch_latency_ns"] == MIN_SAVING_NS == 9_266


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
    # (each step's simulated eager time ends in the caller's synchronize: sync_ns of the H200
    # calibration, 4,356 ns)
    assert {s.estimate.eager_ns for s in steps.values() if s.estimate} == {5_426_488, 5_499_192}


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


def test_an_nsight_traces_eager_side_is_said_to_keep_the_tracers_cost() -> None:
    # The bundled two_streams export's eager step reads 2.1x the unprofiled one: its saving
    # (48 % read for the step, 12.5 % measured) is flagged as possibly high
    diagnosis = diagnose(load_trace(sample_file("nsys/two_streams.eager.sqlite.gz")))
    step = next(r for r in diagnosis.region_results if r.region.name == "step")
    assert step.estimate is not None and step.estimate.eager_source == "trace"
    assert step.decision is not None
    assert (
        "eager time as traced, the tracer's own cost kept: the saving may read high"
        in step.decision.reasons[0]
    )


def test_already_graphed_and_idle_regions() -> None:
    graphed = decide_region(
        "s", verdict="already-graphed", capture_verdict="already graphed", estimate=None
    )
    assert graphed.choice == "keep graphs"
    idle = decide_region("s", verdict="idle", capture_verdict="no GPU work", estimate=None)
    assert idle.choice == "do not enable"
    assert idle.reasons == ("no GPU work to replay",)


def test_an_idle_region_with_gpu_work_is_not_said_to_have_none() -> None:
    # GIVEN HTA's DDP trace, whose optimizer step launches kernels (7 % of its window busy)
    # between host gaps of its own over 200 µs
    diagnosis = diagnose(load_trace(corpus_file("HolisticTraceAnalysis__nccl_data.json.gz")))
    step = next(r for r in diagnosis.region_results if r.region.name == "## optimizer ##")
    assert step.verdict == "idle" and step.estimate is None
    assert step.capture.verdict != "no GPU work"
    # THEN it is not enabled, for what its GPU idles on, not for want of GPU work
    decision = step.decision
    assert decision.choice == "do not enable"
    assert decision.reasons[0].startswith("its GPU idles most of the window on what replay")
    zero_grad = next(
        r for r in diagnosis.region_results if r.region.name.startswith("Optimizer.zero_grad")
    )
    assert zero_grad.decision.reasons == ("no GPU work to replay",)


def measured_candidate(workload: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A candidate's results as `profile` writes them, from the H200 measurements recorded
    with the sample traces (sample_traces/latencies.json: unprofiled p50 eager and graphed,
    capture time and graph pool of the workload's step)."""
    w = json.loads((SAMPLES / "latencies.json").read_text())["workloads"][workload]
    eager, graphed = w["eager"], w["graphed"]
    rows = [
        {
            "callable": workload,
            "bucket": 8,
            "mode": "eager",
            "in_bucket_set": True,
            "status": "ok",
            "host_p50_ns": round(eager["wall_p50_us"] * 1000),
        },
        {
            "callable": workload,
            "bucket": 8,
            "mode": "graphed",
            "in_bucket_set": True,
            "status": "ok",
            "host_p50_ns": round(graphed["wall_p50_us"] * 1000),
            "capture_ns": round(graphed["capture_us"] * 1000),
            "graph_pool_bytes": graphed["graph_pool_bytes"],
            "correct": True,
        },
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


def test_an_eager_time_that_moved_between_rounds_gives_the_saving_its_range() -> None:
    """ALBERT on an H100 (h100_holdout65): replay ran 3.98-4.01 ms in every round; the fresh
    timing process's eager rounds ran 5.05-5.36 ms on the first recording and 4.25-7.30 ms
    on the rerun, the profiled process's 4.25-4.35 and 4.25-4.78 ms. The measured saving
    (24 %, 35 %) carries the range its rounds allow, and the decision says where it is wide."""
    folder = SAMPLES / "validation"
    albert = "albert_base_v2_shared_layer_sst2_padded_fp16_one_stream_b64"
    first, rerun = (
        decide_candidates(json.loads((folder / s / albert / "results.json").read_text()))[0]
        for s in ("h100_holdout65", "h100_holdout65_rerun")
    )
    assert first.saving_frac.to_json() == {
        "value": 0.2353, "source": "measured", "low": 0.0611, "high": 0.2616
    }  # fmt: skip
    assert rerun.saving_frac.to_json() == {
        "value": 0.3478, "source": "measured", "low": 0.0465, "high": 0.4608
    }  # fmt: skip
    assert first.reasons[-1] == (
        "eager time is not steady (its rounds ran 5.05-5.36 ms, 4.25-4.35 ms in the process "
        "that profiled it): the saving lies between 6.1% and 26%; time the step again "
        "before relying on its p50"
    )
    assert rerun.choice == "enable"
    assert rerun.reasons[-1].startswith(
        "eager time is not steady (its rounds ran 4.25-7.30 ms, 4.25-4.78 ms in the process "
        "that profiled it): the saving lies between 4.7% and 46%, below 5% at its low end"
    )
    # GShard's rounds held (8.2 % saved, 6.7-9.3 % over the rounds): nothing said
    gshard = "gshard_top2_gating_capacity_16experts_dispatch_mm_bf16_one_stream_b4096"
    steady = decide_candidates(
        json.loads((folder / "h100_holdout65" / gshard / "results.json").read_text())
    )[0]
    assert (steady.saving_frac.low, steady.saving_frac.high) == (
        pytest.approx(0.0667, abs=1e-4),
        pytest.approx(0.0926, abs=1e-4),
    )
    assert not [r for r in steady.reasons if "not steady" in r]


def test_candidate_with_a_request_mix_uses_the_picked_bucket_set() -> None:
    # GIVEN the README's mlp mix: eager 1,143.7 µs per request, buckets 2,8 174.2 µs
    candidate, rows = measured_candidate("tiny_mlp")
    candidate["recommendation"] = {
        "chosen": {
            "buckets": [2, 8],
            "expected_latency_ns": 174_200,
            "fallback_share": 0.02,
            "padding_share": 0.40,
            "graph_memory_bytes": 4 * 2**20,
        },
        "candidates": [
            {
                "buckets": [],
                "expected_latency_ns": 1_143_700,
                "fallback_share": 1.0,
                "padding_share": None,
                "graph_memory_bytes": 0,
            }
        ],
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
    # As the collector writes it: captured and replayed, outputs off (status "incorrect").
    rows[1].update(status="incorrect", max_abs_error=7.0625)
    decision = decide_candidate(candidate, rows)
    assert decision.choice == "do not enable"
    (reason,) = decision.reasons
    assert reason.startswith("replayed outputs differ from eager (bucket 8, max |error| 7.06)")
    assert "capture failed" not in reason
    results = {
        "candidates": [{"name": "x", "status": "cuda_unavailable", "buckets": [1]}],
        "rows": [],
    }
    (unmeasured,) = decide_candidates(results)
    assert unmeasured.choice == "undecided"


def test_a_step_that_changes_its_own_state_is_decided_on_its_timings() -> None:
    # GIVEN tiny_mlp's measurements, where two eager calls on the same inputs differed (as
    # a training step's do: its parameters move): the collector did not check the replay
    candidate, rows = measured_candidate("tiny_mlp")
    rows[0].update(repeatable=False, repeat_max_abs_error=0.0123)
    rows[1].update(correct=None)
    decision = decide_candidate(candidate, rows)
    # THEN enabled on its saving, saying that nothing vouched for its outputs
    assert decision.choice == "enable"
    assert decision.saving_us.value == pytest.approx(1_287.491)
    assert decision.reasons[-1] == (
        "outputs not checked: two eager calls on the same inputs differ (max |error| 0.0123), "
        "so the step changes its own state (parameters, buffers, optimizer moments) or runs "
        "nondeterministic kernels; compare the replay with eager yourself"
    )
    rows[0].update(repeatable=True, repeat_max_abs_error=0.0)
    assert not any("not checked" in r for r in decide_candidate(candidate, rows).reasons)


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
        app,
        ["analyze", str(sample_file("mixed.eager.json.gz")), "--json", str(out)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    block = result.stdout[result.stdout.index("Decision — enable CUDA graphs?") :].splitlines()
    assert "  attention: enable" in block
    assert "  mlp: do not enable" in block
    assert block[-1].startswith("  all: capture cost and graph memory: unknown from a trace")
    regions = {r["name"]: r for r in json.loads(out.read_text())["regions"]}
    decision = regions["attention"]["decision"]
    assert decision["choice"] == "enable"
    assert decision["saving_frac"]["source"] == "estimated"
    assert decision["capture_ms"] == {"value": None, "source": "unknown"}


def test_reports_give_the_item_check_its_decision(tmp_path: Path) -> None:
    # the .item() check of host_sync saves 10.7 µs, above one graph launch
    # (test_the_item_check_saves_more_than_a_graph_launch): every report says so
    import csv

    from typer.testing import CliRunner

    from traceinspect.cli import app

    out, tables = tmp_path / "r.json", tmp_path / "csv"
    result = CliRunner().invoke(
        app,
        [
            "analyze",
            str(sample_file("host_sync.eager.json.gz")),
            "--json",
            str(out),
            "--csv",
            str(tables),
        ],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    block = result.stdout[result.stdout.index("Decision — enable CUDA graphs?") :].splitlines()
    at = block.index("  check: enable after changes")
    assert block[at + 1].startswith("    replay would save 12.9 µs per occurrence (43%")
    assert "    capture needs changes first: trailing_sync" in block[at + 2 : at + 4]
    regions = {r["name"]: r for r in json.loads(out.read_text())["regions"]}
    assert regions["check"]["decision"]["choice"] == "enable after changes"
    assert regions["prepare"]["decision"]["choice"] == "enable"
    with (tables / "regions.csv").open(newline="") as f:
        rows = {row["name"]: row for row in csv.DictReader(f)}
    assert rows["check"]["decision"] == "enable after changes"
    assert rows["check"]["decision_reason"].startswith(
        "enable after changes: replay would save 12.9 µs per occurrence"
    )
