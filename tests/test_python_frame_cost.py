"""The profiler's cost per recorded Python call (``with_stack=True``) is the one fitted on
the H200 scripts recorded with stacks (``bench/python_frame_cost.py``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

from traceinspect.calibration import DEFAULT_PROFILER_COST, calibration_for
from traceinspect.parse import load_trace


def test_the_built_in_python_call_cost_is_the_fitted_one() -> None:
    # GIVEN the fit as a user runs it
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "python_frame_cost.py"), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    fit = json.loads(proc.stdout)
    # THEN it finds 1,050 ns per recorded Python call against the measured eager steps, the
    # built-in cost (and the H200 calibration's)
    assert fit["fitted_python_ns"] == 1050 == DEFAULT_PROFILER_COST.python_ns
    trace = ROOT / "sample_traces" / "validation" / "unannotated" / "lstm_loop" / "trace.json.gz"
    assert calibration_for(load_trace(trace)).profiler_cost.python_ns == 1050
    assert fit["fitted_mean_abs_log_error"] == pytest.approx(0.057, abs=0.002)
    # ... near the traced host time the stacks add per call (median over the six scripts),
    # and below the cost that makes a stacks trace's eager time match the plain one's
    assert fit["median_traced_ns_per_python_call"] == pytest.approx(450, abs=10)
    assert fit["agreeing_with_plain_python_ns"] == 850
    scripts = fit["scripts"]
    assert scripts["encoder_infer"]["python_calls_per_step"] == 1680
    assert scripts["encoder_infer"]["error_fitted"] == pytest.approx(0.005, abs=0.002)
    # ... which the encoder's error out of fold shows is not pinned down by six scripts
    assert scripts["encoder_infer"]["out_of_fold_python_ns"] == 400
    assert scripts["encoder_infer"]["error_out_of_fold"] == pytest.approx(0.337, abs=0.005)
