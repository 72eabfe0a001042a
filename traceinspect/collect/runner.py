"""Run a user's script the way ``python script.py args`` would, in this process.

``sys.argv`` becomes ``[script, *args]``, ``sys.path[0]`` the script's folder, the script
runs as ``__main__`` (``runpy.run_path``); argv and path are restored afterwards and the
working directory is left alone. Its exit status is kept: ``sys.exit(n)`` gives ``n``, an
uncaught exception prints its traceback (from the script's own frames down, as Python would)
and gives 1, Ctrl-C gives 130.
"""

from __future__ import annotations

import runpy
import sys
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


def run_script(script: Path, args: Sequence[str], *, stderr: TextIO | None = None) -> ScriptOutcome:
    """Run ``script`` as ``__main__`` with ``args``; never raises for the script's own errors."""
    err = sys.stderr if stderr is None else stderr
    script = script.absolute()
    # Python puts the script's real folder (links resolved) first on the path.
    folder = str(script.resolve().parent)
    saved_argv = sys.argv
    saved_path = list(sys.path)
    sys.argv = [str(script), *args]  # runpy sets argv[0] to the path it runs
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return _exit_outcome(exc.code, err)
    except KeyboardInterrupt as exc:
        _print_exception(exc, script, err)
        return ScriptOutcome(INTERRUPTED_STATUS, "KeyboardInterrupt", "", interrupted=True)
    except BaseException as exc:  # noqa: BLE001 - the script's error is reported, not raised
        _print_exception(exc, script, err)
        return ScriptOutcome(1, type(exc).__name__, str(exc))
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return ScriptOutcome(0)


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
