"""One Kineto trace read on several cores: byte ranges of ``traceEvents`` in forked workers.

The JSON file is cut into as many byte ranges as there are workers, at event boundaries.
Each worker (a ``fork`` of this process) opens the file itself, seeks to its range and runs
the ordinary chunked reader (:mod:`traceinspect.parse._chunks`) and column collector of
:mod:`traceinspect.parse.kineto` over it; it sends back only numpy columns (out of band,
no per-event Python objects) and its distinct strings. The parent reads the first range
itself, then concatenates the columns in file order, renumbering string codes into one
table: the merged collector is what the single-process reader would have built, and the
same assembly turns it into the :class:`~traceinspect.model.Timeline`.

Why the result is exact. A split point is a ``,`` after a ``}`` that looks like the gap
between two events; it is only a guess until the worker *before* it succeeds. Worker 0
starts at the real ``[`` of ``traceEvents`` and decodes its range as ``[`` ... ``]``: that
decodes only if the range ends between two elements of that same array (inside a string,
a nested value, or past the array's end the brackets or quotes do not balance, and msgspec
rejects trailing text). So worker 0's success proves split 1 is a real boundary, worker
1's then proves split 2, and so on. If any worker fails, or a guess was wrong, nothing is
merged: the caller reads the file on one core, which also gives the exact error message.

Gzip input cannot be seeked into: with :data:`GZIP_PARALLEL_MIN_CORES` cores or more, a large
``.json.gz`` is gunzipped once into a temporary file (deleted right after), whose ranges the
workers then read; on fewer the gunzip and the write cost more than a second core saves, and
the file is streamed on one core (``bench/parallel_parse.py --gz``). Where the temporary
folder has no room for the text, the file is read on one core as well.
"""

from __future__ import annotations

import gc
import gzip
import os
import pickle
import re
import shutil
import signal
import tempfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import IO, Any, Final

import msgspec
import numpy as np
from numpy.typing import NDArray

from traceinspect import machine
from traceinspect.files import expanded_json_bytes
from traceinspect.parse import sniff
from traceinspect.parse._chunks import (
    _DECODE_ERRORS,
    _EVENTS_KEY,
    _META_DECODER,
    _UTF8_BOM,
    _WHITESPACE,
    EventChunks,
    Source,
    TopLevel,
)

#: Files below this size are read on one core: forking, sending the columns back and
#: merging cost about 0.1 s, more than a second core saves on a small file.
PARALLEL_MIN_BYTES: Final = 64 * 1024 * 1024
#: Length of the range read by the parent process, relative to a worker's: it also merges
#: the columns and builds the tables, about a quarter of a range's reading time (1 GB trace,
#: 2 processes: parent 4.46 s CPU for half the file, worker 3.45 s).
PARENT_RANGE_WEIGHT: Final = 0.75
#: Bytes per range at least, so each worker's fixed costs stay small against its work.
MIN_RANGE_BYTES: Final = 32 * 1024 * 1024
#: Bytes of the file read at a time while searching for a split point.
BOUNDARY_READ_BYTES: Final = 256 * 1024
#: A split point is abandoned when no event boundary is found this far past it (one event
#: longer than that: the neighbouring ranges are merged instead).
BOUNDARY_SEARCH_BYTES: Final = 16 * 1024 * 1024
#: Candidate cuts tried per split point, and following cuts tried per candidate, before
#: moving on. A candidate is taken when the text from it to a following cut decodes.
BOUNDARY_CANDIDATES: Final = 64
BOUNDARY_CHECKS: Final = 4
#: Free space asked of the temporary folder before a .json.gz is gunzipped into it, as a
#: multiple of the JSON text's size (room is left for what else the folder holds).
TEMPORARY_ROOM: Final = 2
#: A .json.gz is split across processes only where this many cores are available: the
#: gunzip to a temporary file runs on one core first, and on two cores the streamed one-core
#: read is faster (200 MB of JSON, 16 MB gzipped, 2-core machine, quiet, 2026-12-05: 1.19-1.25 s
#: streamed against 2.19-2.93 s gunzipped to disk and read in two ranges, the write to the
#: temporary folder alone 0.3-1.8 s).
GZIP_PARALLEL_MIN_CORES: Final = 4
#: Bytes gunzipped per read while writing the temporary text.
GUNZIP_BLOCK_BYTES: Final = 16 * 1024 * 1024
#: Bytes of the file head searched for the ``traceEvents`` key (the keys before it are
#: small: schema, device properties, distributed info).
HEAD_BYTES: Final = 4 * 1024 * 1024

_CUT: Final = re.compile(rb"\}[ \t\r\n]*,")
_CHECK_DECODER: Final = msgspec.json.Decoder(list[msgspec.Raw])


def worker_count(path: Path, requested: int | None = None) -> int:
    """Processes to read ``path`` with: ``requested``, else one per core this process may use
    (:func:`traceinspect.machine.usable_cores`), never more than one per
    :data:`MIN_RANGE_BYTES` of JSON text. 1 (read on one core) for JSON text under
    :data:`PARALLEL_MIN_BYTES`, for a .json.gz with fewer than
    :data:`GZIP_PARALLEL_MIN_CORES` cores, and where there is no ``fork``.

    Callers that already run in parallel (the per-rank pool, dask workers) ask for 1."""
    if requested is not None and requested <= 1:
        return 1
    if not hasattr(os, "fork"):
        return 1
    try:
        text = json_text_bytes(path)
        if text < PARALLEL_MIN_BYTES:
            return 1
        cores = requested if requested is not None else machine.usable_cores()
        if sniff(path) == "json.gz":
            if cores < GZIP_PARALLEL_MIN_CORES:
                return 1
            # What the text holds besides blanks: a gzip of whitespace is not worth
            # inflating to disk to split (the one-core reader streams it).
            text = min(text, expanded_json_bytes(path))
    except OSError:
        return 1
    if text < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(cores, text // MIN_RANGE_BYTES))


def json_text_bytes(path: Path) -> int:
    """Size of the JSON text: the file's, or for gzip the size its trailer records (modulo
    4 GiB, so never taken below the compressed size); 0 for anything else."""
    kind = sniff(path)
    size = path.stat().st_size
    if kind == "json":
        return size
    if kind != "json.gz":
        return 0
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        recorded = int.from_bytes(f.read(4), "little")
    return max(recorded, size)


# --------------------------------------------------------------------------------------
# Where the ranges start and end.


@dataclass(frozen=True)
class Range:
    """Bytes ``[start, end)`` of the file (``end`` None: to the end), framed by ``prefix``
    and ``suffix`` into a JSON text the chunked reader accepts on its own."""

    start: int
    end: int | None
    prefix: bytes
    suffix: bytes


def events_start(path: Path) -> tuple[int, TopLevel, bool] | None:
    """File offset of the ``[`` opening ``traceEvents``, the top-level keys before it, and
    whether the file is a bare array. None when the head does not show it plainly (the
    single-process reader then handles the file, and any error in it)."""
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
    skipped = len(_UTF8_BOM) if head.startswith(_UTF8_BOM) else 0
    skipped += len(head) - skipped - len(head[skipped:].lstrip(_WHITESPACE))
    if head[skipped : skipped + 1] == b"[":
        return skipped, TopLevel(), True
    if head[skipped : skipped + 1] != b"{":
        return None
    for match in _EVENTS_KEY.finditer(head, skipped):
        try:
            meta = _META_DECODER.decode(head[skipped : match.end() - 1] + b"null}")
        except (msgspec.ValidationError, *_DECODE_ERRORS):
            continue  # inside a string or a nested object, or a bad key: not ours to judge
        return match.end() - 1, meta, False
    return None


def event_boundary(f: IO[bytes], position: int, size: int) -> int | None:
    """Offset of the first ``,`` at or after ``position`` that looks like the gap between
    two events (``}`` then ``,``, and the text up to one of the next such cuts decodes as a
    list). None when none is found within :data:`BOUNDARY_SEARCH_BYTES`."""
    limit = min(size, position + BOUNDARY_SEARCH_BYTES)
    f.seek(position)
    data = b""
    checked = 0  # candidates judged so far
    while True:
        block = f.read(min(BOUNDARY_READ_BYTES, limit - position - len(data)))
        data += block
        at_end = not block or position + len(data) >= limit
        cuts = [m.end() - 1 for m in _CUT.finditer(data)]
        while checked < len(cuts):
            following = cuts[checked + 1 : checked + 1 + BOUNDARY_CHECKS]
            if len(following) < BOUNDARY_CHECKS and not at_end:
                break  # read on before judging this candidate
            comma = cuts[checked]
            for end in following:
                try:
                    _CHECK_DECODER.decode(b"[" + data[comma + 1 : end] + b"]")
                except _DECODE_ERRORS:
                    continue
                return position + comma
            checked += 1
            if checked >= BOUNDARY_CANDIDATES:
                return None
        if at_end:
            return None


def plan_ranges(path: Path, workers: int) -> tuple[list[Range], TopLevel] | None:
    """The byte ranges for ``workers`` processes (fewer when split points coincide or are
    not found) and the top-level keys before ``traceEvents``; None: read on one core."""
    start = events_start(path)
    if start is None:
        return None
    array_at, head_meta, bare_array = start
    size = path.stat().st_size
    # The parent's range is shorter: it also receives and merges every range's columns.
    weights = [PARENT_RANGE_WEIGHT] + [1.0] * (workers - 1)
    total = sum(weights)
    cuts: list[int] = []
    with open(path, "rb") as f:
        for k in range(1, workers):
            share = sum(weights[:k]) / total
            at = event_boundary(f, array_at + int((size - array_at) * share), size)
            if at is not None and at > (cuts[-1] if cuts else array_at):
                cuts.append(at)
    if not cuts:
        return None
    opening = b"[" if bare_array else b'{"traceEvents":['
    ranges = [Range(array_at, cuts[0], b"", b"]")]
    ranges += [Range(lo + 1, hi, b"[", b"]") for lo, hi in zip(cuts, cuts[1:], strict=False)]
    ranges.append(Range(cuts[-1] + 1, None, opening, b""))
    return ranges, head_meta


class RangeSource(Source):
    """A :class:`Source` over one :class:`Range`: its prefix, the file's bytes in range,
    its suffix."""

    def __init__(self, path: Path, part: Range, read_bytes: int) -> None:
        self.path = path
        self.read_bytes = read_bytes
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._file.seek(part.start)
        self._left = None if part.end is None else part.end - part.start
        self._pending = [b for b in (part.prefix,) if b]
        self._suffix = part.suffix
        self.eof = False

    def read(self) -> bytes:
        if self._pending:
            return self._pending.pop()
        if self._left is None or self._left > 0:
            ask = self.read_bytes if self._left is None else min(self.read_bytes, self._left)
            block = self._file.read(ask)
            if block:
                if self._left is not None:
                    self._left -= len(block)
                return block
            self._left = 0
        if self._suffix:
            block, self._suffix = self._suffix, b""
            return block
        self.eof = True
        return b""


# --------------------------------------------------------------------------------------
# One range's columns, compact enough to cross a pipe.

#: Columns holding codes into one of the collector's string tables, per table.
_CODE_COLUMNS: Final = {
    "gpu": {"name": "names", "grid": "geometry", "block": "geometry"},
    "host": {"name": "names"},
    "ranges": {"name": "names", "input_shapes": "dims"},
    "gpu_ranges": {"name": "names"},
    "syncs": {},
    "flows": {},
    "python": {"name": "names"},
    "spans": {},
}
_STRING_TABLES: Final = ("names", "dims", "geometry")


@dataclass
class Part:
    """What one worker collected: whole columns per table, the distinct strings its codes
    point into, counters, and the top-level keys after the array (last range only)."""

    columns: dict[str, dict[str, NDArray[Any]]] = field(default_factory=dict)
    strings: dict[str, list[str]] = field(default_factory=dict)
    sync_kinds: list[str] = field(default_factory=list)
    cats_seen: set[str] = field(default_factory=set)
    negative_durations: int = 0
    repaired_frames: int = 0
    missing_ts: int = 0
    missing_flow_ts: int = 0
    correlation_args_seen: bool = False
    meta: TopLevel | None = None


def collect_range(path: Path, part: Range) -> Part:
    """Read one range with the single-process reader's chunking and collector."""
    from traceinspect.parse import kineto, kineto_collect

    source = RangeSource(path, part, kineto.READ_BYTES)
    collector = kineto_collect._Collector(path)
    chunks = EventChunks(source, kineto.CHUNK_BYTES)
    try:
        for events in chunks:
            collector.add(events)
            del events
    finally:
        source.close()
    out = Part(
        strings={name: getattr(collector, name).values for name in _STRING_TABLES},
        sync_kinds=collector.sync_kinds,
        cats_seen=collector.cats_seen,
        negative_durations=collector.negative_durations,
        repaired_frames=chunks.repaired,
        missing_ts=collector.missing_ts,
        missing_flow_ts=collector.missing_flow_ts,
        correlation_args_seen=collector.correlation_args_seen,
        meta=chunks.meta if part.end is None else None,
    )
    for table in _CODE_COLUMNS:
        columns = getattr(collector, table)
        out.columns[table] = {name: columns.column(name) for name in list(columns.pieces)}
    return out


def merge(path: Path, parts: Sequence[Part], head_meta: TopLevel) -> tuple[Any, TopLevel]:
    """The collector the single-process reader would have built, and the top-level keys."""
    from traceinspect.parse import kineto_collect

    merged = kineto_collect._Collector(path)
    # Strings are keyed by their stored text here (the readers' raw-JSON keys stay local).
    tables = {name: kineto_collect._Strings() for name in _STRING_TABLES}
    merged.names, merged.dims, merged.geometry = (tables[n] for n in _STRING_TABLES)
    for part in parts:
        recode = {
            name: tables[name].codes(part.strings[name]).astype(np.int32)
            for name in _STRING_TABLES
        }
        for table, code_columns in _CODE_COLUMNS.items():
            into = getattr(merged, table)
            for name, values in part.columns.get(table, {}).items():
                strings = code_columns.get(name)
                into.add(name, recode[strings][values] if strings else values)
        merged.sync_kinds.extend(part.sync_kinds)
        merged.cats_seen |= part.cats_seen
        merged.negative_durations += part.negative_durations
        merged.repaired_frames += part.repaired_frames
        merged.missing_ts += part.missing_ts
        merged.missing_flow_ts += part.missing_flow_ts
        merged.correlation_args_seen |= part.correlation_args_seen
    if merged.correlation_args_seen:
        merged.flows = kineto_collect._Columns()
    meta = head_meta
    tail = parts[-1].meta
    if tail is not None:
        for name in TopLevel.__struct_fields__:
            value = getattr(tail, name)
            if value is not None and name != "traceEvents":
                setattr(meta, name, value)
    return merged, meta


# --------------------------------------------------------------------------------------
# Workers: bare forks (no multiprocessing bootstrap: the child touches nothing but its own
# file and pipe, then leaves with os._exit, so threads of the parent such as a progress
# display cannot hold a lock it needs). Results: a pickled header plus the arrays' buffers.


def _child(path: Path, part: Range, conn: Connection) -> None:
    try:
        result = collect_range(path, part)
    except BaseException as exc:  # noqa: BLE001 - the parent falls back to one core
        conn.send(("failed", f"{type(exc).__name__}: {exc}"[:200]))
        return
    buffers: list[pickle.PickleBuffer] = []
    header = pickle.dumps(result, protocol=5, buffer_callback=buffers.append)
    del result
    raws = [buffer.raw() for buffer in buffers]
    conn.send(("ok", header, [raw.nbytes for raw in raws]))
    for raw in raws:
        conn.send_bytes(raw)


def fork_child(run: Callable[[Connection], None]) -> tuple[int, Connection]:
    """Start a bare child that calls ``run`` with the sending end of a new pipe, then leaves
    (status 0 once ``run`` returned, 1 otherwise); its pid and the receiving end. Raises
    OSError where no pipe or process can be made (nothing is left open then)."""
    receiver, sender = Pipe(duplex=False)
    try:
        pid = os.fork()
    except OSError:
        receiver.close()
        sender.close()
        raise
    if pid == 0:  # the child
        status = 1
        try:
            receiver.close()
            run(sender)
            sender.close()
            status = 0
        finally:
            os._exit(status)
    sender.close()
    return pid, receiver


def kill_child(pid: int) -> None:
    """Kill a child started by :func:`fork_child` (gone already unless something failed);
    the caller still reaps it."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def end_child(pid: int, receiver: Connection) -> None:
    """Close a child's pipe, kill it (:func:`kill_child`) and reap it: the end of every child
    :func:`fork_child` started, whatever it did."""
    receiver.close()
    kill_child(pid)
    os.waitpid(pid, 0)


def _receive(conn: Connection) -> Part | None:
    try:
        message = conn.recv()
        if message[0] != "ok":
            return None
        _, header, sizes = message
        buffers = [bytearray(size) for size in sizes]  # writable: columns are edited in place
        for buffer in buffers:
            conn.recv_bytes_into(buffer)
        part = pickle.loads(header, buffers=buffers)
    except (EOFError, OSError, pickle.UnpicklingError):
        return None  # the worker died (killed for memory?)
    return part if isinstance(part, Part) else None


def read_parallel(path: Path, workers: int) -> tuple[Any, TopLevel] | None:
    """The merged collector and top-level keys of ``path`` read by ``workers`` processes,
    or None when the file was not split or a range failed: read it on one core then."""
    if sniff(path) != "json.gz":
        return _read_ranges(path, path, workers)
    text = _gunzip_to_temporary(path)
    if text is None:
        return None
    try:
        return _read_ranges(path, text, workers)
    finally:
        text.unlink(missing_ok=True)


def _gunzip_to_temporary(path: Path) -> Path | None:
    """The JSON text of gzipped ``path`` in a new temporary file, or None when the
    temporary folder lacks room or the gzip is corrupt (the one-core read reports it)."""
    folder = Path(tempfile.gettempdir())
    try:
        free = shutil.disk_usage(folder).free
        if free < TEMPORARY_ROOM * json_text_bytes(path):
            return None
        handle, name = tempfile.mkstemp(prefix="traceinspect-", suffix=".json", dir=folder)
    except OSError:
        return None
    target = Path(name)
    # The trailer records the size modulo 4 GiB: a file that inflates past the room it was
    # checked for is abandoned there, never allowed to fill the folder.
    budget = free // TEMPORARY_ROOM
    written = 0
    try:
        with os.fdopen(handle, "wb") as out, gzip.open(path, "rb") as source:
            while block := source.read(GUNZIP_BLOCK_BYTES):
                written += len(block)
                if written > budget:
                    raise OSError("inflates past the temporary room checked for")
                out.write(block)
    except (OSError, EOFError, zlib.error):
        target.unlink(missing_ok=True)
        return None
    return target


def _read_ranges(path: Path, text: Path, workers: int) -> tuple[Any, TopLevel] | None:
    """:func:`read_parallel` of the JSON text in ``text`` (``path`` names the trace)."""
    plan = plan_ranges(text, workers)
    if plan is None:
        return None
    ranges, head_meta = plan
    children: list[tuple[int, Connection]] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        children.extend(fork_child(partial(_child, text, part)) for part in ranges[1:])
        try:
            first: Part | None = collect_range(text, ranges[0])
        except Exception:  # noqa: BLE001 - the one-core read reports it exactly
            first = None
        parts = [first]
        for _, receiver in children:
            parts.append(_receive(receiver) if first is not None else None)
            receiver.close()
        done = [p for p in parts if p is not None]
        if len(done) != len(parts):
            return None
        return merge(path, done, head_meta)
    finally:
        for pid, receiver in children:
            end_child(pid, receiver)
        if gc_was_enabled:
            gc.enable()
