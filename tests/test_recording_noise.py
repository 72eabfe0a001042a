"""How much the measured graphed time itself moves between two recordings of one workload
(a hold-out set and its rerun, each timed in a fresh process): the floor under the
prediction's error that no model can go below, read from the recordings' ``results.json``
alone (README, *Validation in short*; docs/validation.md, *Noise, and what is the
model's*)."""

from __future__ import annotations

import json
import math
import statistics
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))

from validation_table import VALIDATION_DIR, validation_workloads  # noqa: E402

#: Timed in the process that had run the profiler, not in a fresh one.
PROFILED_PROCESS = {"holdout2"}
#: The fresh-process pairs the README counts: recorded through holdout42.
LAST = 42


def _pairs() -> list[tuple[float, float]]:
    pairs = []
    for rerun in sorted(VALIDATION_DIR.glob("*_rerun")):
        first = rerun.with_name(rerun.name.removesuffix("_rerun"))
        number = first.name.removeprefix("holdout")
        gpu = json.loads((first / "environment.json").read_text())["gpu"]
        if (
            first.name in PROFILED_PROCESS
            or gpu != "NVIDIA H200"  # the H200's pairs only
            or (number.isdigit() and int(number) > LAST)
        ):
            continue
        measured = {w.name.split("/")[-1]: w.graphed_us for w in validation_workloads(first)}
        for w in validation_workloads(rerun):
            name = w.name.split("/")[-1]
            if name in measured:
                pairs.append((measured[name], w.graphed_us))
    return pairs


def test_two_recordings_of_one_graph_differ_by_a_median_two_percent() -> None:
    pairs = _pairs()
    assert len(pairs) == 216
    apart = [abs(math.log(a / b)) for a, b in pairs]
    assert statistics.median(apart) == pytest.approx(0.0174, abs=0.0005)
    assert sum(d > math.log(1.05) for d in apart) == 47
    assert sum(d > math.log(1.10) for d in apart) == 14
    # a predictor that knew each workload's mean (geometric, of its two recordings) would
    # miss ±10 % on 7 of the 432 recordings; the model, from the traces, misses 32 (34 before
    # light kernels started on partial room)
    misses = 0
    for a, b in pairs:
        mean = math.sqrt(a * b)
        misses += sum(abs(mean / x - 1) > 0.10 for x in (a, b))
    assert misses == 7
