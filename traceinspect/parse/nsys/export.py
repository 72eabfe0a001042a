"""Getting an nsys export to read: gzipped exports and ``.nsys-rep`` reports.

A gzipped export is decompressed into a private temporary directory that is deleted
afterwards; a ``.nsys-rep``/``.qdrep`` report is exported through the ``nsys`` binary on
PATH into a per-user cache (never beside the report).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from traceinspect.errors import TraceFormatError

EXPORT_HINT: Final = "export it first: nsys export --type sqlite -o report.sqlite report.nsys-rep"
MESSAGE_CHARS: Final = 200  # longest library message quoted in a one-line error


@contextlib.contextmanager
def _gunzipped(path: Path) -> Iterator[Path]:
    """``path`` decompressed into a private temporary directory, removed on exit."""
    with tempfile.TemporaryDirectory(prefix="traceinspect-") as tmp:
        plain = Path(tmp) / "export.sqlite"
        try:
            with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst, length=1 << 20)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise TraceFormatError(path, f"truncated or corrupt gzip ({_one_line(exc)})") from None
        except OSError as exc:
            raise TraceFormatError(path, f"cannot decompress ({_one_line(exc)})") from None
        yield plain


def cache_dir() -> Path:
    """Where exports of ``.nsys-rep`` reports are kept: ``$XDG_CACHE_HOME/traceinspect``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "traceinspect"


def export_report(report: Path) -> Path:
    """The SQLite export of ``report``, made with ``nsys export`` into :func:`cache_dir`.

    The cache key is the report's resolved path, size and mtime, so an edited or replaced
    report is exported again. The user's file and its folder are never written.
    """
    nsys = shutil.which("nsys")
    if nsys is None:
        raise TraceFormatError(report, f"nsys is not on PATH to read this report; {EXPORT_HINT}")
    try:
        stat = report.stat()
    except OSError as exc:
        raise TraceFormatError(report, f"cannot read ({exc.strerror})") from None
    key_text = f"{report.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}"
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    folder = cache_dir()
    target = folder / f"{report.stem}-{key}.sqlite"
    if target.is_file():
        return target
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TraceFormatError(
            report, f"cannot create cache folder {folder} ({_one_line(exc)})"
        ) from None
    partial = folder / f"{report.stem}-{key}.{os.getpid()}.partial.sqlite"
    command = [nsys, "export", "--type", "sqlite", "--force-overwrite", "true"]
    command += ["--output", str(partial), str(report)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TraceFormatError(
            report, f"cannot run {nsys} ({_one_line(exc)}); {EXPORT_HINT}"
        ) from None
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = (done.stderr or done.stdout or "").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}"
        raise TraceFormatError(report, f"nsys export failed: {_one_line(why)}")
    os.replace(partial, target)
    return target


def _one_line(problem: object) -> str:
    """The first line of ``problem``, shortened: errors are one line on stderr."""
    lines = str(problem).strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"
