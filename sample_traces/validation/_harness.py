"""What the one-process experiment scripts here (``eager_drift.py``, ``stack_cost.py``,
``clock_drift.py``, ``replay_under_profiler.py``, ``stack_linger.py``) share: loading a
workload script's module, and capturing its step as a CUDA graph the way the collector does
(three warm-up calls on a side stream, static copies of the inputs)."""

from __future__ import annotations

import importlib.util
import sys
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
