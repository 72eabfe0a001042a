"""Where reports go: files are never overwritten without ``--force``; ``-`` means stdout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
