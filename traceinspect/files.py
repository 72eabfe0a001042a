"""Files in and out, safely: nothing lost, nothing let in.

Outputs (:func:`check_outputs`, :func:`write_atomic`, :func:`atomic_path`, :func:`write_stdout`)

* are never written over an input: paths are compared by device and inode (so a symlink
  or hard link to the trace is caught) and by their resolved location;
* never share a path, and at most one of them is stdout (``-``);
* are never overwritten without ``--force``;
* are written atomically: into a temporary file in the destination folder, then renamed
  over the target. The temporary file is removed on every way out (errors, Ctrl-C, and
  SIGTERM/SIGHUP, which :func:`install_signal_handlers` turns into exceptions);
* fail with one line naming the path and the reason (read-only folder, full disk, closed or
  broken stdout): :class:`OutputError`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any, Final, TextIO

from traceinspect.errors import TraceFormatError, TraceinspectError, UsageError

STDOUT: Final = "-"


class OutputError(TraceinspectError):
    """An output could not be written (the path and the reason are in the message)."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: unwinds like Ctrl-C (``finally`` blocks run, temporary
    files go), and the process exits with ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


#: The last SIGTERM/SIGHUP received (0: none), for when a library re-raises the exception
#: as a plain KeyboardInterrupt (click does).
_received: list[int] = [0]


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    _received[0] = signum
    raise Terminated(signum)


def received_signal() -> int:
    """The number of the last SIGTERM/SIGHUP turned into :class:`Terminated`, or 0."""
    return _received[0]


def install_signal_handlers() -> dict[int, Any]:
    """SIGTERM and SIGHUP raise :class:`Terminated` in the main thread (where the CLI runs).

    Returns the handlers replaced, for :func:`restore_signal_handlers`.
    """
    previous: dict[int, Any] = {}
    _received[0] = 0
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread / unsupported
            previous[sig] = signal.signal(sig, _raise_terminated)
    # A process inherits the signal mask of the thread that started it: a launcher that
    # blocked SIGTERM while spawning (as multiprocessing's helpers do for a moment) would
    # leave the signal pending forever, and the run unstoppable but by SIGKILL.
    with contextlib.suppress(AttributeError, ValueError, OSError):  # no pthread_sigmask
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGHUP))
    return previous


def restore_signal_handlers(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(sig, handler)


def _reason(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc) or "I/O error"


# ------------------------------------------------------------------------------- outputs


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` points to (links followed), or None if nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _location(path: Path) -> str:
    """Where ``path`` would be written: its folder resolved, plus its name."""
    try:
        return os.path.join(os.path.realpath(path.parent), path.name)
    except (OSError, ValueError):
        return str(path.absolute())


def check_outputs(
    outputs: Sequence[tuple[str, str | Path | None]],
    *,
    inputs: Sequence[Path] = (),
    force: bool,
) -> None:
    """Refuse, before any work, outputs that would clobber an input, each other, or an
    existing file (without ``force``). ``outputs`` pairs an option name with its value
    (``None`` when not given, ``"-"`` for stdout)."""
    given = [(option, value) for option, value in outputs if value is not None]
    on_stdout = [option for option, value in given if str(value) == STDOUT]
    if len(on_stdout) > 1:
        raise UsageError(f"{' and '.join(on_stdout)} cannot both write to stdout ('-')")
    seen: dict[object, str] = {}
    input_ids = {_identity(p) for p in inputs} - {None}
    input_locations = {_location(p) for p in inputs}
    for option, value in given:
        if str(value) == STDOUT:
            continue
        path = Path(value)
        check_writable(path, force=force)
        ident = _identity(path)
        location = _location(path)
        if (ident is not None and ident in input_ids) or location in input_locations:
            raise UsageError(f"{path}: {option} would overwrite an input (choose another path)")
        for key in (ident, location):
            if key is None:
                continue
            if key in seen:
                raise UsageError(f"{path}: {seen[key]} and {option} would write the same file")
            seen[key] = option


def check_writable(path: Path, *, force: bool) -> None:
    """Fail early (before any analysis) when ``path`` exists and ``force`` is not set, is a
    folder, or its folder does not exist."""
    try:
        exists = path.exists()
        is_dir = path.is_dir()
        parent = path.parent if str(path.parent) else Path(".")
        parent_ok = parent.is_dir()
    except (OSError, ValueError) as exc:
        reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
        raise OutputError(f"{_short(path)}: cannot write ({reason})") from None
    if is_dir:
        raise UsageError(f"{path}: is a directory")
    if exists and not force:
        raise UsageError(f"{path}: already exists (use --force to overwrite)")
    if not parent_ok:
        raise UsageError(f"{path}: folder {parent} does not exist")


def _short(path: object, limit: int = 200) -> str:
    text = str(path)
    return text if len(text) <= limit else text[: limit // 2] + "…" + text[-limit // 2 :]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder to write; renamed over ``path`` when the block
    ends normally, removed on every other way out. OSErrors become :class:`OutputError`."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=folder, prefix=f".{path.name[:64]}.", suffix=".tmp"
        )
    except OSError as exc:
        raise OutputError(f"{_short(path)}: cannot write ({_reason(exc)})") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        _set_default_mode(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"{_short(path)}: cannot write ({_reason(exc)})") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _set_default_mode(path: Path) -> None:
    # mkstemp creates 0600; a written report gets what open() would give it (0666 & ~umask).
    umask = os.umask(0)
    os.umask(umask)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o666 & ~umask)


def write_atomic(path: Path, data: str | bytes, *, force: bool) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder.

    A special file that exists (a FIFO, ``/dev/stdout``, a terminal) is written into
    instead: renaming over it would replace the device node, not write to it.
    """
    check_writable(path, force=force)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if _is_special(path):
        try:
            with open(path, "wb") as f:
                f.write(payload)
        except OSError as exc:
            raise OutputError(f"{_short(path)}: cannot write ({_reason(exc)})") from None
        return
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())


def _is_special(path: Path) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_stdout(text: str) -> None:
    """``text`` (plus a final newline) on stdout; a closed or full stdout is one line."""
    out = GuardedStream("stdout")
    out.write(text if text.endswith("\n") else text + "\n")
    out.flush()


def write_output(target: str | Path, text: str, *, force: bool) -> None:
    """Write a report to ``target``: ``"-"`` is stdout, anything else a file (atomically)."""
    if str(target) == STDOUT:
        write_stdout(text)
    else:
        write_atomic(Path(target), text, force=force)


class GuardedStream:
    """``sys.stdout`` or ``sys.stderr`` (looked up at each write, so redirections apply) whose
    write failures are one :class:`OutputError` line: a closed stream, a full disk.

    A broken pipe stays :class:`BrokenPipeError` (the reader left: not an error to report).
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def _stream(self) -> TextIO:
        stream: TextIO | None = getattr(sys, self.name)
        # rich's Live (progress display) swaps sys.stderr for a proxy that prints through
        # the console: writing there would loop back into this stream. Rich unwraps it too.
        stream = getattr(stream, "rich_proxied_file", stream)
        if stream is None:
            raise OutputError(f"{self.name}: cannot write (it is closed)")
        return stream

    def _fail(self, exc: Exception) -> OutputError:
        reason = _reason(exc) if isinstance(exc, OSError) else "it is closed"
        return OutputError(f"{self.name}: cannot write ({reason})")

    def write(self, text: str) -> int:
        try:
            return self._stream().write(text)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            raise self._fail(exc) from None

    def flush(self) -> None:
        try:
            self._stream().flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            raise self._fail(exc) from None

    def isatty(self) -> bool:
        try:
            return self._stream().isatty()
        except (OSError, ValueError, OutputError):
            return False

    def fileno(self) -> int:
        return self._stream().fileno()

    @property
    def encoding(self) -> str:
        try:
            return self._stream().encoding or "utf-8"
        except OutputError:
            return "utf-8"


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal (False when it is closed or redirected)."""
    return GuardedStream("stdout").isatty()


def silence_stdout() -> None:
    """Point fd 1 at /dev/null after stdout failed, so the interpreter's final flush of the
    unwritten buffer does not print an ``Exception ignored`` traceback."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


# ------------------------------------------------------------------------ input expansion

#: Sampled at the start of a gzip file to measure its expansion: compressed bytes read at
#: most, and inflated bytes produced at most (whichever comes first).
EXPANSION_SAMPLE_IN: Final = 2 << 20
EXPANSION_SAMPLE_OUT: Final = 32 << 20
_BLANKS: Final = b" \t\r\n"


def expanded_json_bytes(path: Path) -> int:
    """The JSON text (blanks not counted) reading ``path`` will hold, measured rather than
    assumed: a plain file is its size; a gzip file is inflated at its start (at most
    :data:`EXPANSION_SAMPLE_IN` compressed or :data:`EXPANSION_SAMPLE_OUT` inflated bytes)
    and the non-blank bytes per compressed byte there scale its size. A whitespace bomb
    thus counts as the events in it, a dense trace as all of its text.

    For sizing workers by memory (the readers hold decoded events, never blanks); 0 for
    what cannot be read."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return size
            f.seek(0)
            consumed, kept, whole = _sample_gzip(f)
    except (OSError, ValueError):
        return 0
    if whole or consumed >= size:
        return kept
    return int(kept * size / max(1, consumed))


def _sample_gzip(f: IO[bytes]) -> tuple[int, int, bool]:
    """(compressed bytes consumed, non-blank bytes inflated, whether the file ended)."""
    inflater = zlib.decompressobj(31)
    pending = b""
    consumed = produced = kept = 0
    while consumed < EXPANSION_SAMPLE_IN and produced < EXPANSION_SAMPLE_OUT:
        if not pending:
            pending = f.read(64 * 1024)
            if not pending:
                return consumed, kept, True
        try:
            out = inflater.decompress(pending, 1 << 20)
        except zlib.error:
            return consumed, kept, True  # the reader reports the corrupt gzip
        rest = inflater.unconsumed_tail or inflater.unused_data
        consumed += len(pending) - len(rest)
        produced += len(out)
        kept += len(out) - sum(out.count(c) for c in _BLANKS)
        if inflater.eof:  # the next gzip member, if any
            inflater = zlib.decompressobj(31)
        if not out and len(rest) == len(pending):
            more = f.read(64 * 1024)
            if not more:
                return consumed, kept, True
            rest += more
        pending = rest
    return consumed, kept, False


# ------------------------------------------------------------------------------- inputs

#: How long a FIFO given as an input may stay without a writer or data before it is refused.
FIFO_WAIT_S: Final = 30.0
#: Largest stream (stdin, a FIFO, a process substitution) copied to a private file.
MAX_STREAM_BYTES: Final = 64 << 30
_STREAM_BLOCK: Final = 1 << 20


def _input_error(path: object, exc: OSError) -> TraceFormatError:
    if isinstance(exc, FileNotFoundError):
        return TraceFormatError(_short(path), "no such file")
    return TraceFormatError(_short(path), f"cannot read ({_reason(exc)})")


def input_is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder; a path that cannot be looked at (permissions, a name
    too long) is one :class:`TraceFormatError` line, a missing one is not a folder."""
    if str(path) == STDOUT:
        return False
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise _input_error(path, exc) from None
    except ValueError as exc:  # a NUL in the path
        raise TraceFormatError(_short(path), f"not a file name ({exc})") from None


def is_stream(path: Path) -> bool:
    """``-`` (stdin), or something that exists and is neither a file nor a folder: a FIFO,
    ``/dev/stdin`` on a pipe, a process substitution (``<(zcat t.json.gz)``), a device."""
    if str(path) == STDOUT:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def local_copy(path: Path) -> Iterator[Path]:
    """A stream read once, to its end, into a private temporary file (mode 0600, removed on
    every way out), so its format is sniffed from the copy and readers that need to seek
    (SQLite) work. Never reads a stream twice; a FIFO nobody writes to is refused after
    :data:`FIFO_WAIT_S`; more than :data:`MAX_STREAM_BYTES` is refused."""
    fd = _open_stream(path)
    try:
        handle, name = tempfile.mkstemp(prefix="traceinspect-stream-")
    except OSError as exc:
        os.close(fd)
        raise TraceFormatError(
            _short(path), f"cannot copy the stream to a temporary file ({_reason(exc)})"
        ) from None
    copy = Path(name)
    try:
        with os.fdopen(fd, "rb") as source, os.fdopen(handle, "wb") as target:
            total = 0
            while block := source.read(_STREAM_BLOCK):
                total += len(block)
                if total > MAX_STREAM_BYTES:
                    raise TraceFormatError(
                        _short(path),
                        f"stream longer than {MAX_STREAM_BYTES >> 30} GiB: save it to a file",
                    )
                target.write(block)
        yield copy
    except OSError as exc:
        raise _input_error(path, exc) from None
    finally:
        copy.unlink(missing_ok=True)


def _open_stream(path: Path) -> int:
    """A blocking descriptor on the stream, once data (or its end) is there to read."""
    if str(path) == STDOUT:
        if sys.stdin is None or os.isatty(0):
            raise TraceFormatError("-", "stdin is a terminal: pipe a trace into it")
        return os.dup(0)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open waits for no writer
    except OSError as exc:
        raise _input_error(path, exc) from None
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        if not poller.poll(FIFO_WAIT_S * 1000):
            raise TraceFormatError(
                _short(path), f"nothing written to this FIFO within {FIFO_WAIT_S:g} s"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
