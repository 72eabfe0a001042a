"""Where reports go: files are never overwritten without ``--force``; ``-`` means stdout.

Single files go through :mod:`traceinspect.files` (atomic, never over an input, one line per
failure); this module adds the CSV folder and streamed binary outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import IO

from traceinspect.errors import UsageError
from traceinspect.files import atomic_path, check_outputs, check_writable, write_output

write_text = write_output

__all__ = [
    "check_csv_dir",
    "check_outputs",
    "check_writable",
    "write_binary",
    "write_output",
    "write_text",
]


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
    """Stream ``write(file)`` into ``target`` atomically (a temporary file, then a rename;
    the temporary file is removed on every way out)."""
    check_writable(target, force=force)
    with atomic_path(target) as tmp, tmp.open("wb") as out:
        write(out)
