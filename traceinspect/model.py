"""The timeline model every reader produces and every analysis consumes.

A :class:`Timeline` is a handful of pandas DataFrames with fixed columns, plus
:class:`TraceMeta`. All times are **integer nanoseconds** (int64) on one clock per
trace; durations are ``end_ns - start_ns``. Unknown integers are ``-1``, unknown
strings are ``""``. Rows are sorted by ``start_ns`` (ties keep file order).

Tables and columns
------------------
``gpu`` — one row per GPU activity (kernel, memcpy, memset, or a whole graph when the
trace recorded graphs only as a unit).

=================  =======  ==========================================================
column             dtype    meaning
=================  =======  ==========================================================
kind               str      ``kernel`` | ``memcpy`` | ``memset`` | ``graph``
name               str      kernel name, or ``Memcpy HtoD (Pageable -> Device)`` etc.
pid                int64    host process that launched it (-1 unknown)
device             int64    GPU index
stream             int64    stream id as the profiler reported it
start_ns, end_ns   int64    activity interval on the GPU
correlation        int64    CUPTI correlation id shared with the launching call
launch_row         int64    row position in ``host`` of the launching call (-1: none)
graph_id           int64    CUDA graph id when known (-1)
graph_node_id      int64    node id inside the graph when known (-1)
from_graph         bool     launched by a graph launch (cudaGraphLaunch / graph ids)
grid, block        str      ``"x,y,z"`` launch geometry, ``""`` when not a kernel
registers          int64    registers per thread of a kernel (-1 unknown)
shared_mem         int64    shared memory per block of a kernel, bytes, static + dynamic
                            (-1 unknown)
bytes              int64    bytes moved/set by memcpy/memset (-1 otherwise)
copy_kind          str      ``HtoD`` ``DtoH`` ``DtoD`` ``HtoH`` ``PtoP`` (memcpy only)
host_memory        str      ``pageable`` | ``pinned`` | ``""`` for the host side of copies
collective         bool     communication: an NCCL/RCCL collective or point-to-point kernel
                            (:func:`collective_names`)
=================  =======  ==========================================================

``host`` — CUDA/HIP runtime and driver API calls.

=================  =======  ==========================================================
name               str      API name, version suffix stripped (``cudaLaunchKernel``)
api                str      ``runtime`` | ``driver``
kind               str      see :data:`HOST_KINDS`
pid, tid           int64    calling process / thread
start_ns, end_ns   int64    call interval on the host
correlation        int64    CUPTI correlation id (-1)
external_id        int64    links to the CPU op that issued it (-1)
=================  =======  ==========================================================

``cpu_ops`` — framework operators (``aten::mm``, ...).

=================  =======  ==========================================================
name               str      operator name
pid, tid           int64
start_ns, end_ns   int64
depth              int64    nesting depth among cpu_ops of the same thread (0 = outer)
external_id        int64    shared with the host calls it issued (-1)
input_shapes       str      recorded input dims as JSON text, ``""`` when not recorded
=================  =======  ==========================================================

``annotations`` — named ranges that may become regions.

=================  =======  ==========================================================
name               str      range name as written (``ProfilerStep#3``, ``decode``)
source             str      ``record_function`` | ``nvtx`` | ``profiler_step`` |
                            ``gpu_user_annotation`` (kineto's GPU projection) |
                            ``collective`` (a communication library's collective or
                            point-to-point call: ``ncclAllReduce``) | ``library`` (another
                            range of a library's own NVTX domain: cuDNN, NCCL set-up)
pid, tid           int64    thread that opened it (-1 for GPU projections)
device, stream     int64    for ``gpu_user_annotation`` only (-1 otherwise)
start_ns, end_ns   int64
depth              int64    nesting among host annotations of one thread (0 = outer)
domain             str      NVTX domain (``""`` for the default / non-NVTX)
=================  =======  ==========================================================

``python`` — Python function calls, where the trace recorded Python stacks (Kineto
``python_function`` events, ``torch.profiler.profile(with_stack=True)``); empty otherwise.

=================  =======  ==========================================================
name               str      ``file.py(line): function`` as the profiler wrote it
                            (``<built-in method ...>`` for C functions)
pid, tid           int64    thread that ran it
start_ns, end_ns   int64
=================  =======  ==========================================================

``syncs`` — synchronization events reported as such (kineto ``cuda_sync``, the nsys
SYNCHRONIZATION table). Host API calls that block are also in ``host`` with kind
``sync``; this table adds what the GPU side saw.

=================  =======  ==========================================================
kind               str      ``stream`` | ``event`` | ``device`` | ``stream_wait_event``
                            | ``context`` | ``unknown``
pid, tid           int64
device, stream     int64
start_ns, end_ns   int64
correlation        int64    of the API call that caused it (-1)
event_id           int64    ``stream_wait_event`` / ``event``: the profiler's id of the CUDA
                            event waited on (-1 unknown): waits on one id wait on one record
wait_on_stream     int64    ``stream_wait_event``: the stream the waited-on event was
                            recorded on (-1 unknown)
record_correlation int64    ``stream_wait_event``: correlation of the ``cudaEventRecord``
                            call that recorded the event (-1 unknown). Kineto writes both
                            when the profiler ran with ``enable_cuda_sync_events``.
=================  =======  ==========================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

TraceFormat = Literal["kineto", "nsys"]

#: Values of ``host.kind``.
HOST_KINDS: Final = (
    "launch",  # kernel launch: cudaLaunchKernel, cuLaunchKernel(Ex), hipLaunchKernel, ...
    "graph_launch",  # cudaGraphLaunch / cuGraphLaunch / hipGraphLaunch
    "memcpy",  # cudaMemcpy*, cuMemcpy*
    "memset",
    "sync",  # cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, ...
    "malloc",  # cudaMalloc*, cuMemAlloc*, cuMemCreate
    "free",
    "event",  # cudaEventRecord, cudaEventQuery, cudaStreamWaitEvent
    "graph_build",  # capture / instantiate / graph construction calls
    "other",
)

#: GPU activity names of communication kernels (NCCL: ``ncclDevKernel_AllReduce_Sum_f32_RING_LL``,
#: ``ncclKernel_...``; the PyTorch profiler's ``nccl:all_reduce``; RCCL the same).
COLLECTIVE_NAME: Final = re.compile(r"(?:nccl|rccl)", re.IGNORECASE)

#: Values of ``host.kind`` that put work on the GPU.
LAUNCH_KINDS: Final = ("launch", "graph_launch", "memcpy", "memset")

_STR = "str"
_I64 = "int64"

#: Column name -> dtype, per table. Readers must produce exactly these columns.
SCHEMA: Final[Mapping[str, Mapping[str, str]]] = {
    "gpu": {
        "kind": _STR,
        "name": _STR,
        "pid": _I64,
        "device": _I64,
        "stream": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
        "correlation": _I64,
        "launch_row": _I64,
        "graph_id": _I64,
        "graph_node_id": _I64,
        "from_graph": "bool",
        "grid": _STR,
        "block": _STR,
        "registers": _I64,
        "shared_mem": _I64,
        "bytes": _I64,
        "copy_kind": _STR,
        "host_memory": _STR,
        "collective": "bool",
    },
    "host": {
        "name": _STR,
        "api": _STR,
        "kind": _STR,
        "pid": _I64,
        "tid": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
        "correlation": _I64,
        "external_id": _I64,
    },
    "cpu_ops": {
        "name": _STR,
        "pid": _I64,
        "tid": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
        "depth": _I64,
        "external_id": _I64,
        "input_shapes": _STR,
    },
    "annotations": {
        "name": _STR,
        "source": _STR,
        "pid": _I64,
        "tid": _I64,
        "device": _I64,
        "stream": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
        "depth": _I64,
        "domain": _STR,
    },
    "python": {
        "name": _STR,
        "pid": _I64,
        "tid": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
    },
    "syncs": {
        "kind": _STR,
        "pid": _I64,
        "tid": _I64,
        "device": _I64,
        "stream": _I64,
        "start_ns": _I64,
        "end_ns": _I64,
        "correlation": _I64,
        "event_id": _I64,
        "wait_on_stream": _I64,
        "record_correlation": _I64,
    },
}


def collective_names(names: Any) -> Any:
    """Per GPU activity name, whether it is a communication kernel (``gpu.collective``)."""
    series = pd.Series(names, dtype=object)
    codes, unique = pd.factorize(series)
    marks = np.array([bool(COLLECTIVE_NAME.search(str(u))) for u in unique] or [False])
    return marks[codes] if len(series) else np.zeros(0, dtype=bool)


def _pandas_dtype(name: str) -> Any:
    # Strings are plain Python objects: pandas' newer string dtypes cost more to build
    # than they save for the analyses here.
    return object if name == _STR else np.dtype(name)


def empty_table(table: str) -> pd.DataFrame:
    """An empty DataFrame with the columns and dtypes of ``table``."""
    return pd.DataFrame(
        {col: pd.Series([], dtype=_pandas_dtype(dt)) for col, dt in SCHEMA[table].items()}
    )


def make_table(table: str, columns: Mapping[str, Any]) -> pd.DataFrame:
    """Build ``table`` from column arrays/lists; missing columns get their unknown value.

    Rows are sorted by ``start_ns`` (stable) and the index reset, so row positions are
    meaningful (``gpu.launch_row`` refers to positions in the final ``host`` table: readers
    must sort ``host`` before filling ``launch_row``).

    numpy arrays of the right dtype are used without copying (and rows that are already
    sorted are not re-sorted), so a reader's peak memory stays near one copy of each
    table: the caller hands the arrays over and must not modify them afterwards.
    """
    schema = SCHEMA[table]
    unknown = set(columns) - set(schema)
    if unknown:
        raise ValueError(f"{table}: unknown columns {sorted(unknown)}")
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"{table}: columns of different lengths {lengths}")
    n = lengths.pop() if lengths else 0
    data: dict[str, Any] = {}
    for col, dt in schema.items():
        if col in columns:
            values = columns[col]
            if dt == _STR:
                if isinstance(values, np.ndarray) and values.dtype == object:
                    data[col] = pd.Series(values, dtype=object, copy=False)
                else:
                    data[col] = pd.Series(values, dtype=object)
            else:
                data[col] = pd.Series(np.asarray(values, dtype=dt), copy=False)
        elif dt == _STR:
            data[col] = pd.Series(np.full(n, "", dtype=object), dtype=object, copy=False)
        elif dt == "bool":
            data[col] = pd.Series(np.zeros(n, dtype=bool), copy=False)
        else:
            data[col] = pd.Series(np.full(n, -1, dtype=np.int64), copy=False)
    frame = pd.DataFrame(data, copy=False)
    if n and "start_ns" in frame:
        start = frame["start_ns"].to_numpy()
        if bool((start[1:] < start[:-1]).any()):
            frame = frame.sort_values("start_ns", kind="stable").reset_index(drop=True)
    return frame


@dataclass(frozen=True)
class DeviceInfo:
    """One GPU as the trace describes it."""

    id: int
    name: str
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TraceMeta:
    """Where a timeline came from.

    ``generation`` names the format flavour, e.g. ``kineto-2021`` (``Kernel``/``Runtime``
    cats), ``kineto-2022`` (``async_gpu`` flows), ``kineto`` (current), ``nsys`` with the
    export schema version. ``notes`` are reader remarks worth surfacing as trace health
    (e.g. "graph nodes hidden: recorded with --cuda-graph-trace=graph").
    """

    path: str
    format: TraceFormat
    generation: str
    devices: tuple[DeviceInfo, ...] = ()
    profiler: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: True when the trace holds node-level records for graph launches (kineto always; nsys
    #: only with --cuda-graph-trace=node).
    graph_nodes_visible: bool = True


@dataclass(frozen=True)
class Timeline:
    """Everything a reader extracted from one trace file."""

    meta: TraceMeta
    gpu: pd.DataFrame = field(default_factory=lambda: empty_table("gpu"))
    host: pd.DataFrame = field(default_factory=lambda: empty_table("host"))
    cpu_ops: pd.DataFrame = field(default_factory=lambda: empty_table("cpu_ops"))
    annotations: pd.DataFrame = field(default_factory=lambda: empty_table("annotations"))
    syncs: pd.DataFrame = field(default_factory=lambda: empty_table("syncs"))
    python: pd.DataFrame = field(default_factory=lambda: empty_table("python"))

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "gpu": self.gpu,
            "host": self.host,
            "cpu_ops": self.cpu_ops,
            "annotations": self.annotations,
            "syncs": self.syncs,
            "python": self.python,
        }

    @property
    def kernels(self) -> pd.DataFrame:
        """GPU activities that are kernels (rows of ``gpu``)."""
        return self.gpu[self.gpu["kind"] == "kernel"]

    @property
    def copies(self) -> pd.DataFrame:
        """GPU activities that are memory copies (rows of ``gpu``; ``copy_kind`` says which)."""
        return self.gpu[self.gpu["kind"] == "memcpy"]

    @property
    def launches(self) -> pd.DataFrame:
        """Host API calls that put work on the GPU: kernel and graph launches, copies and
        memsets (rows of ``host``; ``gpu.launch_row`` points at them)."""
        return self.host[self.host["kind"].isin(LAUNCH_KINDS)]

    @property
    def has_gpu_activity(self) -> bool:
        return len(self.gpu) > 0

    def validate(self) -> None:
        """Raise ``ValueError`` if a table's columns or dtypes differ from :data:`SCHEMA`,
        a time runs backwards, or ``launch_row`` points outside ``host``."""
        for table, frame in self.tables().items():
            expected = list(SCHEMA[table])
            if list(frame.columns) != expected:
                raise ValueError(f"{table}: columns {list(frame.columns)} != {expected}")
            for col, dt in SCHEMA[table].items():
                got = frame[col].dtype
                if dt == _STR:
                    if got != np.dtype(object) and not pd.api.types.is_string_dtype(got):
                        raise ValueError(f"{table}.{col}: dtype {got}, expected str")
                elif got != np.dtype(dt):
                    raise ValueError(f"{table}.{col}: dtype {got}, expected {dt}")
            if len(frame) and bool((frame["end_ns"] < frame["start_ns"]).any()):
                raise ValueError(f"{table}: end_ns before start_ns")
        rows = self.gpu["launch_row"].to_numpy()
        if len(rows) and (rows.max() >= len(self.host) or rows.min() < -1):
            raise ValueError("gpu.launch_row outside host")
