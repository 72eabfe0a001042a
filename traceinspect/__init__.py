"""traceinspect: is a PyTorch workload launch-bound, and what would CUDA Graph replay save?

The analysis reads profiler traces (``traceinspect analyze``). Scripts run under
``traceinspect profile`` can also use this small API, which imports neither torch nor
anything heavy and does nothing costly outside a profiled run:

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

from traceinspect.collect.candidates import graph_candidate
from traceinspect.collect.regions import is_recording, region

__all__ = ["graph_candidate", "is_recording", "region"]
