"""Reader for PyTorch-profiler (Kineto) Chrome-trace JSON, ``.json`` or ``.json.gz``.

Handles every generation seen in the wild:

* 2021: cats ``Kernel`` ``Runtime`` ``Memcpy`` ``Memset`` ``Operator``, flows cat ``async``;
* 2022: flows cat ``async_gpu`` / ``async_cpu_to_gpu``, lowercase ``external id``;
* current: ``kernel`` ``gpu_memcpy`` ``gpu_memset`` ``cuda_runtime`` ``cuda_driver``
  ``cpu_op`` ``user_annotation`` ``gpu_user_annotation`` ``cuda_sync``, flows ``ac2g``,
  relative ``ts`` plus top-level ``baseTimeNanoseconds``; ROCm traces with ``hip*`` names.

How it stays fast and small on gigabyte traces:

* the file is streamed (gunzipped block by block) and the ``traceEvents`` array decoded in
  chunks of about :data:`CHUNK_BYTES` (:mod:`traceinspect.parse._chunks`), so peak memory
  does not grow with the file; msgspec decodes only the fields used here;
* each chunk is turned into numpy columns right away, repeated strings are interned, and
  ``ts``/``dur`` arrive as ``int`` or, for fractional values, as their JSON text
  (``float_hook=str``) until a vectorized, exact decimal parse turns a chunk's times into
  integer ns at once. A 19-digit ``1712195495519695.8`` never passes through float64.

GPU activities join their launching API call by ``args.correlation``. Flow events
(``ph`` ``s``/``f``, ``id`` = correlation) are the fallback for exporters that wrote no
correlation args; as soon as one GPU activity or API call carries the arg, the trace is
joined by args alone and flows are skipped (they are a third of a typical trace's events).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
import numpy as np
from numpy.typing import NDArray

from traceinspect.errors import TraceFormatError
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, collective_names, make_table
from traceinspect.parse._chunks import Event, EventArgs, EventChunks, Source, TopLevel
from traceinspect.parse._nesting import nesting_depth
from traceinspect.parse.cuda_api import SYNC_KINDS, classify_host_call, classify_memcpy
from traceinspect.parse.exact_time import _pick, _to_int64, us_to_ns

#: JSON bytes decoded per step. Bounds the transient memory (decoded events of one chunk,
#: ~5x its text) while keeping per-chunk overhead negligible.
CHUNK_BYTES: Final = 4 * 1024 * 1024
#: Bytes asked of the (possibly gunzipping) file per read.
READ_BYTES: Final = 1024 * 1024

_T = TypeVar("_T")

_INT64_MIN: Final = -(2**63)
_UINT64_SPAN: Final = 2**64

_NO_ARGS: Final = EventArgs()

_META_VERSION_KEYS: Final = (
    "schemaVersion",
    "trace_id",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "hip_runtime_version",
    "hip_driver_version",
    "roctracer_version",
    "displayTimeUnit",
)


# --------------------------------------------------------------------------------------
# Categories. Codes index the per-chunk dispatch; 0 = ignored.

_KERNEL, _MEMCPY, _MEMSET = 1, 2, 3
_RUNTIME, _DRIVER = 4, 5
_CPU_OP, _USER_ANNOTATION, _GPU_ANNOTATION, _CUDA_SYNC = 6, 7, 8, 9
_FLOW = 10
_PYTHON = 11

_CAT_CODE: Final[Mapping[str, int]] = {
    "kernel": _KERNEL,
    "Kernel": _KERNEL,
    "gpu_memcpy": _MEMCPY,
    "Memcpy": _MEMCPY,
    "gpu_memset": _MEMSET,
    "Memset": _MEMSET,
    "cuda_runtime": _RUNTIME,
    "Runtime": _RUNTIME,
    "cuda_driver": _DRIVER,
    "Driver": _DRIVER,
    "cpu_op": _CPU_OP,
    "Operator": _CPU_OP,
    "user_annotation": _USER_ANNOTATION,
    "gpu_user_annotation": _GPU_ANNOTATION,
    "cuda_sync": _CUDA_SYNC,
    "python_function": _PYTHON,
    "ac2g": _FLOW,
    "async": _FLOW,
    "async_gpu": _FLOW,
    "async_cpu_to_gpu": _FLOW,
}
_GPU_KIND_NAMES: Final = np.array(["", "kernel", "memcpy", "memset"], dtype=object)

# The table each category's events feed. One handler call per table and chunk keeps a
# table's rows in event order, so where chunks are cut never changes the row order (nor the
# stable sort by start time that follows).
_GPU_TABLE, _HOST_TABLE, _RANGE_TABLE, _GPU_RANGE_TABLE, _SYNC_TABLE = 1, 2, 3, 4, 5
_PYTHON_TABLE = 6
_TABLE_OF_CODE: Final = np.zeros(max(_CAT_CODE.values()) + 1, dtype=np.int8)
_TABLE_OF_CODE[[_KERNEL, _MEMCPY, _MEMSET]] = _GPU_TABLE
_TABLE_OF_CODE[[_RUNTIME, _DRIVER]] = _HOST_TABLE
_TABLE_OF_CODE[[_CPU_OP, _USER_ANNOTATION]] = _RANGE_TABLE
_TABLE_OF_CODE[_GPU_ANNOTATION] = _GPU_RANGE_TABLE
_TABLE_OF_CODE[_CUDA_SYNC] = _SYNC_TABLE
_TABLE_OF_CODE[_PYTHON] = _PYTHON_TABLE
_CATS_2021: Final = frozenset({"Kernel", "Runtime", "Operator", "Memcpy", "Memset", "async"})
_CATS_2022: Final = frozenset({"async_gpu", "async_cpu_to_gpu"})

_PH_COMPLETE, _PH_FLOW_START, _PH_FLOW_END = 1, 2, 3
_PH_CODE: Final[Mapping[str, int]] = {"X": _PH_COMPLETE, "s": _PH_FLOW_START, "f": _PH_FLOW_END}

PROFILER_STEP_PREFIX: Final = "ProfilerStep#"
#: record_function ranges c10d opens around a collective or point-to-point call, per backend
#: (``nccl:all_reduce``, ``gloo:broadcast``): annotations with source ``collective``.
COLLECTIVE_RANGE: Final = re.compile(r"(?:nccl|rccl|gloo|mpi|ucc|xccl):[a-z_]+$")


# --------------------------------------------------------------------------------------
# Column accumulation, chunk by chunk.


class _Strings:
    """Distinct strings of one kind, each stored once; table rows hold int32 codes.

    Keys are the decoded ``str`` (names) or the raw JSON ``bytes`` (grid, input dims);
    ``make`` turns a new key into the stored text.
    """

    def __init__(self, make: Callable[[Any], str] | None = None) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[str] = []
        self._make = make

    def codes(self, keys: Sequence[Any]) -> NDArray[np.int32]:
        index = self.index
        codes = np.fromiter(map(index.get, keys, repeat(-1)), dtype=np.int32, count=len(keys))
        for i in np.flatnonzero(codes < 0).tolist():
            key = keys[i]
            code = index.get(key)
            if code is None:
                code = index[key] = len(self.values)
                text = self._make(key) if self._make else key
                self.values.append("" if text is None else text)  # "name": null
            codes[i] = code
        return codes

    def decode(self, codes: NDArray[np.int32]) -> NDArray[np.object_]:
        return np.array(self.values, dtype=object)[codes]

    def per_value(self, fn: Callable[[str], Any], dtype: Any = object) -> NDArray[Any]:
        """``fn`` of every distinct value, as a 1-d array indexable by code."""
        out = np.empty(len(self.values), dtype=dtype)
        for code, value in enumerate(self.values):
            out[code] = fn(value)
        return out


def _compact_list(raw: bytes) -> str:
    """``b"[128, 1, 1]"`` -> ``"128,1,1"`` (kernel grid/block); null -> ``""``."""
    return "" if raw == b"null" else "".join(raw.decode("utf-8", "replace").strip("[]").split())


def _json_text(raw: bytes) -> str:
    """A recorded value's JSON text as written; null -> ``""`` (not recorded)."""
    return "" if raw == b"null" else raw.decode("utf-8", "replace")


@dataclass
class _Columns:
    """One table's columns, as numpy pieces per chunk (int64 values or int32 codes)."""

    pieces: dict[str, list[NDArray[Any]]] = field(default_factory=dict)

    def add(self, name: str, values: NDArray[Any]) -> None:
        self.pieces.setdefault(name, []).append(values)

    def column(self, name: str) -> NDArray[Any]:
        """The whole column (concatenated once; later calls return the same array)."""
        pieces = self.pieces.get(name)
        if not pieces:
            return np.zeros(0, dtype=np.int64)
        if len(pieces) > 1:
            pieces[:] = [np.concatenate(pieces)]
        return pieces[0]

    def __len__(self) -> int:
        return len(self.column("start_ns"))

    def take(self, order: NDArray[np.intp] | None = None) -> dict[str, NDArray[Any]]:
        """All columns (reordered by ``order``), releasing the pieces column by column so
        the table is never held twice."""
        out: dict[str, NDArray[Any]] = {}
        for name in list(self.pieces):
            column = self.column(name)
            del self.pieces[name]
            out[name] = column if order is None else column[order]
        return out


def _start_order(start: NDArray[np.int64]) -> NDArray[np.intp] | None:
    """Stable order by start time; None when already sorted (the common case)."""
    if bool((start[1:] >= start[:-1]).all()):
        return None
    return np.argsort(start, kind="stable")


_GET_PH: Final = attrgetter("ph")
_GET_CAT: Final = attrgetter("cat")
_GET_NAME: Final = attrgetter("name")
_GET_PID: Final = attrgetter("pid")
_GET_TID: Final = attrgetter("tid")
_GET_TS: Final = attrgetter("ts")
_GET_DUR: Final = attrgetter("dur")
_GET_ID: Final = attrgetter("id")
_GET_ARGS: Final = attrgetter("args")
_GET_INPUT_DIMS: Final = attrgetter("input_dims")




def _args_of(events: list[Event]) -> list[EventArgs]:
    return [a if a is not None else _NO_ARGS for a in map(_GET_ARGS, events)]


def _add_device_stream(
    cols: _Columns, sub: list[Event], args: list[EventArgs]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Add ``device`` and ``stream`` from the args, falling back to the event's pid/tid (GPU
    rows of older traces carry them there); return those raw pid/tid columns."""
    raw_pid = _to_int64(list(map(_GET_PID, sub)))
    raw_tid = _to_int64(list(map(_GET_TID, sub)))
    device = _arg_ints(args, "device")
    stream = _arg_ints(args, "stream")
    cols.add("device", np.where(device >= 0, device, raw_pid))
    cols.add("stream", np.where(stream >= 0, stream, raw_tid))
    return raw_pid, raw_tid


def _arg_ints(args: list[EventArgs], name: str) -> NDArray[np.int64]:
    return _to_int64(list(map(attrgetter(name), args)))


#: (category codes, events, start ns, end ns) of one table's rows in one chunk.
_Handler = Callable[[NDArray[np.int8], list[Event], NDArray[np.int64], NDArray[np.int64]], None]


class _Collector:
    """Turns decoded event chunks into table columns, keeping no per-event objects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names = _Strings()
        self.dims = _Strings(_json_text)
        self.geometry = _Strings(_compact_list)
        self.gpu = _Columns()
        self.host = _Columns()
        self.ranges = _Columns()  # cpu_op + user_annotation; split at the end
        self.gpu_ranges = _Columns()
        self.syncs = _Columns()
        self.python = _Columns()  # python_function frames (with_stack=True)
        self.sync_kinds: list[str] = []
        self.flows = _Columns()
        self.cats_seen: set[str] = set()
        self.negative_durations = 0
        self.missing_ts = 0
        # Flow events without ts count only where flows are used (no correlation args in
        # the whole trace), so the count never depends on where chunks were cut.
        self.missing_flow_ts = 0
        # Once a GPU activity or API call carries args.correlation, the trace is joined by
        # args alone and flow events are dropped (older exporters wrote flows only). The
        # choice is per trace, so chunk boundaries never change the result.
        self.correlation_args_seen = False
        self._handlers: dict[int, _Handler] = {
            _GPU_TABLE: self._gpu,
            _HOST_TABLE: self._host,
            _RANGE_TABLE: self._range,
            _GPU_RANGE_TABLE: self._gpu_range,
            _SYNC_TABLE: self._cuda_sync,
            _PYTHON_TABLE: self._python,
        }

    def add(self, events: list[Event]) -> None:
        if not events:
            return
        cats = list(map(_GET_CAT, events))
        self.cats_seen.update(set(cats))
        n = len(events)
        cat_code = np.fromiter(map(_CAT_CODE.get, cats, repeat(0)), dtype=np.int8, count=n)
        del cats
        if self.correlation_args_seen:  # flows are only the fallback join: skip them
            cat_code[cat_code == _FLOW] = 0
        candidates = np.flatnonzero(cat_code)
        if not candidates.size:
            return
        chosen = _pick(events, candidates)
        codes = cat_code[candidates]
        phc = np.fromiter(
            map(_PH_CODE.get, map(_GET_PH, chosen), repeat(0)), dtype=np.int8, count=len(chosen)
        )
        try:
            ts, ts_present = us_to_ns(list(map(_GET_TS, chosen)))
            dur, _ = us_to_ns(list(map(_GET_DUR, chosen)))
        except ValueError as exc:
            raise TraceFormatError(self.path, f"bad ts/dur in traceEvents: {exc}") from None
        is_flow = codes == _FLOW
        negative = dur < 0
        if negative.any():
            self.negative_durations += int((negative & ~is_flow).sum())
            dur[negative] = 0
        missing = (phc > 0) & ~ts_present
        self.missing_ts += int((missing & ~is_flow).sum())
        self.missing_flow_ts += int((missing & is_flow).sum())
        end = ts + dur
        complete = (phc == _PH_COMPLETE) & ts_present
        tables = _TABLE_OF_CODE[codes]
        for table in np.unique(tables[complete]).tolist():
            handler = self._handlers.get(table)
            if handler is not None:  # flow cats with ph "X" carry nothing
                select = np.flatnonzero(complete & (tables == table))
                handler(codes[select], _pick(chosen, select), ts[select], end[select])
        flow = is_flow & ((phc == _PH_FLOW_START) | (phc == _PH_FLOW_END)) & ts_present
        select = np.flatnonzero(flow)
        if select.size and not self.correlation_args_seen:
            sub = _pick(chosen, select)
            self.flows.add("id", _to_int64(list(map(_GET_ID, sub))))
            self.flows.add("is_start", phc[select] == _PH_FLOW_START)
            self.flows.add("pid", _to_int64(list(map(_GET_PID, sub))))
            self.flows.add("tid", _to_int64(list(map(_GET_TID, sub))))
            self.flows.add("ts", ts[select])

    def _correlations(self, args: list[EventArgs]) -> NDArray[np.int64]:
        correlation = _arg_ints(args, "correlation")
        if not self.correlation_args_seen and bool((correlation != -1).any()):
            self.correlation_args_seen = True
            self.flows = _Columns()
        return correlation

    # One handler per category group; each appends whole columns.

    def _gpu(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.gpu
        args = _args_of(sub)
        m = len(sub)
        cols.add("kind_code", codes)
        cols.add("name", self.names.codes(list(map(_GET_NAME, sub))))
        raw_pid, raw_tid = _add_device_stream(cols, sub, args)
        cols.add("raw_pid", raw_pid)
        cols.add("raw_tid", raw_tid)
        cols.add("start_ns", start)
        cols.add("end_ns", end)
        cols.add("correlation", self._correlations(args))
        cols.add("graph_id", _arg_ints(args, "graph_id"))
        cols.add("graph_node_id", _arg_ints(args, "graph_node_id"))
        # Kernels have a grid and block, copies and memsets a byte count.
        kernel = codes == _KERNEL
        if kernel.all():
            cols.add("grid", self.geometry.codes(_raw_keys([a.grid for a in args])))
            cols.add("block", self.geometry.codes(_raw_keys([a.block for a in args])))
            cols.add("bytes", np.full(m, -1, dtype=np.int64))
            return
        blank = self.geometry.codes([b""])[0]
        grid = np.full(m, blank, dtype=np.int32)
        block = np.full(m, blank, dtype=np.int32)
        kernel_rows = np.flatnonzero(kernel)
        if kernel_rows.size:
            kernel_args = _pick(args, kernel_rows)
            grid[kernel_rows] = self.geometry.codes(_raw_keys([a.grid for a in kernel_args]))
            block[kernel_rows] = self.geometry.codes(_raw_keys([a.block for a in kernel_args]))
        cols.add("grid", grid)
        cols.add("block", block)
        cols.add("bytes", np.where(kernel, -1, _arg_ints(args, "bytes")))

    def _add_thread_interval(
        self,
        cols: _Columns,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        """The columns every host-thread row has: name, category, pid, tid, interval."""
        cols.add("name", self.names.codes(list(map(_GET_NAME, sub))))
        cols.add("cat_code", codes)
        cols.add("pid", _to_int64(list(map(_GET_PID, sub))))
        cols.add("tid", _to_int64(list(map(_GET_TID, sub))))
        cols.add("start_ns", start)
        cols.add("end_ns", end)

    def _host(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.host
        args = _args_of(sub)
        self._add_thread_interval(cols, codes, sub, start, end)
        cols.add("correlation", self._correlations(args))
        cols.add("external_id", _external_ids(args))

    def _range(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.ranges
        args = _args_of(sub)
        self._add_thread_interval(cols, codes, sub, start, end)
        cols.add("external_id", _external_ids(args))
        dims = _raw_keys(list(map(_GET_INPUT_DIMS, args)))
        absent = [i for i, key in enumerate(dims) if not key]
        if absent:  # some exporters spell it "Input dims"
            lower = _raw_keys([args[i].input_dims_lower for i in absent])
            for i, key in zip(absent, lower, strict=True):
                dims[i] = key
        cols.add("input_shapes", self.dims.codes(dims))

    def _gpu_range(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.gpu_ranges
        args = _args_of(sub)
        cols.add("name", self.names.codes(list(map(_GET_NAME, sub))))
        _add_device_stream(cols, sub, args)
        cols.add("start_ns", start)
        cols.add("end_ns", end)

    def _python(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.python
        cols.add("name", self.names.codes(list(map(_GET_NAME, sub))))
        cols.add("pid", _to_int64(list(map(_GET_PID, sub))))
        cols.add("tid", _to_int64(list(map(_GET_TID, sub))))
        cols.add("start_ns", start)
        cols.add("end_ns", end)

    def _cuda_sync(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        cols = self.syncs
        args = _args_of(sub)
        self.sync_kinds.extend(
            SYNC_KINDS.get(a.cuda_sync_kind or "", SYNC_KINDS.get(e.name or "", "unknown"))
            for e, a in zip(sub, args, strict=True)
        )
        _add_device_stream(cols, sub, args)
        cols.add("start_ns", start)
        cols.add("end_ns", end)
        cols.add("correlation", _arg_ints(args, "correlation"))


def _raw_keys(raws: list[msgspec.Raw]) -> list[bytes]:
    """The JSON text of each Raw as bytes, split in C (JSON text never holds a raw NUL)."""
    keys = b"\x00".join(raws).split(b"\x00")
    return keys if len(keys) == len(raws) else [bytes(raw) for raw in raws]


def _external_ids(args: list[EventArgs]) -> NDArray[np.int64]:
    """``External id`` (current) or ``external id`` (2021/2022 traces)."""
    current = _arg_ints(args, "external_id")
    missing = current == -1
    if missing.any():
        older = _arg_ints(args, "external_id_2021")
        current = np.where(missing, older, current)
    return current


# --------------------------------------------------------------------------------------
# Assembly: shift to the epoch clock, join GPU activity to launches, build the tables.


def read_kineto(path: Path, *, workers: int | None = None) -> Timeline:
    """Read a PyTorch-profiler trace (``.json`` or ``.json.gz``) into a :class:`Timeline`.

    A large plain-JSON file is read by ``workers`` processes (default: one per core; see
    :func:`traceinspect.parse._parallel.worker_count`), with the same result as on one.
    Raises :class:`~traceinspect.errors.TraceFormatError` (one-line problem) for anything
    that is not a readable Kineto/Chrome trace.
    """
    path = Path(path)
    if workers is None or workers > 1:
        from traceinspect.parse import _parallel

        count = _parallel.worker_count(path, workers)
        collected = _parallel.read_parallel(path, count) if count > 1 else None
        if collected is not None:
            return _assemble(path, *collected)
    source = Source(path, READ_BYTES)
    collector = _Collector(path)
    chunks = EventChunks(source, CHUNK_BYTES)
    # Decoding allocates millions of short-lived objects, none in reference cycles: the
    # cyclic collector would only rescan them over and over.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for events in chunks:
            collector.add(events)
            del events  # not held while the next chunk decodes
    except RecursionError:
        raise TraceFormatError(path, "JSON nested too deeply") from None
    finally:
        source.close()
        if gc_was_enabled:
            gc.enable()
    return _assemble(path, collector, chunks.meta)


def _base_time_ns(path: Path, meta: TopLevel) -> int:
    base = meta.baseTimeNanoseconds
    if base is None:
        return 0
    if isinstance(base, bool) or not isinstance(base, int):
        raise TraceFormatError(path, f"baseTimeNanoseconds is not an integer: {base!r:.40}")
    if not 0 <= base < 2**63:
        raise TraceFormatError(path, f"baseTimeNanoseconds out of range: {base}")
    return base


def _shift(path: Path, columns: _Columns, base_ns: int, names: tuple[str, ...]) -> None:
    """Add ``base_ns`` to the time columns in place, refusing int64 overflow."""
    if base_ns == 0:
        return
    limit = 2**63 - 1 - base_ns
    for name in names:
        pieces = columns.pieces.get(name)
        if not pieces:
            continue
        for piece in pieces:
            if piece.size and int(piece.max()) > limit:
                raise TraceFormatError(path, "times overflow int64 ns after baseTimeNanoseconds")
        columns.pieces[name] = [piece + base_ns for piece in pieces]


def _lookup(keys: NDArray[np.int64], values: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row position of each ``values`` element in ``keys`` (first occurrence; -1: absent or
    the value is -1)."""
    rows = np.full(len(values), -1, dtype=np.int64)
    if not len(keys) or not len(values):
        return rows
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    at = np.searchsorted(sorted_keys, values)
    at_clipped = np.minimum(at, len(keys) - 1)
    found = (at < len(keys)) & (sorted_keys[at_clipped] == values) & (values != -1)
    rows[found] = order[at_clipped[found]]
    return rows


def _flow_ids(
    flows: _Columns,
    start: bool,
    pid: NDArray[np.int64],
    tid: NDArray[np.int64],
    ts: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Correlation ids from flow events (``ph`` ``s`` on the launch call, ``f`` on the GPU
    activity) that sit at exactly the same pid, tid and ts; -1 where none does."""
    import pandas as pd

    is_start = flows.column("is_start").astype(bool)
    pick = is_start if start else ~is_start
    table = pd.DataFrame(
        {
            "pid": flows.column("pid")[pick],
            "tid": flows.column("tid")[pick],
            "ts": flows.column("ts")[pick],
            "id": flows.column("id")[pick],
        }
    ).drop_duplicates(["pid", "tid", "ts"])
    wanted = pd.DataFrame({"pid": pid, "tid": tid, "ts": ts})
    joined = wanted.merge(table, how="left", on=["pid", "tid", "ts"], sort=False)
    return joined["id"].fillna(-1).to_numpy(dtype=np.int64)


def _mode(values: NDArray[np.int64]) -> int:
    values = values[values >= 0]
    if not values.size:
        return -1
    uniques, counts = np.unique(values, return_counts=True)
    return int(uniques[np.argmax(counts)])


def _generation(cats: set[str]) -> str:
    if cats & _CATS_2022:
        return "kineto-2022"
    if cats & _CATS_2021:
        return "kineto-2021"
    return "kineto"


def _devices(value: Any) -> tuple[DeviceInfo, ...]:
    if not isinstance(value, list):
        return ()
    devices = []
    for position, props in enumerate(value):
        if not isinstance(props, dict):
            continue
        device_id = props.get("id", position)
        devices.append(
            DeviceInfo(
                id=device_id if isinstance(device_id, int) else position,
                name=str(props.get("name", "")),
                properties=props,
            )
        )
    return tuple(devices)


def _profiler_info(meta: TopLevel) -> dict[str, str]:
    info = {
        key: str(getattr(meta, key)) for key in _META_VERSION_KEYS if getattr(meta, key) is not None
    }
    dist = meta.distributedInfo
    if isinstance(dist, dict):
        for key in ("rank", "world_size", "backend"):
            if key in dist:
                info[f"distributed_{key}"] = str(dist[key])
    return info


def _assemble(path: Path, c: _Collector, meta: TopLevel) -> Timeline:
    base_ns = _base_time_ns(path, meta)
    times = ("start_ns", "end_ns")
    for table in (c.gpu, c.host, c.ranges, c.gpu_ranges, c.syncs, c.python):
        _shift(path, table, base_ns, times)
    _shift(path, c.flows, base_ns, ("ts",))
    notes: list[str] = []
    names = c.names

    # host first: its row positions are what gpu.launch_row points at.
    host = c.host.take(_start_order(c.host.column("start_ns")))
    host_corr = host.get("correlation", np.zeros(0, dtype=np.int64))
    missing = host_corr == -1
    if missing.any() and c.flows.pieces:
        host_corr[missing] = _flow_ids(
            c.flows, True, host["pid"][missing], host["tid"][missing], host["start_ns"][missing]
        )
    host_pid = host.get("pid", np.zeros(0, dtype=np.int64))
    host_kind = np.zeros(0, dtype=object)
    if host:
        name_code = host.pop("name")
        host["name"] = names.per_value(lambda n: classify_host_call(n)[0])[name_code]
        host_kind = host["kind"] = names.per_value(lambda n: classify_host_call(n)[1])[name_code]
        by_name = names.per_value(lambda n: classify_host_call(n)[2] == "driver", bool)
        driver = by_name[name_code] | (host.pop("cat_code") == _DRIVER)
        host["api"] = np.where(driver, "driver", "runtime").astype(object)
    main_pid = _mode(host_pid)
    if main_pid == -1:
        main_pid = _mode(c.ranges.column("pid"))
    host_table = make_table("host", host)
    del host

    # gpu: correlation (from args, else from flows) -> the launching host row.
    gpu = c.gpu.take(_start_order(c.gpu.column("start_ns")))
    gpu_corr = gpu.get("correlation", np.zeros(0, dtype=np.int64))
    missing = gpu_corr == -1
    if missing.any() and c.flows.pieces:
        gpu_corr[missing] = _flow_ids(
            c.flows, False, gpu["raw_pid"][missing], gpu["raw_tid"][missing],
            gpu["start_ns"][missing],
        )  # fmt: skip
    del c.flows
    launch_row = _lookup(host_corr, gpu_corr)
    launched = launch_row >= 0
    if gpu:
        kind_code = gpu.pop("kind_code")
        name_code = gpu["name"]
        gpu["name"] = names.decode(name_code)
        gpu["kind"] = _GPU_KIND_NAMES[kind_code]
        copy_kind = names.per_value(lambda n: classify_memcpy(n)[0])
        host_memory = names.per_value(lambda n: classify_memcpy(n)[1])
        is_copy = kind_code == _MEMCPY
        gpu["copy_kind"] = np.where(is_copy, copy_kind[name_code], "").astype(object)
        gpu["host_memory"] = np.where(is_copy, host_memory[name_code], "").astype(object)
        gpu["grid"] = c.geometry.decode(gpu["grid"])
        gpu["block"] = c.geometry.decode(gpu["block"])
        del gpu["raw_pid"], gpu["raw_tid"]
        gpu["pid"] = np.full(len(gpu_corr), main_pid, dtype=np.int64)
        gpu["pid"][launched] = host_pid[launch_row[launched]]
        gpu["from_graph"] = gpu["graph_id"] > 0
        gpu["from_graph"][launched] |= host_kind[launch_row[launched]] == "graph_launch"
        gpu["launch_row"] = launch_row
    unlaunched = int((~launched).sum())
    if unlaunched:
        notes.append(f"{unlaunched} GPU activities without a launch record")
    gpu_table = make_table("gpu", gpu)
    del gpu
    gpu_table["collective"] = collective_names(gpu_table["name"].to_numpy())

    # cpu_op and user_annotation events: ProfilerStep#N and record_function ranges are
    # annotations, the rest operators.
    ranges = c.ranges.take(_start_order(c.ranges.column("start_ns")))
    annotations: dict[str, Any] = {}
    cpu_ops: dict[str, Any] = {}
    if ranges:
        is_step = names.per_value(lambda n: n.startswith(PROFILER_STEP_PREFIX), bool)
        step = is_step[ranges["name"]]
        is_annotation = step | (ranges.pop("cat_code") == _USER_ANNOTATION)
        ops = ~is_annotation
        every_op = bool(ops.all())
        for name in list(ranges):  # split column by column, releasing each as it goes
            column = ranges.pop(name)
            cpu_ops[name] = column if every_op else column[ops]
            if name in ("name", "pid", "tid", *times):
                annotations[name] = column[is_annotation]
            del column
        annotations["source"] = np.where(
            step[is_annotation], "profiler_step", "record_function"
        ).astype(object)
        # c10d's own ranges around a collective ("nccl:all_reduce") are communication.
        is_collective = names.per_value(lambda n: bool(COLLECTIVE_RANGE.match(n)), bool)
        annotations["source"][is_collective[annotations["name"]]] = "collective"
        cpu_ops["name"] = names.decode(cpu_ops["name"])
        cpu_ops["input_shapes"] = c.dims.decode(cpu_ops["input_shapes"])
        cpu_ops["depth"] = nesting_depth(
            cpu_ops["pid"], cpu_ops["tid"], cpu_ops["start_ns"], cpu_ops["end_ns"]
        )
        del ranges
    cpu_ops_table = make_table("cpu_ops", cpu_ops)
    del cpu_ops

    gpu_ranges = c.gpu_ranges.take()
    if gpu_ranges:
        count = len(gpu_ranges["start_ns"])
        gpu_ranges["pid"] = np.full(count, -1, dtype=np.int64)
        gpu_ranges["tid"] = np.full(count, -1, dtype=np.int64)
        gpu_ranges["source"] = np.full(count, "gpu_user_annotation", dtype=object)
    if annotations and gpu_ranges:
        host_count = len(annotations["start_ns"])
        annotations["device"] = np.full(host_count, -1, dtype=np.int64)
        annotations["stream"] = np.full(host_count, -1, dtype=np.int64)
        annotations = {k: np.concatenate([annotations[k], gpu_ranges[k]]) for k in annotations}
    elif gpu_ranges:
        annotations = gpu_ranges
    if annotations:
        annotations["name"] = names.decode(annotations["name"])
        order = _start_order(annotations["start_ns"])
        if order is not None:
            annotations = {k: v[order] for k, v in annotations.items()}
        # Host ranges nest per thread; GPU projections (pid -1) per device and stream.
        on_gpu = annotations["pid"] == -1
        device = annotations.get("device", np.full(len(on_gpu), -1, dtype=np.int64))
        stream = annotations.get("stream", np.full(len(on_gpu), -1, dtype=np.int64))
        annotations["depth"] = nesting_depth(
            np.where(on_gpu, -2 - device, annotations["pid"]),
            np.where(on_gpu, stream, annotations["tid"]),
            annotations["start_ns"],
            annotations["end_ns"],
        )
    annotations_table = make_table("annotations", annotations)
    del annotations

    sync_order = _start_order(c.syncs.column("start_ns"))
    syncs = c.syncs.take(sync_order)
    if syncs:
        kinds = np.array(c.sync_kinds, dtype=object)
        syncs["kind"] = kinds if sync_order is None else kinds[sync_order]
        # cuda_sync events sit on the GPU rows; the calling thread is the API call's.
        row = _lookup(host_corr, syncs["correlation"])
        found = row >= 0
        syncs["pid"] = np.full(len(row), -1, dtype=np.int64)
        syncs["tid"] = np.full(len(row), -1, dtype=np.int64)
        syncs["pid"][found] = host_pid[row[found]]
        syncs["tid"][found] = host_table["tid"].to_numpy()[row[found]]
    syncs_table = make_table("syncs", syncs)
    python = c.python.take(_start_order(c.python.column("start_ns")))
    if python:
        python["name"] = names.decode(python["name"])
    python_table = make_table("python", python)

    if c.negative_durations:
        notes.append(f"{c.negative_durations} events with a negative dur, read as 0")
    missing_ts = c.missing_ts + (0 if c.correlation_args_seen else c.missing_flow_ts)
    if missing_ts:
        notes.append(f"{missing_ts} events without ts skipped")
    if not len(gpu_table):
        notes.append("no GPU activity recorded (CPU-only trace)")
    trace_meta = TraceMeta(
        path=str(path),
        format="kineto",
        generation=_generation(c.cats_seen),
        devices=_devices(meta.deviceProperties),
        profiler=_profiler_info(meta),
        notes=tuple(notes),
    )
    return Timeline(
        meta=trace_meta,
        gpu=gpu_table,
        host=host_table,
        cpu_ops=cpu_ops_table,
        annotations=annotations_table,
        syncs=syncs_table,
        python=python_table,
    )
