"""The estimator on the H200 validation set (``sample_traces/validation``: 17 workloads and 6
``--mark`` runs recorded by ``traceinspect profile --repeats 5``, eager and graphed timed in
one process), and on the two-process Nsight Systems exports.

Measured: the unprofiled host p50 of the graphed step (input copy + replay + synchronize)
and of the eager step, in the least disturbed of the 5 timing rounds (these recordings
traced the candidate after round 1, which slowed the later rounds; see
``bench/validation_table.py``). Predicted from the eager trace alone, with the built-in
``nvidia-h200`` profile and no ``--eager-us``.

Every round, the least disturbed included, ran in the process that had just run the script
under the profiler, which leaves replays slower for the rest of its life (fresh-process
re-recordings of other workloads: 2-52 % faster, median 27 %); no fresh timing of these 24
exists. The model now predicts the clean replay (calibration timed before any profiler
session, 100 ns per node on top and at least 2 µs for a kernel after a memset node, both
fitted on the 64 replays timed in a fresh process, 5.57 µs per warm input copy), so the
prediction sits below the measurement on 20 of 24 (all but three compute-heavy steps and
the serialized branches), median error −4.6 %: within ±10 % on 16 (18 with 200 ns per node
and no copy transition, 20 with the calibration timed after a profiler session), inside the
range on 23 (also 23). The graphs of 2,101 and 2,201 nodes (adam_update, the optimizer loop)
lose 210-220 µs with the per-node extra halved and now miss: −14.3 and −13.6 % against their
profiled process. Nodes of several streams start as the device has room for them:
multistream_events' three branches, whose GEMMs each fill the device, run one after the
other, −3.5 % (−16.1 % when they were taken to overlap; timed again in a fresh process in
``streams_fit``, +5.9 %).
"""

from __future__ import annotations

import statistics
import sys
from functools import cache

import pytest
from conftest import ROOT, corpus_file, sample_file

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    Workload,
    all_workloads,
    built_in_row,
)

from traceinspect.analysis.diagnose import diagnose  # noqa: E402
from traceinspect.analysis.verdict import (  # noqa: E402
    COMPUTE_BOUND_MAX_SAVING,
    LAUNCH_BOUND_MIN_SAVING,
)
from traceinspect.parse import load_trace  # noqa: E402

#: workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "adam_update": (3850.4, 3304.0, 0.7737, 0.8084),  # 2,101 nodes: −14.2 %
    "bottleneck_b32": (2537.8, 2565.9, 0.4337, 0.3515),  # +1.1 %
    "compiled_mlp": (82.0, 66.3, 0.7343, 0.8005),  # 16 Triton/cuBLAS nodes: −19.1 %
    "decoder_b1": (827.9, 720.6, 0.7751, 0.7898),  # −13.0 %
    "decoder_b16": (1098.3, 864.6, 0.8451, 0.8545),  # another lease: −21.3 %
    "embbag_recsys": (252.3, 206.2, 0.5932, 0.6846),  # −18.3 %
    "encoder_b64": (1741.2, 1814.5, 0.0328, -0.0288),  # compute-bound: +4.2 %
    "encoder_b8": (400.7, 401.9, 0.6267, 0.6167),  # +0.3 %
    "h2d_inputs": (678.0, 660.7, 0.009, 0.0065),  # −2.6 %
    "lstm_cell_loop": (705.8, 681.5, 0.6428, 0.6301),  # −3.4 %
    "mlp_medium_bf16": (271.5, 255.0, 0.6004, 0.6395),  # −6.0 %
    "mlp_narrow_fp32": (909.2, 847.3, 0.6509, 0.6465),  # −6.8 %
    "mobilenet_b1": (659.7, 627.0, 0.7957, 0.8210),  # −5.0 %
    "mobilenet_b64": (2499.7, 2501.2, 0.2636, 0.2044),  # +0.1 %
    "mobilenet_b8": (931.0, 880.7, 0.7156, 0.7276),  # −5.4 %
    "moe_routing": (1248.6, 1244.7, 0.0827, 0.0275),  # −0.3 %
    # re-recorded with the profiler's stream-wait events (event ids): three branches whose
    # GEMMs each fill the device (0.97 of it) and run one after the other, each starting in
    # the last 10 % of the one before and slowed beside it: +0.7 % (+0.9 % while its copy
    # was charged 9.2 µs, not its host's pace; −0.8 % while they did not slow each other;
    # −2.9 % before a light kernel beside another stream's was charged LIGHT_BESIDE_NS)
    "multistream_events": (95.8, 96.5, 0.8452, 0.7902),
    # the first recording, without them: branches serialized, +28.7 %
    "multistream_events_nosync": (94.9, 122.2, 0.803, 0.7286),
    # --mark runs of the unannotated scripts: never seen by the fit
    "unannotated/conv_loop": (4526.1, 4638.1, 0.0254, 0.0016),  # +2.5 %
    "unannotated/decode_gpt": (444.6, 390.5, 0.774, 0.7909),  # −12.2 %
    "unannotated/encoder_infer": (483.7, 482.5, 0.6727, 0.6613),  # −0.3 %
    "unannotated/lstm_loop": (554.9, 531.0, 0.7006, 0.6999),  # −4.3 %
    "unannotated/mlp_train": (1022.4, 1006.2, 0.5546, 0.4513),  # −1.6 %
    "unannotated/optimizer_loop": (3953.6, 3419.0, 0.7762, 0.8046),  # −13.5 %
}

#: Misses beyond ±10 %, with their bound and why:
#: - multistream_events_nosync: a Kineto trace recorded without the profiler's sync events
#:   carries no event ids; the second branch's stream-wait is matched to the first branch's
#:   record, so the three branches are predicted as one chain, each node waiting for the one
#:   before (the replay runs side by side what fits on the device and readies a node while
#:   another runs): +28.7 % (+32.6 % with the copies at the built-in 9.2 µs), above the
#:   measurement where all but a few compute-heavy steps are under it.
#: - compiled_mlp, embbag_recsys: small graphs (16 and 40 nodes, 82-252 µs) whose fixed
#:   costs (input copies, replay latency, completion) are a large share of the step and are
#:   what the profiled process inflated most; embbag_recsys is also fed two inputs, taken as
#:   one copy. −19.1 and −18.3 % (−17.3 and −17.0 % with the copies at the built-in 9.2 µs,
#:   not their hosts' pace; −10.8 and −13.4 % with the calibration timed after a profiler
#:   session).
#:   multistream_events (38 nodes, 95.8 µs) was the third such miss (−16.1 %) while its
#:   three branches were taken to overlap; scheduled for room on the device they run one
#:   after the other: +0.6 %.
#: - decoder_b16: recorded on another lease, whose replays measured ~0.7 µs per node more
#:   than the others' (as ``holdout2_rerun``'s did, which a fresh re-recording traced to its
#:   profiled process, not its machine): −21.3 % (−19.4 % with 200 ns per node), inside the
#:   range.
#: - adam_update, unannotated/optimizer_loop: 2,101 and 2,201 nodes, each charged 100 ns
#:   (fitted on fresh-process replays) where their profiled process replayed them slower:
#:   −14.2 and −13.5 % (−8.9 and −8.1 % with 200 ns), inside the range.
#: - decoder_b1, unannotated/decode_gpt: 284 and 132 nodes, −13.0 and −12.2 % (−10.1 and
#:   −10.3 % with 200 ns per node; −7.1 and −6.3 % before the clean calibration; decode_gpt
#:   −11.0 % while its KV-cache copy nodes were charged a 2 µs hand-off each), inside the
#:   range.
#: Each bound is the miss rounded up to the next point (compiled_mlp's 0.30 from before, kept;
#: the serialized branches +32.6 % since each input copy costs the built-in 9.2-9.9 µs).
MISSES = {
    "multistream_events_nosync": 0.33,
    "compiled_mlp": 0.30,
    "decoder_b16": 0.23,
    "embbag_recsys": 0.21,
    "adam_update": 0.15,
    "decoder_b1": 0.14,
    "unannotated/optimizer_loop": 0.14,
    "unannotated/decode_gpt": 0.14,
}
#: The measured graphed time lies outside [low, high] for the serialized branches only
#: (above it). multistream_events, outside while its branches were taken to overlap (95.8 µs
#: against 74.0-91.4 µs), is inside now that they wait for room on the device (83.9-112.5).
OUTSIDE_RANGE = {"multistream_events_nosync"}


@cache
def validation_workloads() -> dict[str, Workload]:
    return {w.name: w for w in all_workloads() if w.group == "validation"}


@cache
def row(name: str) -> ValidationRow:
    return built_in_row(validation_workloads()[name])


def test_every_recorded_workload_is_validated() -> None:
    assert set(validation_workloads()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_graphed_prediction_and_saving_without_eager_us(name: str) -> None:
    measured, predicted, saving_measured, saving_predicted = EXPECTED[name]
    r = row(name)
    assert r.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert r.predicted_us == pytest.approx(predicted, abs=0.5)
    assert abs(r.error_frac) <= MISSES.get(name, 0.10), f"{name}: {r.error_frac:+.1%}"
    assert r.graphed_inside != (name in OUTSIDE_RANGE)
    # the saving a user gets without --eager-us: within 15 points, inside its range
    assert r.saving_measured == pytest.approx(saving_measured, abs=1e-4)
    assert r.saving_predicted == pytest.approx(saving_predicted, abs=2e-3)
    assert abs(r.saving_error_points) <= 15
    assert r.saving_low <= r.saving_measured <= r.saving_high


def test_validation_summary() -> None:
    rows = [row(name) for name in EXPECTED]
    errors = [r.error_frac for r in rows]
    assert statistics.median(abs(e) for e in errors) == pytest.approx(0.0464, abs=0.001)
    assert sum(abs(e) <= 0.10 for e in errors) == 16  # of 24
    assert sum(r.graphed_inside for r in rows) == 23
    assert sum(abs(r.saving_error_points) <= 15 for r in rows) == 24
    # the clean prediction sits under the profiled process's measurement but for steps the
    # GPU bounds (the bottleneck and encoder at batch 32-64, the VGG loop) and the serialized
    # branches (and the three whose GEMMs start in each other's last 10 %, slowing each other),
    # (until their copies were charged at their hosts' pace, the multi-stream graph of
    # three branches too; and again, +0.7 %, since a light kernel beside another stream's is
    # charged LIGHT_BESIDE_NS)
    above = {name for name, e in zip(EXPECTED, errors, strict=True) if e >= 0}
    assert above == {
        "bottleneck_b32",
        "encoder_b64",
        "encoder_b8",
        "mobilenet_b64",
        "multistream_events",
        "multistream_events_nosync",
        "unannotated/conv_loop",
    }
    assert statistics.median(errors) == pytest.approx(-0.0388, abs=0.001)


@pytest.mark.parametrize("name", ["decoder_b1", "mobilenet_b64", "encoder_b64", "h2d_inputs"])
def test_verdict_agrees_with_the_predicted_saving(name: str) -> None:
    # GIVEN a workload's eager trace, WHEN diagnosed without --eager-us
    trace = validation_workloads()[name].trace
    analysis = diagnose(load_trace(trace))
    checked = 0
    for r in analysis.region_results:
        if r.estimate is None:
            continue
        checked += 1
        # THEN no launch-bound region saves under 10 %, no compute-bound one over 25 %
        frac = r.estimate.saving_frac
        assert not (r.verdict == "launch-bound" and frac < LAUNCH_BOUND_MIN_SAVING), r.name
        assert not (r.verdict == "compute-bound" and frac > COMPUTE_BOUND_MAX_SAVING), r.name
        assert r.estimate.saving_low_frac <= frac <= r.estimate.saving_high_frac
    assert checked >= 1
    step = analysis.region("step")
    assert step.verdict == {
        "decoder_b1": "launch-bound",  # replay saved 83 %
        "mobilenet_b64": "launch-bound",  # 43 %
        "encoder_b64": "compute-bound",  # 4 %
        "h2d_inputs": "compute-bound",  # 1.5 %
    }[name]


def test_verdicts_on_the_sample_steps_agree_with_their_savings() -> None:
    # every region of the eight H200 samples, all with an estimate
    contradictions = []
    for workload in (
        "tiny_mlp",
        "decode_step",
        "convnet_b1",
        "convnet_b64",
        "big_gemm",
        "mixed",
        "two_streams",
        "host_sync",
    ):
        analysis = diagnose(load_trace(sample_file(f"{workload}.eager.json.gz")))
        for r in analysis.region_results:
            if r.estimate is None:
                continue
            frac = r.estimate.saving_frac
            if (r.verdict == "launch-bound" and frac < LAUNCH_BOUND_MIN_SAVING) or (
                r.verdict == "compute-bound" and frac > COMPUTE_BOUND_MAX_SAVING
            ):
                contradictions.append((workload, r.name, r.verdict, frac))
    assert contradictions == []


# -- several processes ---------------------------------------------------------------------


def _within_reach(path: str) -> list[tuple[str, float, float]]:
    """Regions whose estimate (graphed or eager) exceeds 1.5x their own span (the larger of
    their median GPU window and host wall)."""
    analysis = diagnose(load_trace(path))
    out = []
    for r in analysis.region_results:
        if r.estimate is None:
            continue
        reach = max(r.window_ns, r.wall_ns)
        worst = max(r.estimate.graphed_ns, r.estimate.eager_ns)
        if worst > 1.5 * reach:
            out.append((r.name, worst, reach))
    return out


@pytest.mark.corpus
def test_two_gpu_nsight_export_estimates_stay_within_their_spans() -> None:
    # GIVEN 1 s of a 2 x H100 FSDP run (nsys, emit_nvtx; half the kernels lost their launch)
    path = str(corpus_file("nsys-ai__h100_2gpu_1s.sqlite"))
    # THEN every region's prediction and eager time stay within reach of its own span
    assert _within_reach(path) == []
    analysis = diagnose(load_trace(path))
    whole = analysis.region("whole trace")
    assert whole.estimate is not None
    # both ranks replay side by side: 964 ms for the 969 ms window, not the sum of both
    assert whole.estimate.ranks == 2
    assert whole.estimate.graphed_ns == pytest.approx(964_206_600, rel=1e-3)
    # a detected step whose kernels have no launch record: its host side starts with it
    step = analysis.region("step (detected)")
    assert step.estimate is not None
    assert step.estimate.eager_ns == pytest.approx(step.window_ns, rel=0.01)


def test_two_process_ddp_export_estimates_stay_within_their_spans() -> None:
    path = str(sample_file("nsys/ddp_gloo.sqlite.gz"))
    assert _within_reach(path) == []
    analysis = diagnose(load_trace(path))
    steps = [r for r in analysis.region_results if r.name == "train_step"]
    # one train_step region per process, each estimated on its own rank
    assert len(steps) == 2
    assert {int(r.region.pid[0]) for r in steps} == {695, 696}
    assert all(r.estimate is not None and r.estimate.ranks == 1 for r in steps)
