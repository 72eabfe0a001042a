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

from eager_noise import graphed_spread  # noqa: E402
from validation_table import VALIDATION_DIR, fresh_sets, validation_workloads  # noqa: E402

#: Timed in the process that had run the profiler, not in a fresh one.
PROFILED_PROCESS = {"holdout2"}
#: The fresh-process pairs docs/validation.md counts first: recorded through holdout42.
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


def test_every_pair_of_fresh_recordings_of_one_workload() -> None:
    """The README's figures over every H200 workload recorded more than once in a fresh
    process (``bench/eager_noise.py``'s sets: the hold-outs, ``streams_fit`` and the probe
    re-recordings, not ``holdout``, ``holdout2`` or ``holdout3``, timed in the profiled
    process): 307 pairs of 271 workloads, graphed p50s a median 1.8 % apart and over 10 % on
    31 pairs; a predictor that knew each workload's mean would miss ±10 % on 15 of their 558
    recordings."""
    by_workload: dict[str, list[float]] = {}
    for name in fresh_sets():
        for w in validation_workloads(VALIDATION_DIR / name):
            by_workload.setdefault(w.name.split("/", 1)[-1], []).append(w.graphed_us)
    spread = graphed_spread(by_workload)
    assert (len(spread.apart), spread.workloads) == (307, 271)
    assert statistics.median(spread.apart) == pytest.approx(0.018, abs=0.0005)
    assert sum(d > 0.10 for d in spread.apart) == 31
    assert (spread.mean_misses, spread.recordings) == (15, 558)
