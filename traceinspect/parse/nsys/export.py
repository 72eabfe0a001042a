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
import sqlite3
import subprocess
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from traceinspect.errors import TraceFormatError

EXPORT_HINT: Final = "export it first: nsys export --type sqlite -o report.sqlite report.nsys-rep"
MESSAGE_CHARS: Final = 200  # longest library message quoted in a one-line error
#: Largest SQLite a ``.sqlite.gz`` may inflate to in the temporary folder (nsys exports of
#: long runs reach a few GB); beyond it the file is refused with one line.
MAX_INFLATED_BYTES: Final = 16 << 30
#: How long ``nsys export`` may run (a 1 GB report exports in about a minute).
NSYS_EXPORT_TIMEOUT_S: Final = 600.0
#: How long ``nsys --version`` may run.
NSYS_VERSION_TIMEOUT_S: Final = 30.0


@contextlib.contextmanager
def _gunzipped(path: Path) -> Iterator[Path]:
    """``path`` decompressed into a private temporary directory, removed on exit."""
    with tempfile.TemporaryDirectory(prefix="traceinspect-") as tmp:
        plain = Path(tmp) / "export.sqlite"
        try:
            with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                _copy_capped(src, dst, path)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise TraceFormatError(path, f"truncated or corrupt gzip ({_one_line(exc)})") from None
        except OSError as exc:
            raise TraceFormatError(path, f"cannot decompress ({_one_line(exc)})") from None
        yield plain


def _copy_capped(src: gzip.GzipFile, dst: IO[bytes], path: Path) -> None:
    """Inflate ``src`` into ``dst``, at most :data:`MAX_INFLATED_BYTES`."""
    written = 0
    while block := src.read(1 << 20):
        written += len(block)
        if written > MAX_INFLATED_BYTES:
            raise TraceFormatError(
                path,
                f"decompresses to more than {MAX_INFLATED_BYTES >> 30} GiB, the most read "
                "from a .sqlite.gz; decompress it yourself (gunzip -k) and pass the .sqlite",
            )
        dst.write(block)


def cache_dir() -> Path:
    """Where exports of ``.nsys-rep`` reports are kept: ``$XDG_CACHE_HOME/traceinspect``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "traceinspect"


def export_report(report: Path) -> Path:
    """The SQLite export of ``report``, made with ``nsys export`` into :func:`cache_dir`.

    The cache key is the report's content (SHA-256) and the nsys version, so an edited or
    replaced report, or another nsys, exports again; an export is cached only once it opens
    as an nsys SQLite export (a failed or garbage export is never reused); ``nsys`` runs
    under :data:`NSYS_EXPORT_TIMEOUT_S`. The user's file and its folder are never written.
    """
    nsys = shutil.which("nsys")
    if nsys is None:
        raise TraceFormatError(report, f"nsys is not on PATH to read this report; {EXPORT_HINT}")
    key = _cache_key(report, nsys)
    folder = cache_dir()
    target = folder / f"{report.stem}-{key}.sqlite"
    if target.is_file():
        return target
    # The same content under another name (a copied or renamed report) is the same export.
    same = sorted(folder.glob(f"*-{key}.sqlite")) if folder.is_dir() else []
    if same:
        return same[0]
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
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=NSYS_EXPORT_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise TraceFormatError(
            report, f"nsys export ran longer than {NSYS_EXPORT_TIMEOUT_S:g} s; {EXPORT_HINT}"
        ) from None
    except OSError as exc:
        raise TraceFormatError(
            report, f"cannot run {nsys} ({_one_line(exc)}); {EXPORT_HINT}"
        ) from None
    finally:
        if not partial.is_file() or not _valid_export(partial):
            partial.unlink(missing_ok=True)
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = (done.stderr or done.stdout or "").strip().splitlines()
        why = lines[-1] if lines else "it wrote no SQLite export"
        if done.returncode != 0 and not lines:
            why = f"exit status {done.returncode}"
        raise TraceFormatError(report, f"nsys export failed: {_one_line(why)}")
    os.replace(partial, target)
    return target


def _cache_key(report: Path, nsys: str) -> str:
    """SHA-256 of the report's bytes and of ``nsys --version``, shortened."""
    digest = hashlib.sha256()
    try:
        with open(report, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError as exc:
        raise TraceFormatError(report, f"cannot read ({exc.strerror})") from None
    digest.update(b"\0" + _nsys_version(nsys).encode())
    return digest.hexdigest()[:24]


def _nsys_version(nsys: str) -> str:
    try:
        done = subprocess.run(
            [nsys, "--version"],
            capture_output=True,
            text=True,
            check=False,
            timeout=NSYS_VERSION_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def _valid_export(db: Path) -> bool:
    """Whether ``db`` opens as SQLite and holds an nsys export's tables (checked before it
    is cached, so garbage from a failed export is never reused)."""
    uri = f"{db.resolve().as_uri()}?mode=ro&immutable=1"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error:
        return False
    return bool(names & {"StringIds", "META_DATA_EXPORT", "CUPTI_ACTIVITY_KIND_KERNEL"})


def _one_line(problem: object) -> str:
    """The first line of ``problem``, shortened: errors are one line on stderr."""
    lines = str(problem).strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"
