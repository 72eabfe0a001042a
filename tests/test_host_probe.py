"""The copy host-cost probe of ``traceinspect profile`` and the prediction that uses it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from traceinspect.collect.host_probe import (
    PROBE_COPIES,
    combine,
    measure_copy_host,
    valid_host_costs,
)
from traceinspect.sanitize import make_console

ROOT = Path(__file__).parents[1]
FUSION = ROOT / "sample_traces/validation/holdout16/feature_fusion_6in_b32"


class _Cuda:
    def __init__(self) -> None:
        self.synchronized = 0

    def synchronize(self) -> None:
        self.synchronized += 1


class _CpuTorch:
    """Real torch for the tensors, a ``cuda`` that only counts synchronizes."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch
        self.cuda = _Cuda()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)


def test_the_probe_times_each_copy_after_a_synchronize() -> None:
    torch = pytest.importorskip("torch")
    fake = _CpuTorch(torch)
    # WHEN the probe runs on CPU tensors (20 timed rounds)
    probe = measure_copy_host(fake, device="cpu", rounds=20)
    # THEN one p50 per position, the first one the cold copy and the warm one the median of
    # the others, every round started from a synchronize
    assert len(probe["per_position_ns"]) == PROBE_COPIES
    assert probe["copy_first_host_ns"] == probe["per_position_ns"][0]
    later = sorted(probe["per_position_ns"][1:])
    assert later[0] <= probe["copy_warm_host_ns"] <= later[-1]
    assert all(0 < ns < 1_000_000 for ns in probe["per_position_ns"])
    assert fake.cuda.synchronized == 10 + 20 + 1  # warm-up rounds, timed rounds, the end
    assert valid_host_costs(probe) == (probe["copy_first_host_ns"], probe["copy_warm_host_ns"])


def test_probes_before_and_after_the_candidates_are_averaged() -> None:
    before = {"copy_first_host_ns": 9_000, "copy_warm_host_ns": 8_001}
    after = {"copy_first_host_ns": 7_000, "copy_warm_host_ns": 6_000}
    combined = combine([before, after])
    assert combined is not None
    assert (combined["copy_first_host_ns"], combined["copy_warm_host_ns"]) == (8_000, 7_000)
    assert combined["probes"] == [before, after]
    assert combine([]) is None


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {},
        {"copy_first_host_ns": 5_000},
        {"copy_first_host_ns": 5_000, "copy_warm_host_ns": "5000"},
        {"copy_first_host_ns": 5_000, "copy_warm_host_ns": 5_000.5},
        {"copy_first_host_ns": True, "copy_warm_host_ns": 5_000},
        {"copy_first_host_ns": 0, "copy_warm_host_ns": 5_000},
        {"copy_first_host_ns": 5_000, "copy_warm_host_ns": -1},
        {"copy_first_host_ns": 5_000, "copy_warm_host_ns": 2_000_000},
    ],
)
def test_implausible_host_costs_are_ignored(data: Any) -> None:
    assert valid_host_costs(data) is None


def _predict(tmp_path: Path, host_costs: dict[str, int] | None) -> dict[str, Any]:
    from traceinspect.commands.profile import _add_predictions

    rows = [dict(r) for r in json.loads((FUSION / "results.json").read_text())["rows"]]
    for row in rows:
        if row["trace"]:
            shutil.copy(FUSION / row["trace"], tmp_path / row["trace"])
    _add_predictions(rows, tmp_path, make_console(stderr=True), host_costs=host_costs)
    graphed = rows[1]
    assert graphed["mode"] == "graphed"
    return graphed


def test_a_slow_hosts_copies_are_charged_to_a_step_fed_six_inputs(tmp_path: Path) -> None:
    # GIVEN holdout16's six-input feature fusion (H200): graphed 103.7 µs measured on a
    # machine whose small copies took 10.4-10.8 µs of host (replay_parts.holdout16.json)
    # WHEN predicted with copies as fast as the calibration's own machine timed them (5.8
    # and 5.6 µs), as slow as that machine's, and with none measured: the built-in cost
    # (9.9 and 9.2 µs, the medians of the probes of holdout17 and the probe re-recordings)
    # brought to the pace of the trace's host (launch calls a median 5.8 µs: 7.2 µs a copy)
    fast = _predict(tmp_path, {"copy_first_host_ns": 5_827, "copy_warm_host_ns": 5_570})
    slow = _predict(tmp_path, {"copy_first_host_ns": 10_800, "copy_warm_host_ns": 10_400})
    built_in = _predict(tmp_path, None)
    # THEN the fast copies read it 27 % short, the measured cost 0.8 % long, the paced
    # built-in 17.3 % short (6.0 % at 9.2 µs): this process's copies were slower than its
    # launch calls tell, which only the probe sees
    assert built_in["host_p50_ns"] == 103_693
    assert fast["predicted_ns"] == pytest.approx(75_375, abs=300)
    assert slow["predicted_ns"] == pytest.approx(104_498, abs=300)
    assert slow["prediction_error"] == pytest.approx(0.008, abs=0.003)
    assert built_in["prediction_error"] == pytest.approx(-0.173, abs=0.003)
    # the six copies' extra host time: 5 warm at +4.83 µs and the cold one at +4.97 µs
    assert slow["predicted_ns"] - fast["predicted_ns"] == pytest.approx(29_100, abs=300)
    # AND the range measured on the fast machine (1.3x room for its copies) reaches just
    # over the slow machine's step, 108.1 µs; the built-in range (0.6-1.2x the median)
    # holds it
    assert fast["predicted_high_ns"] == pytest.approx(108_138, abs=300)
    assert slow["predicted_low_ns"] < 103_693 < slow["predicted_high_ns"]
    assert built_in["predicted_low_ns"] < 103_693 < built_in["predicted_high_ns"]


def test_the_calibration_names_the_measured_copies() -> None:
    from traceinspect.calibration import builtin_calibrations

    h200 = builtin_calibrations()["nvidia-h200"]
    assert not h200.copy_host_measured
    here = h200.with_host_costs(9_100, 8_700)
    assert (here.copy_launch_host_ns, here.warm_copy_host_ns) == (9_100, 8_700)
    assert here.copy_host_measured
    assert here.describe().endswith("input copies 8.7 µs measured here, NVIDIA H200)")
