"""Hold-out check: six H200 workloads recorded (``sample_traces/validation/holdout/``, by
``record_holdout.sh`` through ``traceinspect profile --repeats 5``) only after the estimator
was frozen, and never used to fit or tune it.

Each row states the measured unprofiled graphed p50 and the prediction from the eager
candidate trace as of the freeze. The promise (±10 % graphed, measured inside [low, high],
saving without ``--eager-us`` within 15 points) is checked workload by workload; the one miss
at the time of recording (``sgd_update``, −16.9 %) is stated, not hidden.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    calibration_for,
    evaluate,
    prepare,
    validation_workloads,
)

HOLDOUT = SAMPLES / "validation" / "holdout"

# workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "bottleneck_b16": (1307.4, 1306.5, 0.752, 0.865),
    "compiled_block": (172.0, 171.4, 0.625, 0.697),
    "decoder_b4": (1211.0, 1162.8, 0.812, 0.827),
    "encoder_b32": (1832.8, 1810.5, 0.027, -0.004),
    "gru_loop": (982.2, 1022.8, 0.701, 0.701),
    "sgd_update": (1471.5, 1223.2, 0.775, 0.881),
}
#: Workloads whose graphed prediction missed ±10 % when the hold-out was recorded.
#: (sgd_update: 600 tiny nodes; its replay ran about 0.4 µs per node slower than predicted)
KNOWN_MISSES = {"sgd_update"}


@pytest.fixture(scope="module")
def rows() -> dict[str, ValidationRow]:
    out = {}
    for workload in validation_workloads(HOLDOUT):
        prepared = prepare(workload)
        out[workload.name] = evaluate(prepared, calibration_for(prepared.timeline))
    return out


def test_every_holdout_workload_is_checked(rows: dict[str, ValidationRow]) -> None:
    assert set(rows) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_holdout_prediction(name: str, rows: dict[str, ValidationRow]) -> None:
    measured, predicted, saving, saving_predicted = EXPECTED[name]
    row = rows[name]
    assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert row.predicted_us == pytest.approx(predicted, abs=1.0)
    assert row.saving_measured == pytest.approx(saving, abs=0.001)
    assert row.saving_predicted == pytest.approx(saving_predicted, abs=0.002)
    # the measured graphed time lies inside the stated range on every hold-out workload
    assert row.low_us <= row.graphed_measured_us <= row.high_us
    # the saving without --eager-us is within 15 points of the measured one
    assert abs(row.saving_error_points) <= 15
    within = abs(row.error_frac) <= 0.10
    assert within == (name not in KNOWN_MISSES), f"{name}: {row.error_frac:+.1%}"
