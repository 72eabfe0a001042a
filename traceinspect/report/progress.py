"""Progress on stderr for work that takes a while: shown on a terminal only, after a delay.

A command wraps each stage (reading, diagnosing, writing) in :meth:`Progress.stage`. Nothing is
drawn until the work has run for :data:`SHOW_AFTER_S`, so quick runs print nothing extra;
nothing is drawn at all when stderr is not a terminal or with ``--quiet``. The display is
transient: it disappears when the work is done, leaving the report alone on screen.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Final

from rich.console import Console
from rich.progress import (
    Progress as RichProgress,
)
from rich.progress import (
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from traceinspect.sanitize import make_console

#: Work shorter than this shows no progress at all (a flash of a spinner is noise).
SHOW_AFTER_S: Final = 1.0
#: Environment variable that sets another delay in seconds (``0``: show at once).
SHOW_AFTER_ENV: Final = "TRACEINSPECT_PROGRESS_AFTER_S"


def default_show_after_s() -> float:
    """The delay before progress is drawn: ``$TRACEINSPECT_PROGRESS_AFTER_S`` when it holds a
    finite number of seconds >= 0, else :data:`SHOW_AFTER_S`."""
    text = os.environ.get(SHOW_AFTER_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return SHOW_AFTER_S
    return value if math.isfinite(value) and value >= 0 else SHOW_AFTER_S


class Progress:
    """Stages of one command, drawn on ``console`` (default: stderr) once they take long."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        console: Console | None = None,
        show_after_s: float | None = None,
    ) -> None:
        self.console = console or make_console(stderr=True)
        self.enabled = not quiet and self.console.is_terminal
        self._show_after_s = show_after_s if show_after_s is not None else default_show_after_s()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._shown = False
        self._closed = False
        self._started = time.monotonic()
        self._rich = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )

    def __enter__(self) -> Progress:
        if self.enabled:
            self._started = time.monotonic()
            self._timer = threading.Timer(self._show_after_s, self._show)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def shown(self) -> bool:
        """Whether the display has been drawn (the work outlasted the delay)."""
        return self._shown

    @contextmanager
    def stage(self, description: str) -> Iterator[None]:
        """One step of the work, e.g. ``reading trace.json.gz (312 MB)``."""
        if not self.enabled:
            yield
            return
        task: TaskID = self._rich.add_task(description, total=None)
        try:
            yield
        finally:
            self._rich.remove_task(task)

    def _show(self) -> None:
        with self._lock:
            if not self._closed and not self._shown:
                self._rich.start()
                self._shown = True

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._shown:
                self._rich.stop()


def file_label(path: object) -> str:
    """``name (312 MB)`` for a path, for stage descriptions."""
    from pathlib import Path

    p = Path(str(path))
    try:
        size = p.stat().st_size
    except OSError:
        return p.name
    return f"{p.name} ({_size(size)})"


def _size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    raise AssertionError("unreachable")
