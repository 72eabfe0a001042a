"""The Python API: :func:`load` a trace into its timeline, :func:`analyze` it into a
:class:`~traceinspect.analysis.result.TraceAnalysis`.

Both import pandas and the readers only when called, so ``import traceinspect`` stays light.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from traceinspect.analysis.result import TraceAnalysis
    from traceinspect.calibration import Calibration
    from traceinspect.model import Timeline

TracePath = str | os.PathLike[str]


def load(path: TracePath) -> Timeline:
    """Read a trace into a :class:`~traceinspect.model.Timeline`.

    ``path``: a PyTorch-profiler (Kineto) JSON trace (``.json`` / ``.json.gz``), an Nsight
    Systems SQLite export (also gzipped) or an ``.nsys-rep`` (exported when ``nsys`` is on
    PATH); the format is told from the content. The timeline's tables are pandas DataFrames
    with integer-ns times: ``kernels``, ``launches`` (host calls that put work on the GPU),
    ``copies``, ``syncs``, ``annotations``, and the full ``gpu``, ``host`` and ``cpu_ops``
    tables (columns documented in :mod:`traceinspect.model`).

    Raises :class:`~traceinspect.errors.TraceFormatError` for a file that is not a readable
    trace.
    """
    from traceinspect.parse import load_trace

    return load_trace(Path(path))


def analyze(
    trace: TracePath | Timeline,
    *,
    calibration: TracePath | Calibration | None = None,
    eager_us: float | Mapping[str, float] | None = None,
) -> TraceAnalysis:
    """Analyze a trace (a path, or a timeline from :func:`load`): per region, the verdict,
    where the GPU's idle time went, the capture pre-flight and the graph replay estimate.

    ``calibration``: a calibration file from ``traceinspect calibrate`` (or a loaded
    :class:`~traceinspect.calibration.Calibration`); by default the built-in profile for the
    trace's GPU. ``eager_us``: the unprofiled eager time of one step in µs (the step region's
    saving is then measured, not estimated), or ``{region name: µs}`` for several regions.

    The result's ``regions``, ``kernels``, ``gaps`` and ``health`` are DataFrames; the typed
    objects behind them are ``region_results``, ``summary`` and ``warnings``.
    """
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.calibration import Calibration, calibration_for
    from traceinspect.model import Timeline
    from traceinspect.units import us_to_ns

    timeline = trace if isinstance(trace, Timeline) else load(trace)
    profile: Calibration | None
    if calibration is None or isinstance(calibration, Calibration):
        profile = calibration
    else:
        profile = calibration_for(timeline, Path(calibration))
    step_ns: int | None = None
    by_name: dict[str, int] = {}
    if isinstance(eager_us, Mapping):
        by_name = {str(name): us_to_ns(float(us)) for name, us in eager_us.items()}
    elif eager_us is not None:
        step_ns = us_to_ns(float(eager_us))
    return diagnose(
        timeline,
        calibration=profile,
        eager_unprofiled_ns=step_ns,
        eager_by_name=by_name or None,
    )
