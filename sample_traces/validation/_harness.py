"""What the one-process experiment scripts here (``eager_drift.py``, ``stack_cost.py``,
``clock_drift.py``, ``replay_under_profiler.py``, ``stack_linger.py``, ``replay_parts.py``)
share: loading a workload script's module, capturing its step as a CUDA graph the way the
collector does (three warm-up calls on a side stream, static copies of the inputs), and
timing a call synchronized (host wall) or between CUDA events (GPU time)."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch


def load_workload(script: Path) -> Any:
    """The module of a workload script (``build(device, smoke)``), its folder importable."""
    sys.path.insert(0, str(script.resolve().parent))
    spec = importlib.util.spec_from_file_location(script.stem, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def capture(
    fn: Callable[..., Any], inputs: Sequence[Any], warmup: int = 3
) -> tuple[torch.cuda.CUDAGraph, tuple[Any, ...]]:
    """``fn`` on static copies of ``inputs`` captured as one CUDA graph, after ``warmup``
    calls on a side stream; the graph and its static inputs."""
    static = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn(*static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn(*static)
    return graph, static


def synchronized_ns(
    fn: Callable[[], Any], steps: int, sync: Callable[[], None] | None = None
) -> list[int]:
    """Host wall time of ``fn()`` then ``sync()`` (default ``torch.cuda.synchronize``), ns,
    ``steps`` times."""
    sync = sync or torch.cuda.synchronize
    times = []
    for _ in range(steps):
        start = time.perf_counter_ns()
        fn()
        sync()
        times.append(time.perf_counter_ns() - start)
    return times


def event_ns(fn: Callable[[], Any], steps: int) -> list[float]:
    """GPU time of ``fn()`` between two CUDA events, ns, ``steps`` times."""
    times = []
    for _ in range(steps):
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        end.synchronize()
        times.append(begin.elapsed_time(end) * 1e6)
    return times
