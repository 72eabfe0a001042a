"""``bench/validation_table.py``'s fit keeps the constants it does not fit."""

from __future__ import annotations

import json
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
    fitted = validation_table.fit(prepared, [base, base])
    # THEN the fitted profiler cost keeps the built-in cost per recorded Python call (fitted
    # by bench/python_frame_cost.py, not here): a trace with stacks would otherwise lose it
    assert fitted.cost == DEFAULT_PROFILER_COST
    assert fitted.cost.python_ns == 1_050.0
    assert fitted.apply(base).profiler_cost.python_ns == 1_050.0
    assert fitted.graph_node_extra_ns == 100


def test_a_mixed_selection_predicts_each_set_with_its_own_devices_profile(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an H100 set named before an H200 one
    if not (SAMPLES / "validation" / "h100_chains_probe").is_dir():
        pytest.skip("the chains probe's recordings are not in this checkout")
    monkeypatch.setattr(
        sys,
        "argv",
        ["validation_table.py", "--sets", "h100_chains_probe,chains_probe", "--json"],
    )
    # WHEN both are scored in one run
    assert validation_table.main() == 0
    rows = {r["workload"]: r for r in json.loads(capsys.readouterr().out)}
    # THEN the H200 set's predictions are those it gets alone (the H100 profile, taken from
    # the first trace for all, once moved every one of them)
    alone = validation_table.validate_folder(SAMPLES / "validation" / "chains_probe")
    assert len(alone) == 9
    for name, row in alone.items():
        assert rows[f"chains_probe/{name}"]["predicted_us"] == row.predicted_us
    assert rows["chains_probe/gemm_tanh_chains_2streams_b16"]["predicted_us"] == 419.7
    h100 = [r for k, r in rows.items() if k.startswith("h100_chains_probe/")]
    assert len(h100) == 9
