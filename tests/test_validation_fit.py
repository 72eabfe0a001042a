"""``bench/validation_table.py``'s fit keeps the constants it does not fit."""

from __future__ import annotations

import sys

import pytest
from conftest import ROOT, SAMPLES

sys.path.insert(0, str(ROOT / "bench"))

import validation_table  # noqa: E402

from traceinspect.calibration import DEFAULT_PROFILER_COST, calibration_for  # noqa: E402


def test_the_fit_keeps_the_per_python_call_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN two fresh-process recordings and a one-point grid (the fit itself is a search)
    workloads = [
        w
        for w in validation_table.validation_workloads(SAMPLES / "validation" / "holdout12")
        if w.name in {"simclr_infonce_b256", "two_stream_norm_chain_b32"}
    ]
    assert len(workloads) == 2
    prepared = [validation_table.prepare(w) for w in workloads]
    base = calibration_for(prepared[0].timeline)
    for grid, value in (
        ("OP_NS_GRID", 24_000.0),
        ("OP_SHAPES_NS_GRID", 0.0),
        ("CALL_NS_GRID", 1_000.0),
        ("FLOOR_GRID", 0.45),
        ("NODE_EXTRA_NS_GRID", 100),
    ):
        monkeypatch.setattr(validation_table, grid, (value,))
    # WHEN the constants are fitted
    fitted = validation_table.fit(prepared, base)
    # THEN the fitted profiler cost keeps the built-in cost per recorded Python call (fitted
    # by bench/python_frame_cost.py, not here): a trace with stacks would otherwise lose it
    assert fitted.cost == DEFAULT_PROFILER_COST
    assert fitted.cost.python_ns == 1_050.0
    assert fitted.apply(base).profiler_cost.python_ns == 1_050.0
    assert fitted.graph_node_extra_ns == 100
