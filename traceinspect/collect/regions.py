"""``traceinspect.region``: name a part of the workload so the analysis can report on it.

A region records when something listens:

- while a PyTorch profiler records (``traceinspect profile``, or the user's own
  ``torch.profiler.profile``) it opens a ``torch.profiler.record_function`` range (it lands in
  the Kineto trace as a ``user_annotation``) and an NVTX range;
- while an NVTX tool is attached — Nsight Systems (``nsys profile python script.py``,
  ``traceinspect profile --nsys``) or any other NVTX injection — it opens an NVTX range, with
  or without a profiler.

Otherwise entering and leaving a region costs a few attribute lookups and a list append/pop
(README "Recording with Nsight Systems" has the measured costs).

Whether a profiler records is read from torch's own flag
(``torch.autograd.profiler._is_profiler_enabled``, set by every profiler start since torch
2.1), looked up through ``sys.modules`` so that a script that never imports torch never does.
Whether an NVTX tool is attached is decided once per process, on the first region: a tool
is injected through the environment the process starts with (:data:`NVTX_TOOL_ENVIRONMENT`);
where none of those is set but the ``nvtx`` package is already imported, it is asked (its
default domain is a no-op dummy unless a tool is attached). NVTX ranges are written through
the ``nvtx`` package when installed, else ``torch.cuda.nvtx``.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_Range = tuple[Any, Callable[[], object] | None]
_NvtxFunctions = tuple[Callable[[str], object], Callable[[], object]]

#: Environment variables through which an NVTX tool is injected into a process: Nsight
#: Systems sets the first (its session) and the injection paths; other tools (Nsight
#: Compute, DLProf, custom NVTX handlers) set ``NVTX_INJECTION64_PATH``.
NVTX_TOOL_ENVIRONMENT: Final = (
    "NSYS_PROFILING_SESSION_ID",
    "NVTX_INJECTION64_PATH",
    "NVTX_INJECTION32_PATH",
    "CUDA_INJECTION64_PATH",
)

_UNRESOLVED: Final = object()
_nvtx_functions: object = _UNRESOLVED  # how to write NVTX ranges; resolved once
_tool_functions: object = _UNRESOLVED  # the same when a tool listens, else None


class region:  # noqa: N801 - used like a function: ``with traceinspect.region("decode"):``
    """A named range: ``with region("decode"): ...``, or ``@region("decode")`` on a function.

    Nesting and re-entry are fine; one instance may be entered again before it is left
    (recursion). As a decorator it opens a fresh range per call, so threads don't mix.
    """

    __slots__ = ("name", "_open")

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"region name must be a non-empty string, got {name!r}")
        self.name = name
        self._open: list[_Range | None] = []

    def __enter__(self) -> region:
        if _tool_functions is None and not _recording():
            self._open.append(None)  # nothing listens: the common case, kept short
        else:
            self._open.append(_open_range(self.name))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        opened = self._open.pop()
        if opened is not None:
            _close_range(opened)

    def __call__(self, fn: Callable[P, R]) -> Callable[P, R]:
        name = self.name

        @functools.wraps(fn)
        def in_region(*args: P.args, **kwargs: P.kwargs) -> R:
            if _tool_functions is None and not _recording():
                return fn(*args, **kwargs)
            opened = _open_range(name)
            if opened is None:
                return fn(*args, **kwargs)
            try:
                return fn(*args, **kwargs)
            finally:
                _close_range(opened)

        return in_region

    def __repr__(self) -> str:
        return f"region({self.name!r})"


def is_recording() -> bool:
    """True while a PyTorch profiler records in this process (regions then record too)."""
    return _recording()


def nvtx_tool_attached() -> bool:
    """True when an NVTX tool (Nsight Systems, another injection) listens to this process."""
    return _nvtx_tool() is not None


def _recording() -> bool:
    profiler = sys.modules.get("torch.autograd.profiler")
    return profiler is not None and getattr(profiler, "_is_profiler_enabled", False) is True


def _open_range(name: str) -> _Range | None:
    """Open what listens: record_function + NVTX under a profiler, NVTX for a tool, or
    nothing (``None``)."""
    nvtx: _NvtxFunctions | None
    if _recording():
        record_function = sys.modules["torch.autograd.profiler"].record_function(name)
        record_function.__enter__()
        nvtx = _nvtx()
    else:
        nvtx = _nvtx_tool()
        if nvtx is None:
            return None
        record_function = None
    if nvtx is None:
        return (record_function, None)
    push, pop = nvtx
    push(name)
    return (record_function, pop)


def _close_range(opened: _Range) -> None:
    record_function, pop = opened
    if pop is not None:
        pop()
    if record_function is not None:
        record_function.__exit__(None, None, None)


def _nvtx_tool() -> _NvtxFunctions | None:
    global _tool_functions
    if _tool_functions is _UNRESOLVED:
        _tool_functions = _nvtx() if _tool_listens() else None
    return _tool_functions  # type: ignore[return-value]


def _tool_listens() -> bool:
    if any(os.environ.get(name) for name in NVTX_TOOL_ENVIRONMENT):
        return True
    nvtx = sys.modules.get("nvtx")
    if nvtx is None:
        return False  # importing it only to ask would cost every script a few ms
    try:
        from nvtx._lib import dummy_domain

        return nvtx.get_domain() is not dummy_domain
    except (ImportError, AttributeError):
        return False


def _nvtx() -> _NvtxFunctions | None:
    global _nvtx_functions
    if _nvtx_functions is _UNRESOLVED:
        _nvtx_functions = _resolve_nvtx()
    return _nvtx_functions  # type: ignore[return-value]


def _resolve_nvtx() -> _NvtxFunctions | None:
    try:
        import nvtx
    except ImportError:
        nvtx = None
    if nvtx is not None:
        push_range, pop_range = nvtx.push_range, nvtx.pop_range
        return (lambda name: push_range(message=name), lambda: pop_range())
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return (torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop)
    return None
