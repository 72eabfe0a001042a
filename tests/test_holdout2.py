"""Second hold-out: eight H200 workloads of the issue's families at sizes the validation set
does not have (``sample_traces/validation/holdout2_workloads/``), recorded through
``traceinspect profile --repeats 5`` only after the replay model (occupancy-aware device
share, exact stream waits: commit "Replay estimate: device share from occupancy, exact
cross-stream waits") was frozen, and never used to fit or tune it.

Recorded twice, on two machines of the same type (NVIDIA H200, driver 580.159.04, torch
2.11.0+cu130) a quarter of an hour apart:

* ``holdout2/`` (03:02 UTC): the collector then traced the candidate between timing rounds,
  so each mode's least disturbed round is the measured figure;
* ``holdout2_rerun/`` (03:19 UTC): the collector as it is now (every round before any
  trace). On this machine every graph replayed 0.6-1.0 µs per node slower than on the
  first, although the same graphs' profiled replays look alike on both (decoder_b8: span
  626.5 vs 628.8 µs, 0.43 vs 0.44 µs between nodes) and the eager traces do not tell the two
  machines apart. The graphed prediction misses ±10 % on six of the eight there; the
  measured value stays inside the stated range on all eight.

The eager model's profiler costs were refitted after the first recording (on the validation
set, not on these): savings are as of now.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    validate_folder,
)

# set: workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "holdout2": {
        "adamw_foreach": (985.8, 987.7, 0.6131, 0.6625),  # +0.2 %
        "bottleneck_b4": (584.9, 583.6, 0.7055, 0.8396),  # −0.2 %
        "compiled_swiglu": (161.6, 156.3, 0.6892, 0.7485),  # −3.3 %
        "decoder_b8": (679.1, 648.6, 0.7303, 0.7385),  # −4.5 %
        "embbag_small": (110.2, 104.8, 0.6016, 0.6565),  # −4.9 %
        "fork_join_streams": (107.9, 118.4, 0.6621, 0.84),  # +9.8 %
        "lstm_b64": (855.0, 869.7, 0.7577, 0.6865),  # +1.7 %
        "mlp_silu_wide": (301.2, 293.2, 0.6359, 0.6321),  # −2.7 %
    },
    "holdout2_rerun": {
        "adamw_foreach": (1176.9, 998.0, 0.5888, 0.7178),  # −15.2 %
        "bottleneck_b4": (687.1, 586.7, 0.6526, 0.8537),  # −14.6 %
        "compiled_swiglu": (194.7, 155.8, 0.643, 0.8147),  # −20.0 %
        "decoder_b8": (836.3, 646.6, 0.6947, 0.8255),  # −22.7 %
        "embbag_small": (113.6, 104.6, 0.5691, 0.6828),  # −7.9 %
        "fork_join_streams": (112.9, 116.6, 0.5223, 0.5718),  # +3.3 %
        "lstm_b64": (1024.7, 884.4, 0.6091, 0.6661),  # −13.7 %
        "mlp_silu_wide": (345.2, 293.8, 0.5594, 0.627),  # −14.9 %
    },
}
#: Graphed predictions beyond ±10 %: the slower machine's replays.
GRAPHED_MISSES = {
    ("holdout2_rerun", n)
    for n in ("adamw_foreach", "bottleneck_b4", "compiled_swiglu", "decoder_b8", "lstm_b64",
              "mlp_silu_wide")
}  # fmt: skip
#: Savings without --eager-us beyond 15 points: the eager time simulated from the trace
#: runs high where the profiled step holds long host work (fork_join_streams: stream
#: switches and record_stream, +132 %; bottleneck_b4: +103 %) or, on the slower machine,
#: where the replay is predicted too fast.
SAVING_MISSES = {
    ("holdout2", "fork_join_streams"),
    ("holdout2_rerun", "bottleneck_b4"),
    ("holdout2_rerun", "compiled_swiglu"),
}


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], ValidationRow]:
    return {
        (folder, name): row
        for folder in EXPECTED
        for name, row in validate_folder(SAMPLES / "validation" / folder).items()
    }


def test_every_holdout2_workload_is_checked(rows: dict[tuple[str, str], ValidationRow]) -> None:
    assert set(rows) == {(f, n) for f, names in EXPECTED.items() for n in names}


@pytest.mark.parametrize(
    ("folder", "name"), sorted((f, n) for f, names in EXPECTED.items() for n in names)
)
def test_holdout2_prediction(
    folder: str, name: str, rows: dict[tuple[str, str], ValidationRow]
) -> None:
    measured, predicted, saving, saving_predicted = EXPECTED[folder][name]
    row = rows[folder, name]
    assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert row.predicted_us == pytest.approx(predicted, abs=1.0)
    assert row.saving_measured == pytest.approx(saving, abs=0.001)
    assert row.saving_predicted == pytest.approx(saving_predicted, abs=0.002)
    # the measured graphed time lies inside the stated range on every workload, both machines
    assert row.low_us <= row.graphed_measured_us <= row.high_us
    within = abs(row.error_frac) <= 0.10
    assert within == ((folder, name) not in GRAPHED_MISSES), f"{row.error_frac:+.1%}"
    close = abs(row.saving_error_points) <= 15
    assert close == ((folder, name) not in SAVING_MISSES), f"{row.saving_error_points:+.1f}"


def test_the_two_machines_profile_alike_but_replay_apart(
    rows: dict[tuple[str, str], ValidationRow],
) -> None:
    # the same graphs measured 16-24 % slower unprofiled on the second machine; the eager
    # traces of both give the same prediction (within 2 %)
    for name in ("decoder_b8", "mlp_silu_wide", "lstm_b64", "compiled_swiglu"):
        first, second = rows["holdout2", name], rows["holdout2_rerun", name]
        assert 1.13 <= second.graphed_measured_us / first.graphed_measured_us <= 1.25
        assert abs(second.predicted_us / first.predicted_us - 1) <= 0.02
