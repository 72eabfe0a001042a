"""Where reports go: files are never overwritten without ``--force``; ``-`` means stdout."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

from traceinspect.errors import UsageError


def check_writable(path: Path, *, force: bool) -> None:
    """Fail early (before any analysis) when ``path`` exists and ``force`` is not set."""
    if path.exists() and not force:
        raise UsageError(f"{path}: already exists (use --force to overwrite)")
    if path.exists() and path.is_dir():
        raise UsageError(f"{path}: is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{path}: folder {parent} does not exist")


def check_csv_dir(folder: Path, *, force: bool) -> None:
    """``folder`` can take the CSV tables: a folder (created if absent, with its parent
    existing) whose tables are not there yet unless ``force``."""
    from traceinspect.report.csv_export import CSV_FILES

    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder}: exists and is not a folder")
    if not folder.exists():
        parent = folder.parent if str(folder.parent) else Path(".")
        if not parent.is_dir():
            raise UsageError(f"{folder}: folder {parent} does not exist")
        folder.mkdir()
        return
    for name in CSV_FILES:
        check_writable(folder / name, force=force)


def write_binary(
    target: Path, write: Callable[[IO[bytes]], object], *, force: bool
) -> None:
    """Stream ``write(file)`` into ``target`` atomically (a temporary file, then a rename)."""
    check_writable(target, force=force)
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        with tmp.open("wb") as out:
            write(out)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{target}: cannot write ({exc.strerror})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(target: str | Path, text: str, *, force: bool) -> None:
    """Write ``text`` to ``target`` (``"-"`` = stdout), atomically for files."""
    if str(target) == "-":
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return
    path = Path(target)
    check_writable(path, force=force)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"{path}: cannot write ({exc.strerror})") from None
