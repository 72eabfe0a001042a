"""The diagnosis on real traces: the project's H200 samples (verdicts checked against the
replay savings measured without a profiler, sample_traces/latencies.json) and corpus traces
from other projects (skipped where ../shared/corpus is absent)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from conftest import corpus_file, sample_file

from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.result import TraceAnalysis
from traceinspect.parse import load_trace
from traceinspect.report.json_report import report_data

#: Measured saving (latencies.json, H200, unprofiled p50) at or above which a step must be
#: launch-bound, and below which it must be compute-bound.
LAUNCH_BOUND_SAVING_PCT = 20.0
COMPUTE_BOUND_SAVING_PCT = 5.0


@cache
def sample(workload: str) -> TraceAnalysis:
    return diagnose(load_trace(sample_file(f"{workload}.eager.json.gz")))


@cache
def sample_report(workload: str) -> dict[str, Any]:
    return report_data(sample(workload))


@cache
def corpus_analysis(name: str) -> TraceAnalysis:
    """A corpus trace's analysis, made once for the tests of this file that read it."""
    return diagnose(load_trace(corpus_file(name)))


@cache
def corpus_report(name: str) -> dict[str, Any]:
    return report_data(corpus_analysis(name))


def regions(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in report["regions"]}


def measured_savings() -> dict[str, float]:
    data = json.loads(sample_file("latencies.json").read_text())
    return {name: w["saving_pct"] for name, w in data["workloads"].items()}


def test_step_verdicts_agree_with_measured_replay_savings() -> None:
    savings = measured_savings()
    # tiny_mlp 86.2 %, decode_step 86.9, convnet_b1 78.8, host_sync 58.6, mixed 24.3;
    # convnet_b64 2.3, big_gemm -1.7; two_streams 12.5 in between.
    assert len(savings) == 8
    checked = 0
    for workload, saving in savings.items():
        verdict = regions(sample_report(workload))["step"]["verdict"]
        if saving >= LAUNCH_BOUND_SAVING_PCT:
            assert verdict == "launch-bound", (workload, saving)
            checked += 1
        elif saving < COMPUTE_BOUND_SAVING_PCT:
            assert verdict == "compute-bound", (workload, saving)
            checked += 1
        else:
            # two_streams: the replay overlaps its branches more than eager did (12.5 %);
            # simulated without the profiler its GPU is busy 9x % of the window.
            assert verdict in ("mixed", "compute-bound"), (workload, saving)
    assert checked == 7


def test_mixed_regions_split_launch_bound_attention_from_compute_bound_mlp() -> None:
    by_name = regions(sample_report("mixed"))
    assert [r["name"] for r in sample_report("mixed")["regions"]] == [
        "ProfilerStep",
        "step",
        "attention",
        "mlp",
    ]
    assert [r["depth"] for r in sample_report("mixed")["regions"]] == [0, 1, 2, 2]
    attention, mlp = by_name["attention"], by_name["mlp"]
    assert (attention["verdict"], attention["kernels"]) == ("launch-bound", 66)
    assert (mlp["verdict"], mlp["kernels"]) == ("compute-bound", 7)
    # attention: 113 µs of GPU work spread over a 1.38 ms window, the rest waiting on launches
    assert attention["gpu_busy_us"] == pytest.approx(113.186, abs=0.01)
    assert attention["idle_us"]["host_launch"] == pytest.approx(1267.26, abs=0.01)
    assert mlp["gpu_busy_share"] == pytest.approx(0.984, abs=0.001)


def test_tiny_mlp_step_numbers() -> None:
    step = regions(sample_report("tiny_mlp"))["step"]
    assert step["occurrences"] == 5
    assert step["kernels"] == 96  # 48 x (addmm + relu)
    assert step["gpu_busy_us"] == pytest.approx(144.699, abs=0.01)
    assert step["window_us"] == pytest.approx(3564.179, abs=0.01)
    assert step["idle_us"] == {
        "host_launch": pytest.approx(3418.355, abs=0.01),
        "sync": 0.0,
        "copy": 0.0,
        "dependency": 0.0,
        "other": 0.0,
    }
    assert step["launch"]["median_queue_depth"] == 0.0
    assert step["capture"] == {"capturable": True, "verdict": "capturable as-is", "blockers": []}
    assert step["estimate"]["saving_frac"] > 0.5


def test_host_sync_step_is_not_capturable_and_names_the_item() -> None:
    by_name = regions(sample_report("host_sync"))
    step = by_name["step"]
    assert step["capture"]["capturable"] is False
    assert step["capture"]["verdict"] == "not capturable"
    (blocker,) = step["capture"]["blockers"]
    assert (blocker["kind"], blocker["severity"], blocker["count"]) == ("host_sync", "breaks", 5)
    assert blocker["example"]["op"] == "aten::item"
    assert blocker["example"]["region"] == "check"
    assert "aten::item" in blocker["what"]
    # The GPU drained while the host waited: 82.5 µs of sync gaps per step.
    assert step["idle_us"]["sync"] == pytest.approx(82.527, abs=0.01)
    # Split at the sync, both halves capture as they are.
    assert by_name["prepare"]["capture"]["verdict"] == "capturable as-is"
    assert by_name["refine"]["capture"]["verdict"] == "capturable as-is"


def test_graphed_samples_are_already_graphed() -> None:
    report = report_data(diagnose(load_trace(sample_file("tiny_mlp.graphed.json.gz"))))
    step = regions(report)["step"]
    assert step["verdict"] == "already-graphed"
    assert step["graph_share"] == pytest.approx(96 / 97, abs=1e-4)  # + the input copy
    assert step["estimate"] is None
    assert step["capture"]["verdict"] == "already graphed"


def test_json_contract_keys_and_values() -> None:
    report = json.loads(json.dumps(sample_report("decode_step")))
    assert report["schema_version"] == 1
    assert report["trace"]["format"] == "kineto"
    assert report["trace"]["devices"][0]["name"] == "NVIDIA H200"
    assert isinstance(report["health"], list)
    attn = regions(report)["attn"]
    assert attn["source"] == "record_function"
    assert attn["depth"] == 2
    assert attn["occurrences"] == 40  # 8 layers x 5 steps
    for key in ("wall_us", "gpu_busy_us", "kernels", "verdict", "estimate", "capture"):
        assert attn[key] is not None, key
    assert set(attn["idle_us"]) == {"host_launch", "sync", "copy", "dependency", "other"}
    assert set(attn["capture"]) >= {"capturable", "blockers"}
    assert set(attn["estimate"]) >= {
        "graphed_us",
        "low_us",
        "high_us",
        "saving_us",
        "saving_frac",
        "saving_low_frac",
        "saving_high_frac",
    }
    est = attn["estimate"]
    assert est["saving_low_frac"] <= est["saving_frac"] <= est["saving_high_frac"]
    assert attn["verdict"] == "launch-bound"
    # the verdict reads the simulated unprofiled run; the profiled shares stay as evidence
    # (without the profiler's inflation the same kernels fill more of a shorter window)
    unprofiled = est["unprofiled"]
    assert attn["gpu_busy_share"] < unprofiled["busy_share"] < 0.5
    assert unprofiled["window_us"] < attn["window_us"]
    assert attn["evidence"][0].startswith(
        f"without the profiler (simulated): GPU busy {unprofiled['busy_share']:.0%} of its"
    )
    assert attn["evidence"][1].startswith("profiled trace: GPU busy 8% of its")


# -- corpus ---------------------------------------------------------------------------------


@pytest.mark.corpus
def test_event_sync_trace_is_sync_bound_with_the_is_nonzero_named() -> None:
    path = corpus_file("HolisticTraceAnalysis__cuda_event_sync__event_sync_trace.json.gz")
    (step,) = report_data(diagnose(load_trace(path)))["regions"]
    assert (step["name"], step["verdict"]) == ("ProfilerStep", "sync-bound")
    # 263 µs window: 100 µs blocked in syncs, 78 µs waiting on launches, 34 µs on a copy
    assert step["idle_us"]["sync"] == 100.0
    assert step["idle_us"]["host_launch"] == 78.0
    assert step["idle_us"]["copy"] == 34.0
    first = step["capture"]["blockers"][0]
    assert (first["kind"], first["example"]["op"]) == ("host_sync", "aten::is_nonzero")


@pytest.mark.corpus
def test_backward_kernels_from_the_autograd_thread_join_the_backward_region() -> None:
    path = corpus_file("HolisticTraceAnalysis__nccl_data.json.gz")
    backward = regions(report_data(diagnose(load_trace(path))))["## backward ##"]
    assert backward["activities"] == 797
    assert [b["kind"] for b in backward["capture"]["blockers"]] == ["cpu_work", "collective"]


@pytest.mark.corpus
def test_vllm_graph_replay_is_already_graphed() -> None:
    path = corpus_file("TraceLens__vllm_decode_full__graph_execution.json.gz")
    (region,) = report_data(diagnose(load_trace(path)))["regions"]
    assert region["verdict"] == "already-graphed"
    assert region["kernels"] == 425


@pytest.mark.corpus
def test_cpu_only_trace_has_no_gpu_work_and_says_so() -> None:
    path = corpus_file("HolisticTraceAnalysis__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
    report = report_data(diagnose(load_trace(path)))
    assert {r["verdict"] for r in report["regions"]} == {"idle"}
    assert {r["capture"]["verdict"] for r in report["regions"]} == {"no GPU work"}
    assert report["health"][0]["kind"] == "no_gpu_activity"


@pytest.mark.corpus
def test_cut_nsys_window_falls_back_to_the_whole_trace_and_warns() -> None:
    path = corpus_file("nsys-ai__h100_2gpu_1s.sqlite")
    report = report_data(diagnose(load_trace(path)))
    whole = report["regions"][0]
    assert (whole["name"], whole["source"], whole["activities"]) == (
        "whole trace",
        "whole_trace",
        4368,
    )
    # Its 2,276 activities without a launch record all ran before the first launched one of
    # their stream: the two processes' hosts were 424 ms ahead of their GPUs when the 1 s window
    # opened. They join no range; the reader's note says the window cut their launches.
    summary = report["summary"]
    assert (summary["without_launch_record"], summary["queued_before_recording"]) == (2276, 2276)
    assert summary["queued_before_recording_us"] == pytest.approx(423_852.667)
    kinds = [h["kind"] for h in report["health"]]
    assert "missing_launch_records" not in kinds
    assert "overlap_matched" not in kinds
    note = next(h["message"] for h in report["health"] if h["kind"] == "reader_note")
    assert "2276 of 4368 GPU activities have no launching API call" in note
    # AND its 204 FSDP ranges (102 names in each of two processes) are more regions than are
    # analyzed: the warning says how many are left out, and how much of their time
    # (25 of them launched only work the GPU ran after the window closed: left out, and the
    # next ones by time analyzed in their place)
    capped = [h["message"] for h in report["health"] if h["kind"] == "regions_capped"]
    assert capped == [
        "204 annotated regions: the 40 with the most time are analyzed, the other 139 (37% of"
        " the regions' total time) left out, and 25 whose GPU work the recording missed"
        " (recording_ended)"
    ]
    assert sum(r["source"] == "nvtx" for r in report["regions"]) == 40


@pytest.mark.corpus
def test_alexnet_benchmark_reports_allocations_and_pageable_copies() -> None:
    path = corpus_file("HolisticTraceAnalysis__benchmark_result_2869224_1695835535_trace.json.gz")
    outer = report_data(diagnose(load_trace(path)))["regions"][0]
    kinds = {(b["kind"], b["example"]["op"]): b["count"] for b in outer["capture"]["blockers"]}
    assert kinds[("allocation", "cudaMalloc")] == 24
    assert kinds[("pageable_copy", "aten::to")] == 16
    assert kinds[("host_sync", "aten::to")] == 16


@cache
def nsys_sample(name: str) -> dict[str, Any]:
    return report_data(diagnose(load_trace(sample_file(f"nsys/{name}.sqlite.gz"))))


def test_nsys_samples_agree_with_the_kineto_verdicts() -> None:
    # Nsight Systems runs of the same workloads, NVTX `step` ranges, no torch.profiler.
    assert regions(nsys_sample("tiny_mlp.eager"))["step"]["verdict"] == "launch-bound"
    assert regions(nsys_sample("big_gemm.eager"))["step"]["verdict"] == "compute-bound"
    mixed = regions(nsys_sample("mixed.eager"))
    assert (mixed["step"]["verdict"], mixed["step"]["source"]) == ("launch-bound", "nvtx")
    assert mixed["attention"]["verdict"] == "launch-bound"
    assert mixed["mlp"]["verdict"] == "compute-bound"
    assert regions(nsys_sample("mixed.graphed.node"))["step"]["verdict"] == "already-graphed"


def test_nsys_host_sync_names_the_sync_call_inside_check() -> None:
    # No framework operators in an nsys export: the blocker is the API call, in `check`.
    step = regions(nsys_sample("host_sync.eager"))["step"]
    assert step["capture"]["verdict"] == "not capturable"
    found = {b["kind"]: b for b in step["capture"]["blockers"]}
    assert found["host_sync"]["example"]["op"] == "cudaStreamSynchronize"
    assert found["host_sync"]["example"]["region"] == "check"
    assert found["host_sync"]["count"] == 5
    assert found["device_to_host_copy"]["example"]["api"] == "cudaMemcpyAsync"


def test_nsys_graph_level_trace_warns_that_nodes_are_hidden() -> None:
    health = [h["kind"] for h in nsys_sample("tiny_mlp.graphed.graph")["health"]]
    assert "graph_nodes_hidden" in health


@pytest.mark.parametrize(
    "name",
    [
        "HolisticTraceAnalysis__benchmark_result_2869224_1695835535_trace.json.gz",
        "HolisticTraceAnalysis__cuda_event_sync__event_sync_trace.json.gz",
        "HolisticTraceAnalysis__inference_rank_1.json.gz",
        "HolisticTraceAnalysis__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "HolisticTraceAnalysis__nccl_data.json.gz",
        "HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz",
        "HolisticTraceAnalysis__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        "HolisticTraceAnalysis__trace_diff__control.json.gz",
        "HolisticTraceAnalysis__triton_example.json.gz",
        "TraceLens__vllm_decode_full__graph_execution.json.gz",
        "kineto__tb_plugin_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
        "nsys-ai__h100_2gpu_1s.sqlite",
    ],
)
def test_every_regions_estimate_runs_on_corpus_traces(name: str) -> None:
    # A failed estimate is reported as a health warning, not raised: a region's estimate
    # that raised on a real trace (a wait on a thread that recorded no event, indexed into
    # its empty records) left the 200 MB eight-rank trace's regions without an estimate and
    # turned a verdict; every corpus trace with GPU work estimates every region.
    result = corpus_analysis(name)
    failed = [w.message for w in result.warnings if w.kind == "estimate_failed"]
    assert failed == []


@pytest.mark.corpus
def test_a_training_loop_whose_host_runs_ahead_is_paced_by_its_gpu() -> None:
    """HTA's DDP training rank (V100, ResNet-style, 5 profiled steps, no synchronize between
    them): the host runs 77 ms ahead of the GPU, its launch queue full (median depth 1,011),
    and the GPU is busy 99 % of every step. Simulated as a synchronized step, each step's
    host-bound forward could not overlap the previous step's backward: 110.2 ms eager, 14 %
    saved, `mixed`, and the forward 34 % saved and `launch-bound`. Read as the loop it is,
    the four steps queued behind their predecessor take the GPU's traced pace: 95.7 ms (the
    step's GPU window 95.66 ms), replay saves under 1 %, every region `compute-bound`."""
    report = corpus_report("HolisticTraceAnalysis__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
    by_name = regions(report)
    step = by_name["ProfilerStep"]
    assert step["launch"]["median_queue_depth"] == 1011
    assert step["verdict"] == "compute-bound"
    assert step["estimate"]["eager_us"] == pytest.approx(95_667.7, abs=0.1)
    assert step["window_us"] == pytest.approx(95_663, abs=1)
    assert step["estimate"]["saving_frac"] == pytest.approx(0.0058, abs=1e-4)
    # the eager time is the GPU's, as traced: the narrower band of an undeflated trace
    assert (step["estimate"]["saving_low_frac"], step["estimate"]["saving_high_frac"]) == (
        pytest.approx(-0.244, abs=1e-3),
        pytest.approx(0.184, abs=1e-3),
    )
    assert (
        "host ahead of the GPU in 4 of 5 occurrences (queued behind earlier GPU work, no sync "
        "between them): their eager time is the longer of the host's and the GPU's, at the "
        "GPU's traced pace"
    ) in step["estimate"]["notes"]
    # the forward's host (38.4 ms profiled, 32.0 deflated) is a little longer than its GPU
    # work (30.5 ms): the host paces it, by 4.6 % of its window
    forward = by_name["## forward ##"]
    assert forward["verdict"] == "compute-bound"
    assert forward["estimate"]["eager_us"] == pytest.approx(32_041.8, abs=0.1)
    assert forward["estimate"]["unprofiled"]["idle_share"]["host_launch"] == pytest.approx(
        0.0458, abs=1e-4
    )
    for name in ("## backward ##", "## optimizer ##"):
        assert by_name[name]["verdict"] == "compute-bound"
        assert abs(by_name[name]["estimate"]["saving_frac"]) < 0.01


def test_a_loop_that_synchronizes_each_step_is_simulated_synchronized() -> None:
    # GIVEN the bundled H200 sample, whose steps end with a synchronize
    report = sample_report("mixed")
    # THEN no occurrence is read as queued behind its predecessor: the eager times are the
    # synchronized simulation's (the step 2,833 µs, as the README shows it)
    for region in report["regions"]:
        notes = (region.get("estimate") or {}).get("notes", [])
        assert not any(note.startswith("host ahead of the GPU") for note in notes), region["name"]
    assert regions(report)["step"]["estimate"]["eager_us"] == pytest.approx(2_833, abs=1)


@pytest.mark.corpus
def test_an_idle_region_on_host_work_says_what_its_saving_assumes() -> None:
    """TorchRec's training rank (HTA's negative-queue trace, A100): its NE metric update
    launches 248 kernels of about 4 µs between host gaps of its own, 75 % of its simulated
    17.6 ms window in gaps over 200 µs. The verdict reads that work as staying (`idle`);
    the prediction has replay skip it (94 % saved), as replay does skip the Python that drives
    kernels. The two readings must be said together: the range reaches down to the saving
    with that work kept (19 %), the evidence says which is which, the decision says to
    measure."""
    report = corpus_report(
        "HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz"
    )
    metric = regions(report)["## NEMetric:update ##"]
    assert metric["verdict"] == "idle"
    est = metric["estimate"]
    assert est["unprofiled"]["long_host_share"] == pytest.approx(0.749, abs=1e-3)
    assert est["saving_frac"] == pytest.approx(0.9368, abs=1e-4)
    # the kept work: 17,710 µs eager - 1,119 µs graphed - 75 % of a 17,603 µs window
    assert est["saving_low_frac"] == pytest.approx(0.1923, abs=1e-4)
    assert est["saving_high_frac"] == pytest.approx(0.959, abs=1e-3)
    assert metric["evidence"][0].startswith(
        "the GPU idles on the host's own work (75% of the simulated window in host gaps over"
        " 200 µs), yet replay would save 94%: so much if replay may skip that work (code that"
        " only drives these kernels), about 19% if the step needs what it computes"
    )
    assert metric["decision"]["reasons"][1].startswith(
        "its GPU idles on the host's own work between launches: the saving holds if replay"
    )
    # AND a launch-bound region with long host gaps of its own keeps its range (the verdict
    # reads its gaps as launches): the metric updates beside it
    ctr = regions(report)["## CTRMetric:update ##"]
    assert ctr["verdict"] == "launch-bound"
    assert not any(n.startswith("saving range down to") for n in ctr["estimate"]["notes"])


@pytest.mark.corpus
def test_the_profiler_step_the_profiler_stopped_in_is_left_out() -> None:
    """HTA's MI250 toy training loop: `prof.step()` after the second step opened a third
    ProfilerStep that the profiler's exit closed 49 µs later with no GPU work in it. Counted
    as a step, its empty kernel sequence made the step `not capturable` (the sequence
    "changes" at kernel 1) and its shapes "change"; left out, the step holds what ran."""
    trace = corpus_file("HolisticTraceAnalysis__mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    result = diagnose(load_trace(trace))
    step = result.region("ProfilerStep")
    assert step.region.occurrences == 1
    assert step.region.cut_last_ns == 49_073
    assert step.activities == 16  # 14 kernels and 2 copies, all in the step that ran
    report = regions(report_data(result))["ProfilerStep"]
    assert report["capture"]["verdict"] == "capturable as-is"
    kinds = {b["kind"] for b in report["capture"]["blockers"]}
    assert kinds == {"cpu_work", "host_to_device_copy"}
    cut = [w.message for w in result.warnings if w.kind == "last_step_cut"]
    assert cut == [
        "the last ProfilerStep (49.1 µs) holds no GPU work, where the others do: the profiler "
        "stopped in it; left out"
    ]


def test_a_last_profiler_step_with_gpu_work_is_kept() -> None:
    # The bundled H200 sample's five ProfilerSteps each ran the step: none is left out.
    result = diagnose(load_trace(sample_file("mixed.eager.json.gz")))
    step = result.region("ProfilerStep")
    assert step.region.cut_last_ns == 0
    assert all(len(rows) for rows in step.region.rows)
    assert not [w for w in result.warnings if w.kind == "last_step_cut"]


@pytest.mark.corpus
def test_a_sequence_that_stops_short_says_so() -> None:
    # HTA's A100 control trace: the fourth `## forward:bottom_mlp ##` records fewer shaped
    # ops than the first (it read "differs at op 107: (end)")
    result = diagnose(load_trace(corpus_file("HolisticTraceAnalysis__trace_diff__control.json.gz")))
    blockers = {b.kind: b for b in result.region("## forward:bottom_mlp ##").capture.blockers}
    assert blockers["shapes_change"].what == (
        "2 different input-shape signatures over 6 occurrences; occurrence 4 ends after 106 "
        "ops with shapes, where occurrence 1 goes on"
    )


@pytest.mark.corpus
def test_a_range_wider_than_the_eager_time_says_why() -> None:
    """TorchRec's forward all-to-all (HTA's negative-queue trace): 10 occurrences, most
    around 110 µs, its NCCL kernel waiting on the other ranks for up to 2 ms in some. The
    saving's range reaches -833 % — a loss no single occurrence could show — and the
    decision says where it comes from."""
    report = corpus_report(
        "HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz"
    )
    (region,) = [r for r in report["regions"] if r["name"] == "## alltoall_fwd_single ##"]
    assert region["verdict"] == "communication-bound"
    assert region["estimate"]["saving_low_frac"] == pytest.approx(-8.3299, abs=1e-4)
    assert (
        "the range is that wide because its occurrences differ (its collectives wait on other "
        "ranks): replay predicted at 308 µs for the median one, up to 2,038 µs, against an "
        "eager time of 336 µs"
    ) in region["decision"]["reasons"]
    # AND what each occurrence would save against its own simulated eager run: most do
    # (8 of 10), so the decision stands on the median
    assert region["estimate"]["occurrence_saving_frac"] == {
        "p10": 0.035,
        "median": 0.0901,
        "p90": 0.1999,
    }
    assert (
        "each occurrence against its own eager run: replay saves 4% to 20% (10th to 90th "
        "percentile), at least 5% on 8 of 10"
    ) in region["decision"]["reasons"]
    assert region["decision"]["choice"] == "enable"
    # AND where most occurrences would not save 5 %, the median's 10 % does not decide:
    # the recat all-to-all's occurrences save -10 % to 43 %, 4 of 10 at least 5 %
    (recat,) = [r for r in report["regions"] if r["name"] == "## all2all_data:recat_values ##"]
    assert recat["estimate"]["saving_frac"] == pytest.approx(0.1012, abs=1e-4)
    assert recat["estimate"]["occurrence_saving_frac"]["median"] == pytest.approx(-0.0456)
    assert recat["decision"]["choice"] == "undecided"  # was "enable after changes"
    assert (
        "undecided: most of its occurrences (6 of 10) would save less than 5% each; measure "
        "both modes before enabling (`traceinspect profile`, or pass --eager-us)"
    ) in recat["decision"]["reasons"]
    # a range that stays above -100 % says nothing more
    narrow = [
        r
        for r in report["regions"]
        if r["estimate"] and -1.0 <= r["estimate"]["saving_low_frac"] < 0.05
    ]
    assert narrow
    assert not any("that wide" in reason for r in narrow for reason in r["decision"]["reasons"])


@pytest.mark.corpus
def test_a_step_that_fetches_its_batch_keeps_the_fetch_on_replay() -> None:
    """The 2021 ResNet-50 training trace (V100, ``num_workers=0``): each ProfilerStep opens
    with a 63-73 ms DataLoader fetch (``enumerate(DataLoader)#…__next__``) before its first
    kernel. Replay skipped it, reading a 31 % saving into a step the GPU keeps busy 100 % of
    its simulated window (`launch-bound`). No graph captures a fetch: it stays, 36.0 ms at the
    unprofiled host's pace, and the step reads compute-bound, 7 %."""
    report = corpus_report(
        "kineto__tb_plugin_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"
    )
    (step,) = [r for r in report["regions"] if r["name"] == "ProfilerStep"]
    est = step["estimate"]
    assert step["verdict"] == "compute-bound"
    assert est["parts"]["data_loading"] == pytest.approx(35_972.673, abs=0.01)
    assert est["graphed_us"] == pytest.approx(137_218.937, abs=0.01)
    assert est["saving_frac"] == pytest.approx(0.0655, abs=1e-4)
    assert (
        "a DataLoader fetch inside the region (36.0 ms per occurrence, at the unprofiled "
        "host's pace) stays on replay: no graph captures it"
    ) in est["notes"]
