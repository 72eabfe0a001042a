"""The estimator on the H200 validation set (``sample_traces/validation``: 17 workloads and 6
``--mark`` runs recorded by ``traceinspect profile --repeats 5``, eager and graphed timed in
one process), and on the two-process Nsight Systems exports.

Measured: the pooled unprofiled host p50 of the graphed step (input copy + replay +
synchronize) and of the eager step. Predicted from the eager trace alone, with the built-in
``nvidia-h200`` profile and no ``--eager-us``. Values as of the frozen estimator.
"""

from __future__ import annotations

import sys
from functools import cache

import pytest
from conftest import ROOT, corpus_file, sample_file

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    Workload,
    all_workloads,
    evaluate,
    prepare,
)

from traceinspect.analysis.diagnose import diagnose  # noqa: E402
from traceinspect.analysis.verdict import (  # noqa: E402
    COMPUTE_BOUND_MAX_SAVING,
    LAUNCH_BOUND_MIN_SAVING,
)
from traceinspect.calibration import calibration_for  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

#: workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "adam_update": (3882.3, 3623.3, 0.8367, 0.8509),  # 2,101 nodes: −6.7 %
    "bottleneck_b32": (2539.3, 2606.4, 0.5126, 0.5389),  # +2.6 %
    "compiled_mlp": (83.7, 73.2, 0.8363, 0.8726),  # 16 Triton/cuBLAS nodes: −12.6 %
    "decoder_b1": (830.7, 769.2, 0.8294, 0.8441),  # −7.4 %
    "decoder_b16": (1122.2, 910.1, 0.8802, 0.9219),  # another lease: −18.9 %
    "embbag_recsys": (253.4, 218.5, 0.6938, 0.7689),  # −13.8 %
    "encoder_b64": (1807.7, 1809.2, 0.0418, 0.0065),  # compute-bound: +0.1 %
    "encoder_b8": (401.5, 408.4, 0.7073, 0.7263),  # +1.7 %
    "h2d_inputs": (680.3, 672.7, 0.0146, 0.0046),  # −1.1 %
    "lstm_cell_loop": (715.5, 712.0, 0.7076, 0.7195),  # −0.5 %
    "mlp_medium_bf16": (274.6, 267.8, 0.7116, 0.7439),  # −2.5 %
    "mlp_narrow_fp32": (914.6, 897.4, 0.7478, 0.7291),  # −1.9 %
    "mobilenet_b1": (665.0, 670.9, 0.8545, 0.8649),  # +0.9 %
    "mobilenet_b64": (2504.8, 2549.1, 0.4328, 0.4234),  # +1.8 %
    "mobilenet_b8": (932.3, 925.1, 0.7940, 0.7928),  # −0.8 %
    "moe_routing": (1250.3, 1257.4, 0.0982, 0.0539),  # +0.6 %
    # re-recorded with the profiler's stream-wait events (event ids): −5.9 %
    "multistream_events": (97.0, 91.3, 0.8473, 0.8700),
    # the first recording, without them: branches serialized, +39.8 %
    "multistream_events_nosync": (96.2, 134.5, 0.8382, 0.8025),
    # --mark runs of the unannotated scripts: never seen by the fit
    "unannotated/conv_loop": (4606.9, 4638.6, 0.0256, 0.0095),  # +0.7 %
    "unannotated/decode_gpt": (448.3, 416.3, 0.8150, 0.8433),  # −7.1 %
    "unannotated/encoder_infer": (486.0, 487.6, 0.7330, 0.7583),  # +0.3 %
    "unannotated/lstm_loop": (555.4, 560.6, 0.7551, 0.7603),  # +0.9 %
    "unannotated/mlp_train": (1028.0, 1013.5, 0.6168, 0.6320),  # −1.4 %
    "unannotated/optimizer_loop": (3958.6, 3753.7, 0.8282, 0.8467),  # −5.2 %
}

#: Misses beyond ±10 %, with their bound and why:
#: - multistream_events_nosync: a Kineto trace recorded without the profiler's sync events
#:   carries no event ids; the second branch's stream-wait is matched to the first branch's
#:   record, so the three branches are predicted one after the other (the replay overlaps
#:   them). With them (``multistream_events``, how ``traceinspect profile`` records) the
#:   three waits on one event take one record: −5.9 %.
#: - decoder_b16: recorded on another lease, whose replays cost ~1.2 µs per node beyond the
#:   kernels (0.5 µs on the lease of the others); inside the range.
#: - embbag_recsys, compiled_mlp: small graphs (40 and 16 nodes) whose fixed costs (input
#:   copies of several inputs, replay latency) the model takes as one copy; inside the range.
MISSES = {
    "multistream_events_nosync": 0.45,
    "decoder_b16": 0.20,
    "embbag_recsys": 0.15,
    "compiled_mlp": 0.15,
}
#: The measured graphed time lies outside [low, high] only for the serialized branches.
OUTSIDE_RANGE = {"multistream_events_nosync"}


@cache
def validation_workloads() -> dict[str, Workload]:
    return {w.name: w for w in all_workloads() if w.group == "validation"}


@cache
def row(name: str) -> ValidationRow:
    prepared = prepare(validation_workloads()[name])
    return evaluate(prepared, calibration_for(prepared.timeline))


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
    errors = sorted(abs(r.error_frac) for r in rows)
    assert errors[len(errors) // 2] <= 0.05  # median
    assert sum(e <= 0.10 for e in errors) == 20  # of 24
    assert sum(r.graphed_inside for r in rows) == 23
    assert sum(abs(r.saving_error_points) <= 15 for r in rows) == 24


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
