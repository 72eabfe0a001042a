"""Second hold-out: eight H200 workloads of the issue's families at sizes the validation set
does not have (``sample_traces/validation/holdout2_workloads/``), recorded through
``traceinspect profile --repeats 5`` only after the replay model (occupancy-aware device
share, exact stream waits: commit "Replay estimate: device share from occupancy, exact
cross-stream waits") was frozen, and never used to fit or tune it.

Recorded three times, on machines of the same type (NVIDIA H200, driver 580.159.04, torch
2.11.0+cu130):

* ``holdout2/`` (03:02 UTC): the collector then traced the candidate between timing rounds,
  so each mode's least disturbed round is the measured figure;
* ``holdout2_rerun/`` (03:19 UTC): every round before any trace of the candidate, but in
  the process that had just run the script under the profiler. Its graphs replayed
  3-34 % slower than the fresh recording below (decoder_b8 836 vs 626 µs), which once
  read as a slower machine: the same graphs' profiled replays look alike on both
  recordings, and the eager traces give the same prediction;
* ``holdout2_fresh/`` (the same scripts again, timed in a process that never ran a
  profiler): per workload in ``tests/test_holdout_fresh.py``; here, what it says about the
  other two.

The model now predicts the clean replay (calibration timed before any profiler session,
200 ns per node on top, 5.57 µs per warm input copy), so on ``holdout2`` and above all on
``holdout2_rerun``, both timed in a profiled process, the predictions sit below the
measured value: within ±10 % on 6 of 8 and 1 of 8; against the fresh timing of the same
graphs, 7 of 8 from either trace. The eager model's profiler costs were refitted after the
first recording (on the validation set, not on these): savings are as of now.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, SAMPLES, assert_row_matches

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import (  # noqa: E402
    ValidationRow,
    validate_folder,
)

# set: workload: (measured graphed p50 µs, predicted µs, measured saving, predicted saving)
EXPECTED = {
    "holdout2": {
        "adamw_foreach": (985.8, 962.5, 0.6131, 0.6709),  # −2.4 %
        "bottleneck_b4": (584.9, 564.7, 0.7055, 0.8447),  # −3.5 %
        "compiled_swiglu": (161.6, 143.2, 0.6892, 0.7689),  # −11.4 %
        "decoder_b8": (679.1, 626.8, 0.7303, 0.747),  # −7.7 %
        "embbag_small": (110.2, 92.7, 0.6016, 0.6944),  # −15.9 %
        "fork_join_streams": (107.9, 106.6, 0.6621, 0.8556),  # −1.1 %
        "lstm_b64": (855.0, 846.7, 0.7577, 0.6946),  # −1.0 %
        "mlp_silu_wide": (301.2, 279.0, 0.6359, 0.6491),  # −7.4 %
    },
    "holdout2_rerun": {
        "adamw_foreach": (1176.9, 972.8, 0.5888, 0.7248),  # −17.3 %
        "bottleneck_b4": (687.1, 567.8, 0.6526, 0.8583),  # −17.4 %
        "compiled_swiglu": (194.7, 142.7, 0.643, 0.8298),  # −26.7 %
        "decoder_b8": (836.3, 624.9, 0.6947, 0.8313),  # −25.3 %
        "embbag_small": (113.6, 92.5, 0.5691, 0.718),  # −18.5 %
        "fork_join_streams": (112.9, 104.8, 0.5223, 0.6127),  # −7.2 %
        "lstm_b64": (1024.7, 861.4, 0.6091, 0.6746),  # −15.9 %
        "mlp_silu_wide": (345.2, 279.6, 0.5594, 0.6442),  # −19.0 %
    },
}
#: Graphed predictions beyond ±10 %, all under: the profiled process's replays (every one on
#: the rerun but fork_join_streams, the graph it slowed least) and, on the first recording,
#: compiled_swiglu (measured 5 % above the fresh process, 161.6 vs 153.6 µs, against which
#: the prediction is −6.8 %) and embbag_small (one input copy assumed for its two; the fresh
#: recording measured 110.0 µs too and, with both copies charged, is predicted −10.9 %: the
#: model's miss, not the process's).
GRAPHED_MISSES = {
    ("holdout2", "compiled_swiglu"),
    ("holdout2", "embbag_small"),
    *(("holdout2_rerun", n) for n in EXPECTED["holdout2_rerun"] if n != "fork_join_streams"),
}
#: Savings without --eager-us beyond 15 points: the eager time simulated from the trace
#: runs high where the profiled step holds long host work (fork_join_streams: stream
#: switches and record_stream, +131 %; bottleneck_b4: +103 %) or, on the rerun, where the
#: measured replay was slowed by its profiled process.
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
    row = rows[folder, name]
    assert_row_matches(row, EXPECTED[folder][name])
    # the measured graphed time lies inside the stated range on all sixteen, even on the rerun
    assert row.low_us <= row.graphed_measured_us <= row.high_us
    within = abs(row.error_frac) <= 0.10
    assert within == ((folder, name) not in GRAPHED_MISSES), f"{row.error_frac:+.1%}"
    close = abs(row.saving_error_points) <= 15
    assert close == ((folder, name) not in SAVING_MISSES), f"{row.saving_error_points:+.1f}"


def test_the_rerun_measured_its_profiled_process_not_a_slower_machine(
    rows: dict[tuple[str, str], ValidationRow],
) -> None:
    # GIVEN the same eight graphs timed a third time, in a process that never ran a profiler
    fresh = validate_folder(SAMPLES / "validation" / "holdout2_fresh")
    assert set(fresh) == set(EXPECTED["holdout2"])
    within = set()
    for name, clean in fresh.items():
        first, rerun = rows["holdout2", name], rows["holdout2_rerun", name]
        # THEN the rerun's profiled process measured them 3-34 % slower (decoder_b8 +34 %,
        # embbag_small +3 %), the first recording's least disturbed round 0-9 % slower
        assert 1.03 <= rerun.graphed_measured_us / clean.graphed_measured_us <= 1.34, name
        assert 1.00 <= first.graphed_measured_us / clean.graphed_measured_us <= 1.09, name
        # AND the three eager traces give one prediction: within 3 %, but for embbag_small,
        # whose fresh row carries its two inputs' copies (5.9 %; lstm_b64's three: 2.6 %)
        predicted = [first.predicted_us, rerun.predicted_us, clean.predicted_us]
        spread = max(predicted) / min(predicted) - 1
        assert spread <= (0.06 if name == "embbag_small" else 0.03), f"{name}: {spread:.1%}"
        # AND both older traces predict the fresh time within ±10 % (the claim that matters)
        for recording, row in (("holdout2", first), ("holdout2_rerun", rerun)):
            if abs(row.predicted_us / clean.graphed_measured_us - 1) <= 0.10:
                within.add((recording, name))
    # all but embbag_small (92.7 and 92.5 vs 110.0 µs: −15.7 % and −15.9 %)
    assert within == {(r, n) for r in ("holdout2", "holdout2_rerun") for n in fresh} - {
        ("holdout2", "embbag_small"),
        ("holdout2_rerun", "embbag_small"),
    }
