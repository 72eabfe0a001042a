"""Run a user's script the way ``python script.py args`` would, in this process.

``sys.argv`` becomes ``[script, *args]``, ``sys.path[0]`` the script's folder, the script
runs as ``__main__`` (``runpy.run_path``); argv and path are restored afterwards and the
working directory is left alone. Its exit status is kept: ``sys.exit(n)`` gives ``n``, an
uncaught exception prints its traceback (from the script's own frames down, as Python would)
and gives 1, Ctrl-C gives 130.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import threading
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final, TextIO

#: Exit status of a script stopped by Ctrl-C (128 + SIGINT, as shells report it).
INTERRUPTED_STATUS: Final = 130


@dataclass(frozen=True)
class ScriptOutcome:
    """How the script ended. ``error_type``/``error_message`` describe an uncaught exception."""

    exit_status: int
    error_type: str | None = None
    error_message: str | None = None
    interrupted: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "exit_status": self.exit_status,
            "error_type": self.error_type,
            "error_message": self.error_message,
            "interrupted": self.interrupted,
        }


class _HardExit(BaseException):
    """The script called ``os._exit(status)`` in its main thread: unwound instead, so the
    trace is exported (a plain ``except Exception`` in the script does not catch it)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def run_script(script: Path, args: Sequence[str], *, stderr: TextIO | None = None) -> ScriptOutcome:
    """Run ``script`` as ``__main__`` with ``args``; never raises for the script's own errors.

    Faults of the script stay the script's: a forked child that returns from the script
    leaves at once with its status (it never runs the collector's exit path); ``os._exit``
    in the main thread ends the script like ``sys.exit`` (the trace is kept); stdout and
    stderr closed by the script are reopened on their original descriptors.
    """
    err = sys.stderr if stderr is None else stderr
    script = script.absolute()
    # Python puts the script's real folder (links resolved) first on the path.
    folder = str(script.resolve().parent)
    saved_argv = sys.argv
    saved_path = list(sys.path)
    saved_streams = _save_std_streams()
    sys.argv = [str(script), *args]  # runpy sets argv[0] to the path it runs
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    parent = os.getpid()
    real_exit = os._exit
    main_thread = threading.main_thread()

    def hard_exit(status: int) -> None:
        if os.getpid() != parent or threading.current_thread() is not main_thread:
            real_exit(status)
        raise _HardExit(status)

    os._exit = hard_exit  # type: ignore[assignment]
    outcome = ScriptOutcome(0)
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        outcome = _exit_outcome(exc.code, err)
    except _HardExit as exc:
        outcome = ScriptOutcome(exc.status, "os._exit", f"os._exit({exc.status})")
    except KeyboardInterrupt as exc:
        if os.getpid() == parent:
            _print_exception(exc, script, err)
        status = getattr(exc, "exit_status", INTERRUPTED_STATUS)
        outcome = ScriptOutcome(status, type(exc).__name__, str(exc), interrupted=True)
    except BaseException as exc:  # noqa: BLE001 - the script's error is reported, not raised
        _print_exception(exc, script, err)
        outcome = ScriptOutcome(1, type(exc).__name__, _safe_str(exc))
    finally:
        os._exit = real_exit
        if os.getpid() != parent:  # a forked child of the script: its work is done
            _leave_child(outcome.exit_status)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        _restore_std_streams(saved_streams)
    return outcome


def _leave_child(status: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(status & 0xFF)


def _safe_str(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder when the exception's ``__str__`` itself raises."""
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - any failure of user code
        return f"<{type(exc).__name__}: str() failed>"


def _save_std_streams() -> list[tuple[str, int, TextIO | None, int | None]]:
    """(name, fd, stream, a duplicate of fd) for stdout and stderr."""
    saved = []
    for name, fd in (("stdout", 1), ("stderr", 2)):
        try:
            copy: int | None = os.dup(fd)
        except OSError:
            copy = None
        saved.append((name, fd, getattr(sys, name), copy))
    return saved


def _restore_std_streams(saved: list[tuple[str, int, TextIO | None, int | None]]) -> None:
    """Undo what the script did to stdout/stderr: a closed stream or descriptor comes back."""
    for name, fd, stream, copy in saved:
        if copy is None:
            continue
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(copy, fd)  # the script closed the descriptor itself
        current = getattr(sys, name)
        if current is None or getattr(current, "closed", False):
            if stream is not None and not stream.closed:
                setattr(sys, name, stream)
            else:
                setattr(sys, name, open(fd, "w", buffering=1, closefd=False))  # noqa: SIM115
        os.close(copy)


def _exit_outcome(code: object, err: TextIO) -> ScriptOutcome:
    # Python's own rules for SystemExit: None is 0, an int is the status, anything else is
    # printed to stderr and gives 1.
    if code is None:
        return ScriptOutcome(0)
    if isinstance(code, int) and not isinstance(code, bool):
        return ScriptOutcome(code)
    print(code, file=err)
    return ScriptOutcome(1, "SystemExit", str(code))


def _print_exception(exc: BaseException, script: Path, err: TextIO) -> None:
    traceback.print_exception(type(exc), exc, _from_script(exc.__traceback__, script), file=err)
    err.flush()


def _from_script(tb: TracebackType | None, script: Path) -> TracebackType | None:
    """The traceback from the script's first frame on, hiding the runner and runpy.

    ``None`` when no frame is the script's (a syntax error): Python then prints the error
    without a traceback, as it does for ``python script.py``.
    """
    target = str(script)
    while tb is not None and tb.tb_frame.f_code.co_filename != target:
        tb = tb.tb_next
    return tb
