"""Third hold-out: six H200 workloads (``sample_traces/validation/holdout3_workloads/``)
recorded by ``traceinspect profile --repeats 5`` (every timing round before any trace) only
after the eager model's refit and the replay model were frozen.

Its rounds were timed in the process that had just run the script under the profiler with
Python stacks, which leaves replays slower for the rest of its life. On the same machine,
minutes later, the same graphs replayed by themselves in a fresh process
(``replay_under_profiler.py``, ``replay_under_profiler.holdout3.json``: no profiler had run
in it) took 669 µs (gru_b8), 608 (mlp_relu_b64), 629 (mobilenet_half_b4) and 121
(streams_pipeline) where the collector measured 943, 725, 839 and 152 µs; the six recorded
again with every round in a fresh process are ``holdout3_fresh/``. The model now predicts
the clean replay (calibration timed before any profiler session, 100 ns per node on top and
at least 2 µs for a kernel after a copy node, fitted on the 64 fresh-process replays,
``holdout3_fresh`` among them), so against the profiled process it misses ±10 % on five of
the six, all under (median −23.7 %), while against the fresh timings it comes within ±10 %
on five of six (not streams_pipeline, −11.8 %). streams_pipeline's two
streams, whose GEMMs each fill 0.97 of the device, now run one after the other in the
replay (they were taken to overlap: −29.9 % against the fresh timing then).
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import ROOT, SAMPLES, assert_row_matches, step_verdicts_agreeing_with_replay

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    validate_folder,
    validation_workloads,
)

HOLDOUT = SAMPLES / "validation" / "holdout3"

# workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "encoder_b16": (291.8, 277.4, 0.6153, 0.6093),  # −4.9 %
    "gru_b8": (942.6, 711.6, 0.6242, 0.5842),  # −24.5 %
    "mlp_relu_b64": (725.2, 569.8, 0.5099, 0.5740),  # −21.4 %
    "mobilenet_half_b4": (838.5, 610.9, 0.7659, 0.8350),  # −27.1 %
    "sgd_foreach": (118.6, 100.2, 0.8043, 0.8263),  # −15.5 %
    "streams_pipeline": (152.0, 116.7, 0.7084, 0.8187),  # −23.2 %
}
#: Against the profiled process's timing: five misses, all under.
GRAPHED_MISSES = {"gru_b8", "mlp_relu_b64", "mobilenet_half_b4", "sgd_foreach", "streams_pipeline"}
#: Measured above the range: gru_b8 (942.6 µs). sgd_foreach (118.6 µs) and streams_pipeline
#: (152.0 µs) were above it too until the range's high end charged each input copy the host
#: time a slow lease takes (1.9× the calibrated): 129.4 and 161.0 µs now.
OUTSIDE_RANGE = {"gru_b8"}
#: Savings without --eager-us beyond 15 points: none. streams_pipeline's was (+16.9 points)
#: while its two streams were taken to overlap; +11.0 now.
SAVING_MISSES: set[str] = set()


@pytest.fixture(scope="module")
def rows() -> dict[str, ValidationRow]:
    return validate_folder(HOLDOUT)


def test_every_holdout3_workload_is_checked(rows: dict[str, ValidationRow]) -> None:
    assert set(rows) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_holdout3_prediction(name: str, rows: dict[str, ValidationRow]) -> None:
    row = rows[name]
    assert_row_matches(row, EXPECTED[name])
    assert (abs(row.error_frac) <= 0.10) == (name not in GRAPHED_MISSES)
    assert (row.low_us <= row.graphed_measured_us <= row.high_us) == (name not in OUTSIDE_RANGE)
    assert (abs(row.saving_error_points) <= 15) == (name not in SAVING_MISSES)


def test_a_fresh_process_replays_the_same_graphs_near_the_prediction(
    rows: dict[str, ValidationRow],
) -> None:
    fresh = json.loads((SAMPLES / "validation" / "replay_under_profiler.holdout3.json").read_text())
    for name in ("gru_b8", "mlp_relu_b64", "mobilenet_half_b4", "streams_pipeline"):
        alone_us = fresh["workloads"][name]["unprofiled"]["host_p50_us"]
        row = rows[name]
        # the collector's process measured 20-41 % more than a fresh process on that machine
        assert 1.19 <= row.graphed_measured_us / alone_us <= 1.42
        # the prediction (which adds the input copies the bare replay leaves out) lies within
        # 10 % of the fresh process's replay on all four (gru_b8 +6.4 %, mlp_relu_b64 −6.3 %,
        # mobilenet_half_b4 −2.8 %), the two-stream pipeline included: 116.7 vs 121.1 µs,
        # −3.6 % (−2.7 % while its copy was charged 9.2 µs, not its host's pace), now that
        # its streams' GEMMs (0.97 of the device each) run one after the other but for a
        # one-wave GEMM's last 10 %, where the next starts, slowed beside it
        # (−23.0 % while they were taken to overlap, −3.4 % while they did not slow each other)
        error = row.predicted_us / alone_us - 1
        assert abs(error) <= 0.10, f"{name}: {error:+.1%}"
    streams = rows["streams_pipeline"].predicted_us
    alone = fresh["workloads"]["streams_pipeline"]["unprofiled"]["host_p50_us"]
    assert streams / alone - 1 == pytest.approx(-0.036, abs=0.005)


def test_every_step_verdict_agrees_with_what_replay_did() -> None:
    """The 65 H200 workloads of the README (fit set and the four hold-outs): each step's
    verdict agrees with the saving replay measurably brought, and no region's verdict
    contradicts its predicted saving."""
    from validation_table import Workload, all_workloads

    workloads: list[Workload] = list(all_workloads())
    for folder in ("holdout", "holdout2", "holdout2_rerun", "holdout3"):
        workloads += validation_workloads(SAMPLES / "validation" / folder)
    assert len(workloads) == 65
    assert step_verdicts_agreeing_with_replay(workloads) == {"launch-bound": 57, "compute-bound": 8}


#: The same six recorded again with ``--fresh-timing`` (record.sh FRESH_TIMING=1): measured
#: graphed time from a process that never ran a profiler. They were recorded with the model
#: frozen, but the per-node extra (100 ns) and the copy transition (2 µs) were fitted since
#: on the 64 fresh-process replays, these six among them: no longer a hold-out of the replay
#: model.
EXPECTED_FRESH = {
    "encoder_b16": (274.9, 278.0),  # +1.1 %
    "gru_b8": (688.8, 711.6),  # +3.3 %
    "mlp_relu_b64": (593.0, 568.3),  # −4.2 %
    "mobilenet_half_b4": (622.9, 618.7),  # −0.7 %
    "sgd_foreach": (101.3, 99.6),  # −1.7 %
    # −11.2 %, inside the range (100-164 µs): its two streams' GEMMs, 0.97 of the device
    # each, run one after the other (94.1 µs of kernels + 7.7 µs of node overhead), yet the
    # step measured 15.0 µs more than the prediction: 5.1 µs of it the 12.6 MB input copy,
    # charged as one small copy since this recording kept no copy sizes
    # (test_collect_profile), the rest not accounted for. −29.9 % and above the range while
    # the streams were taken to overlap; −16.2 % while the copy hid the replay's latency.
    "streams_pipeline": (134.5, 119.5),
}


def test_holdout3_timed_in_a_fresh_process() -> None:
    rows = validate_folder(SAMPLES / "validation" / "holdout3_fresh")
    assert set(rows) == set(EXPECTED_FRESH)
    for name, (measured, predicted) in EXPECTED_FRESH.items():
        row = rows[name]
        assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
        assert row.predicted_us == pytest.approx(predicted, abs=1.0)
        # every measurement inside its range; within ±10 % but for streams_pipeline
        assert row.low_us <= row.graphed_measured_us <= row.high_us
        assert (abs(row.error_frac) <= 0.10) == (name != "streams_pipeline")
        assert abs(row.saving_error_points) <= 15
    errors = sorted(abs(r.error_frac) for r in rows.values())
    assert (errors[2] + errors[3]) / 2 == pytest.approx(0.0249, abs=0.001)  # median |error|
