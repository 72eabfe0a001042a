"""``traceinspect.region``: name a part of the workload so the analysis can report on it.

A region records only while a PyTorch profiler is recording (``traceinspect profile``, or the
user's own ``torch.profiler.profile``): it then opens a ``torch.profiler.record_function``
range (it lands in the Kineto trace as a ``user_annotation``) and an NVTX range (the ``nvtx``
package when installed, else ``torch.cuda.nvtx`` when CUDA is available) for Nsight Systems.
Otherwise entering and leaving a region costs two attribute lookups and a list append/pop.

Whether a profiler records is read from torch's own flag
(``torch.autograd.profiler._is_profiler_enabled``, set by every profiler start since torch
2.1), looked up through ``sys.modules`` so that a script that never imports torch never does.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, Final, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_Range = tuple[Any, Callable[[], object] | None]
_NvtxFunctions = tuple[Callable[[str], object], Callable[[], object]]

_UNRESOLVED: Final = object()
_nvtx_functions: object = _UNRESOLVED  # resolved once, on the first recorded region


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
        self._open.append(_open_range(self.name) if _recording() else None)
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
            if not _recording():
                return fn(*args, **kwargs)
            opened = _open_range(name)
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


def _recording() -> bool:
    profiler = sys.modules.get("torch.autograd.profiler")
    return profiler is not None and getattr(profiler, "_is_profiler_enabled", False) is True


def _open_range(name: str) -> _Range:
    record_function = sys.modules["torch.autograd.profiler"].record_function(name)
    record_function.__enter__()
    nvtx = _nvtx()
    if nvtx is None:
        return (record_function, None)
    push, pop = nvtx
    push(name)
    return (record_function, pop)


def _close_range(opened: _Range) -> None:
    record_function, pop = opened
    if pop is not None:
        pop()
    record_function.__exit__(None, None, None)


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
