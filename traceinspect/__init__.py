"""traceinspect: is a PyTorch workload launch-bound, and what would CUDA Graph replay save?

Analysis of a profiler trace, from Python (as ``traceinspect analyze`` does it):

``load(path)``
    the trace's timeline: pandas DataFrames of kernels, launches, copies, syncs,
    annotations (integer ns).
``analyze(path_or_timeline, calibration=..., eager_us=...)``
    a :class:`TraceAnalysis`: ``.regions``, ``.kernels``, ``.gaps`` (each idle gap with its
    ``cause``) and ``.health`` as DataFrames, and the typed objects behind them.

Both import pandas only when called. Scripts run under ``traceinspect profile`` can also
use this small API, which imports neither torch nor anything heavy and does nothing costly
outside a profiled run:

``region(name)``
    context manager and decorator naming a part of the workload (an NVTX range and a
    ``torch.profiler.record_function`` range while a profiler records; a no-op otherwise).
``graph_candidate(name, fn, example_inputs, buckets=..., request_mix=...)``
    offers a callable to be captured and replayed as a CUDA graph, per batch-size bucket;
    ``traceinspect profile`` measures it after the script ends.
``is_recording()``
    whether a PyTorch profiler records in this process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from traceinspect.api import analyze, load
from traceinspect.collect.candidates import graph_candidate
from traceinspect.collect.regions import is_recording, region

if TYPE_CHECKING:
    from traceinspect.analysis.result import RegionDiagnosis, TraceAnalysis
    from traceinspect.model import Timeline

__all__ = [
    "RegionDiagnosis",
    "Timeline",
    "TraceAnalysis",
    "analyze",
    "graph_candidate",
    "is_recording",
    "load",
    "region",
]

#: Types named in ``__all__`` that would import pandas: loaded on first access.
_LAZY_TYPES = {
    "RegionDiagnosis": "traceinspect.analysis.result",
    "TraceAnalysis": "traceinspect.analysis.result",
    "Timeline": "traceinspect.model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_TYPES.get(name)
    if module is None:
        raise AttributeError(f"module 'traceinspect' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
