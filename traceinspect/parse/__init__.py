"""Readers: one module per input format, each returning a :class:`~traceinspect.model.Timeline`.

:func:`load_trace` picks the reader from the file's content, never its suffix.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from traceinspect.errors import TraceFormatError
from traceinspect.files import is_stream, local_copy
from traceinspect.model import Timeline

GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"
UTF8_BOM = b"\xef\xbb\xbf"  # some Windows tools write one before JSON


def sniff(path: Path) -> str:
    """Return ``"json"``, ``"json.gz"``, ``"sqlite"``, ``"sqlite.gz"`` or ``"nsys-rep"``
    from the first bytes (of the decompressed stream for gzip)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except FileNotFoundError:
        raise TraceFormatError(path, "no such file") from None
    except IsADirectoryError:
        raise TraceFormatError(path, "is a directory, not a trace file") from None
    except OSError as exc:
        raise TraceFormatError(path, f"cannot read ({exc.strerror})") from None
    if not head:
        raise TraceFormatError(path, "empty file")
    if head.startswith(GZIP_MAGIC):
        return "sqlite.gz" if _gunzipped_head(path).startswith(SQLITE_MAGIC) else "json.gz"
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if path.suffix in (".nsys-rep", ".qdrep") or head[:4] in (b"NSYS",):
        return "nsys-rep"
    if head.removeprefix(UTF8_BOM).lstrip()[:1] in (b"{", b"["):
        return "json"
    raise TraceFormatError(
        path, "not a trace: expected PyTorch-profiler JSON (.json/.json.gz) or an nsys export"
    )


def _gunzipped_head(path: Path) -> bytes:
    """The first bytes of the decompressed stream; ``b""`` when it cannot be decompressed
    (the reader then reports the corrupt gzip)."""
    try:
        with gzip.open(path, "rb") as f:
            return f.read(len(SQLITE_MAGIC))
    except (EOFError, gzip.BadGzipFile, zlib.error, OSError):
        return b""


def load_trace(path: str | Path, *, workers: int | None = None) -> Timeline:
    """Read any supported trace into a :class:`Timeline`. ``workers``: processes for one
    large Kineto JSON file (default: one per core; 1 where the caller runs in parallel)."""
    path = Path(path)
    if is_stream(path):  # stdin, a FIFO, <(zcat t.json.gz): read once into a private copy
        return _load_stream(path, workers)
    kind = sniff(path)
    if kind in ("json", "json.gz"):
        from traceinspect.parse.kineto import read_kineto

        return read_kineto(path, workers=workers)
    from traceinspect.parse.nsys import read_nsys

    return read_nsys(path)


def _load_stream(path: Path, workers: int | None) -> Timeline:
    """:func:`load_trace` of a stream's private copy; messages and the result name ``path``."""
    import dataclasses

    with local_copy(path) as copy:
        try:
            timeline = load_trace(copy, workers=workers)
        except TraceFormatError as exc:
            raise TraceFormatError(path, exc.problem) from None
    meta = dataclasses.replace(timeline.meta, path=str(path))
    return dataclasses.replace(timeline, meta=meta)
