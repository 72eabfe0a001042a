"""Shared fixtures: the real-trace corpus beside the checkout and the project's own samples."""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLES = ROOT / "sample_traces"
#: Traces a test process keeps read (the validation tests predict each recording several
#: times: built in, with its probes, under a test's patches, diagnosed for its verdict).
LOADED_TRACES = 48


@pytest.fixture(scope="session")
def corpus() -> Path:
    """``../shared/corpus``; tests using it skip where it is absent (e.g. a bare clone)."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS} (it lies in ../shared beside the checkout)")
    return CORPUS


def corpus_file(name: str) -> Path:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} not found under {CORPUS}")
    return path


def sample_file(name: str) -> Path:
    path = SAMPLES / name
    if not path.is_file():
        pytest.fail(f"bundled sample {name} is missing from {SAMPLES}")
    return path


def ddp_rank_folder(parent: Path) -> Path:
    """``parent/ranks``: the bundled DDP step's two Kineto rank traces
    (``sample_traces/nsys/ddp_nccl.rank{0,1}.kineto.json.gz``), a folder of per-rank traces."""
    folder = parent / "ranks"
    folder.mkdir()
    for rank in (0, 1):
        name = f"nsys/ddp_nccl.rank{rank}.kineto.json.gz"
        shutil.copy(sample_file(name), folder / Path(name).name)
    return folder


@lru_cache(maxsize=LOADED_TRACES)
def load_trace_once(path: Path) -> Any:
    """``load_trace(path)``, kept for the next call with the same path. The tests patch the
    estimator, never the readers, and nothing writes into a timeline."""
    from traceinspect.parse import load_trace

    return load_trace(path)


def validation_table() -> Any:
    """``bench/validation_table.py``, reading each trace once per test process."""
    import sys

    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    import validation_table as module

    module.load_trace = load_trace_once
    return module


def fresh_row(workload: Any, probe: bool = False, calibration: str = "") -> Any:
    """``bench/validation_table.py``'s row of one workload (``validation_table.Workload``),
    predicted with the model as it stands at the call (a test's patches included), with the
    copy host cost its probes measured (``probe``) or from the trace alone, with the
    built-in profile named ``calibration`` or the trace's own."""
    from dataclasses import replace

    from traceinspect.calibration import builtin_calibrations, calibration_for

    table = validation_table()
    prepared = table.prepare(workload if probe else replace(workload, host_costs=None))
    cal = builtin_calibrations()[calibration] if calibration else calibration_for(prepared.timeline)
    return table.evaluate(prepared, cal)


@cache
def recording_rows(recording: str, probe: bool, calibration: str = "") -> dict[str, Any]:
    """``bench/validation_table.py``'s row per workload of ``sample_traces/validation/
    RECORDING``, predicted with the copy host cost its probes measured (``probe``) or from
    the trace alone, with the built-in profile named ``calibration`` or the trace's own
    (:func:`fresh_row`, cached: the built-in model's)."""
    table = validation_table()
    return {
        w.name: fresh_row(w, probe, calibration)
        for w in table.validation_workloads(table.VALIDATION_DIR / recording)
    }


def assert_probe_prediction(
    recording: str, name: str, expected: tuple[float, float, float]
) -> None:
    """A probed recording's workload measured and predicted as ``expected``: (measured
    graphed p50 µs, predicted µs with its probes' copy cost, predicted µs from the trace
    alone)."""
    measured, with_probe, trace_alone = expected
    probed, alone = recording_rows(recording, True)[name], recording_rows(recording, False)[name]
    assert probed.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert probed.predicted_us == pytest.approx(with_probe, abs=0.5)
    assert alone.predicted_us == pytest.approx(trace_alone, abs=0.5)


def step_verdicts_agreeing_with_replay(workloads: Iterable[Any]) -> dict[str, int]:
    """Count of step verdicts over measured H200 workloads (``validation_table.Workload``),
    asserting on the way that each step's verdict agrees with the saving replay measurably
    brought (launch-bound at ≥ 20 %, compute-bound below 10 %) and that no region's verdict
    contradicts its predicted saving (launch-bound below 10 %, compute-bound above 25 %)."""
    verdicts: dict[str, int] = {}
    for w in workloads:
        verdict, _ = step_read(w)
        if w.saving >= 0.20:
            assert verdict == "launch-bound", (w.trace, verdict)
        elif w.saving < 0.10:
            assert verdict == "compute-bound", (w.trace, verdict)
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return verdicts


def step_read(workload: Any) -> tuple[str, float | None]:
    """A measured workload's step verdict and predicted saving (None without an estimate),
    asserting on the way that no region of its trace reads a verdict its predicted saving
    contradicts."""
    from traceinspect.analysis.diagnose import diagnose

    analysis = diagnose(load_trace_once(workload.trace))
    assert_no_verdict_contradicts_its_saving(analysis, workload.trace)
    step = analysis.region(workload.region)
    return step.verdict, step.estimate.saving_frac if step.estimate is not None else None


def assert_no_verdict_contradicts_its_saving(analysis: Any, trace: Any) -> None:
    """No region of ``analysis`` reads launch-bound below a 10 % predicted saving, or
    compute-bound above 25 %."""
    for r in analysis.region_results:
        if r.estimate is None:
            continue
        frac = r.estimate.saving_frac
        assert not (r.verdict == "launch-bound" and frac < 0.10), (trace, r.region.name)
        assert not (r.verdict == "compute-bound" and frac > 0.25), (trace, r.region.name)


def assert_one_step_reads(
    recording: str,
    name: str,
    others: dict[str, int],
    saving: float,
    verdict: str,
    predicted: float,
) -> None:
    """In ``sample_traces/validation/RECORDING``, every step but ``name`` reads as replay did
    (``others``: their verdicts), and ``name``, where replay saved ``saving``, reads
    ``verdict`` at a predicted saving of ``predicted``."""
    table = validation_table()
    workloads = table.validation_workloads(table.VALIDATION_DIR / recording)
    odd = next(w for w in workloads if w.name == name)
    rest = [w for w in workloads if w is not odd]
    assert step_verdicts_agreeing_with_replay(rest) == others
    assert odd.saving == pytest.approx(saving, abs=0.001)
    step_verdict, step_saving = step_read(odd)
    assert step_verdict == verdict
    assert step_saving is not None
    assert step_saving == pytest.approx(predicted, abs=0.01)


def assert_summary(
    rows: Sequence[Any], count: int, within: int, median_error: float, inside: int
) -> None:
    """``count`` validation rows, ``within`` of them within ±10 %, the median |error| and
    how many were measured inside their [low, high]."""
    errors = [abs(r.error_frac) for r in rows]
    assert len(rows) == count
    assert sum(e <= 0.10 for e in errors) == within
    assert statistics.median(errors) == pytest.approx(median_error, abs=0.001)
    assert sum(r.graphed_inside for r in rows) == inside


def assert_row_classified(
    row: Any, graphed_miss: bool, outside_range: bool, saving_miss: bool
) -> None:
    """A hold-out row is a graphed miss (beyond ±10 %), measured outside its [low, high] and
    a saving miss (beyond 15 points) exactly where its set says so."""
    assert (abs(row.error_frac) > 0.10) == graphed_miss, f"{row.error_frac:+.1%}"
    inside = row.low_us <= row.graphed_measured_us <= row.high_us
    assert (not inside) == outside_range
    assert (abs(row.saving_error_points) > 15) == saving_miss, f"{row.saving_error_points:+.1f}"


def assert_row_matches(row: Any, expected: tuple[float, float, float, float]) -> None:
    """A hold-out row (``validation_table.ValidationRow``) against its pinned values:
    measured graphed p50 µs, predicted µs, measured saving, predicted saving."""
    measured, predicted, saving, saving_predicted = expected
    assert row.graphed_measured_us == pytest.approx(measured, abs=0.05)
    assert row.predicted_us == pytest.approx(predicted, abs=1.0)
    assert row.saving_measured == pytest.approx(saving, abs=0.001)
    assert row.saving_predicted == pytest.approx(saving_predicted, abs=0.002)
