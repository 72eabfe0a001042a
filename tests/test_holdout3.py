"""Third hold-out: six H200 workloads (``sample_traces/validation/holdout3_workloads/``)
recorded by ``traceinspect profile --repeats 5`` (every timing round before any trace) only
after the eager model's refit and the replay model were frozen.

The graphed prediction misses ±10 % on five of the six. On the same machine, minutes later,
the same graphs replayed by themselves in a fresh process (``replay_under_profiler.py``,
``replay_under_profiler.holdout3.json``: no profiler had run in it) took 669 µs (gru_b8),
608 (mlp_relu_b64), 629 (mobilenet_half_b4) and 121 (streams_pipeline) where the collector
measured 943, 725, 839 and 152 µs: the predictions (735, 598, 654, 105) sit near the fresh
process's figures. What slows the collector's process (it ran the script under the profiler
with Python stacks first) is not known yet; the measured value is what is asserted here.
"""

from __future__ import annotations

import json
import sys

import pytest
from conftest import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    validate_folder,
    validation_workloads,
)

HOLDOUT = SAMPLES / "validation" / "holdout3"

# workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "encoder_b16": (291.8, 283.6, 0.6153, 0.5985),  # −2.8 %
    "gru_b8": (942.6, 734.7, 0.6242, 0.572),  # −22.1 %
    "mlp_relu_b64": (725.2, 597.9, 0.5099, 0.5746),  # −17.6 %
    "mobilenet_half_b4": (838.5, 654.4, 0.7659, 0.8264),  # −22.0 %
    "sgd_foreach": (118.6, 104.4, 0.8043, 0.8512),  # −12.0 %
    "streams_pipeline": (152.0, 105.2, 0.7084, 0.8617),  # −30.8 %
}
GRAPHED_MISSES = {"gru_b8", "mlp_relu_b64", "mobilenet_half_b4", "sgd_foreach", "streams_pipeline"}
OUTSIDE_RANGE = {"gru_b8", "streams_pipeline"}
SAVING_MISSES = {"streams_pipeline"}


@pytest.fixture(scope="module")
def rows() -> dict[str, ValidationRow]:
    return validate_folder(HOLDOUT)


def test_every_holdout3_workload_is_checked(rows: dict[str, ValidationRow]) -> None:
    assert set(rows) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_holdout3_prediction(name: str, rows: dict[str, ValidationRow]) -> None:
    measured, predicted, saving, saving_predicted = EXPECTED[name]
    row = rows[name]
    assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert row.predicted_us == pytest.approx(predicted, abs=1.0)
    assert row.saving_measured == pytest.approx(saving, abs=0.001)
    assert row.saving_predicted == pytest.approx(saving_predicted, abs=0.002)
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
        # the prediction (which adds the input copies the bare replay leaves out) lies
        # within 15 % of the fresh process's replay
        assert abs(row.predicted_us / alone_us - 1) <= 0.15


def test_every_step_verdict_agrees_with_what_replay_did() -> None:
    """The 65 H200 workloads of the README (fit set and the four hold-outs): each step's
    verdict agrees with the saving replay measurably brought, and no region's verdict
    contradicts its predicted saving."""
    from validation_table import Workload, all_workloads

    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    workloads: list[Workload] = list(all_workloads())
    for folder in ("holdout", "holdout2", "holdout2_rerun", "holdout3"):
        workloads += validation_workloads(SAMPLES / "validation" / folder)
    assert len(workloads) == 65
    verdicts: dict[str, int] = {}
    for w in workloads:
        analysis = diagnose(load_trace(w.trace))
        step = analysis.region(w.region)
        if w.saving >= 0.20:
            assert step.verdict == "launch-bound", (w.trace, step.verdict)
        elif w.saving < 0.10:
            assert step.verdict == "compute-bound", (w.trace, step.verdict)
        verdicts[step.verdict] = verdicts.get(step.verdict, 0) + 1
        for r in analysis.region_results:
            if r.estimate is None:
                continue
            frac = r.estimate.saving_frac
            assert not (r.verdict == "launch-bound" and frac < 0.10), (w.trace, r.region.name)
            assert not (r.verdict == "compute-bound" and frac > 0.25), (w.trace, r.region.name)
    assert verdicts == {"launch-bound": 57, "compute-bound": 8}


#: The same six recorded again with ``--fresh-timing`` (record.sh FRESH_TIMING=1), the model
#: unchanged: measured graphed time from a process that never ran a profiler.
EXPECTED_FRESH = {
    "encoder_b16": (274.9, 283.5),  # +3.1 %
    "gru_b8": (688.8, 734.6),  # +6.7 %
    "mlp_relu_b64": (593.0, 595.2),  # +0.4 %
    "mobilenet_half_b4": (622.9, 662.3),  # +6.3 %
    "sgd_foreach": (101.3, 105.8),  # +4.4 %
    "streams_pipeline": (134.5, 106.3),  # −21.0 %: a stream's fork read as waiting on the other
}


def test_holdout3_timed_in_a_fresh_process() -> None:
    rows = validate_folder(SAMPLES / "validation" / "holdout3_fresh")
    assert set(rows) == set(EXPECTED_FRESH)
    for name, (measured, predicted) in EXPECTED_FRESH.items():
        row = rows[name]
        assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
        assert row.predicted_us == pytest.approx(predicted, abs=1.0)
        assert row.low_us <= row.graphed_measured_us <= row.high_us
        assert (abs(row.error_frac) <= 0.10) == (name != "streams_pipeline")
        assert abs(row.saving_error_points) <= 15
