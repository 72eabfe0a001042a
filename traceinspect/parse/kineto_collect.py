"""Kineto reader, collection: each decoded chunk of ``traceEvents`` sorted by category into
numpy columns per table (GPU activities, host calls, CPU operators, annotations, flows, Python
frames), repeated strings interned. :mod:`traceinspect.parse.kineto` streams the chunks in
and assembles the timeline; :mod:`traceinspect.parse._parallel` runs one collector per byte
range and merges them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np
from numpy.typing import NDArray

from traceinspect.errors import TraceFormatError
from traceinspect.parse._chunks import Event, EventArgs
from traceinspect.parse.cuda_api import SYNC_KINDS
from traceinspect.parse.exact_time import _pick, _to_int64, us_to_ns

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
_TRACE_SPAN = 12  # the profiler's own span, "PyTorch Profiler (0)": where recording stopped

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
    "Trace": _TRACE_SPAN,
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
_SPAN_TABLE = 7
_TABLE_OF_CODE: Final = np.zeros(max(_CAT_CODE.values()) + 1, dtype=np.int8)
_TABLE_OF_CODE[[_KERNEL, _MEMCPY, _MEMSET]] = _GPU_TABLE
_TABLE_OF_CODE[[_RUNTIME, _DRIVER]] = _HOST_TABLE
_TABLE_OF_CODE[[_CPU_OP, _USER_ANNOTATION]] = _RANGE_TABLE
_TABLE_OF_CODE[_GPU_ANNOTATION] = _GPU_RANGE_TABLE
_TABLE_OF_CODE[_CUDA_SYNC] = _SYNC_TABLE
_TABLE_OF_CODE[_PYTHON] = _PYTHON_TABLE
_TABLE_OF_CODE[_TRACE_SPAN] = _SPAN_TABLE
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
        self.spans = _Columns()  # the profiler's own recording spans
        self.sync_kinds: list[str] = []
        self.flows = _Columns()
        self.cats_seen: set[str] = set()
        self.negative_durations = 0
        self.repaired_frames = 0  # Python frame names escaped again by the chunk reader
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
            _SPAN_TABLE: self._span,
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
        # Registers and shared memory bound how many blocks share an SM (device share).
        cols.add("registers", np.where(kernel, _arg_ints(args, "registers"), -1))
        cols.add("shared_mem", np.where(kernel, _arg_ints(args, "shared_memory"), -1))
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
        codes: NDArray[np.int8] | None,
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        """The columns every host-thread row has: name, category (where the table keeps it:
        ``codes`` not ``None``), pid, tid, interval."""
        cols.add("name", self.names.codes(list(map(_GET_NAME, sub))))
        if codes is not None:
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
        self._add_thread_interval(self.python, None, sub, start, end)

    def _span(
        self,
        codes: NDArray[np.int8],
        sub: list[Event],
        start: NDArray[np.int64],
        end: NDArray[np.int64],
    ) -> None:
        self.spans.add("start_ns", start)
        self.spans.add("end_ns", end)

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
        cols.add("event_id", _arg_ints(args, "event_id"))
        cols.add("wait_on_stream", _arg_ints(args, "wait_on_stream"))
        cols.add("record_correlation", _arg_ints(args, "record_correlation"))


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
