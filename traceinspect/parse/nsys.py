"""Nsight Systems reader: an ``nsys export --type sqlite`` database into a :class:`Timeline`.

Also accepted: a gzipped export (decompressed into a private temporary directory that is
deleted afterwards) and a ``.nsys-rep``/``.qdrep`` report, exported through the ``nsys``
binary on PATH into a per-user cache (never beside the report).

What comes from where
---------------------
- ``gpu``: ``CUPTI_ACTIVITY_KIND_KERNEL`` / ``_MEMCPY`` / ``_MEMSET``, and
  ``CUPTI_ACTIVITY_KIND_GRAPH_TRACE`` (one row per whole graph when the report was recorded
  with the default ``--cuda-graph-trace=graph``).
- ``host``: ``CUPTI_ACTIVITY_KIND_RUNTIME`` holds runtime *and* driver calls; names come
  from ``StringIds`` and lose their ``_v7000``/``_ptsz`` suffixes.
- ``annotations``: NVTX push/pop and start/end ranges of ``NVTX_EVENTS`` with their domains.
  Ranges written by ``torch.autograd.profiler.emit_nvtx`` carry a decoration
  (``aten::mm, seq = 4, op_id = 17, sizes = [[2, 3]]``): the decoration is dropped from the
  name, and decorated ranges named like an operator (``ns::op``) go to ``cpu_ops`` — as the
  PyTorch profiler files them — with their ``sizes`` as ``input_shapes``.
- ``syncs``: ``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION``.

Processes and threads are packed into ``globalTid = (machine ids << 48) | (pid << 24) | tid``
and ``globalPid`` (the same with ``tid`` 0). Correlation ids are unique per process
only, so GPU rows join their launching call on (pid, correlation).

Times stay as exported: integer ns since the session start, one clock for all tables
(``TraceMeta.profiler``: ``clock``, and ``session_start_utc_ns`` when the export has it).

Exports differ between nsys releases (2021.x to 2026.x): tables exist only when something
was recorded, columns come and go. Every query is built from ``PRAGMA table_info``; a column
this reader can do without is replaced by its unknown value.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.errors import TraceFormatError
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, make_table
from traceinspect.parse import sniff
from traceinspect.parse._nesting import nesting_depth
from traceinspect.parse.kineto import classify_host_call

HOST_DEVICE_ID: Final = 2**31 - 1  # CUPTI's deviceId for a graph whose first node is on the host
PID_SHIFT: Final = 24  # bits: globalTid/globalPid hold the pid above the 24-bit tid
ID_MASK: Final = 0xFFFFFF  # 24-bit pid and tid fields of globalTid/globalPid

#: NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE; stable since nsys 2020).
NVTX_PUSH_POP: Final = 59
NVTX_START_END: Final = 60
NVTX_DOMAIN_CREATE: Final = 75

#: ENUM_CUDA_MEMCPY_OPER id -> (name shown in the kind's label, model copy_kind).
_COPY_KINDS: Final[Mapping[int, tuple[str, str]]] = {
    1: ("HtoD", "HtoD"),
    2: ("DtoH", "DtoH"),
    3: ("HtoA", "HtoD"),
    4: ("AtoH", "DtoH"),
    5: ("AtoA", "DtoD"),
    6: ("AtoD", "DtoD"),
    7: ("DtoA", "DtoD"),
    8: ("DtoD", "DtoD"),
    9: ("HtoH", "HtoH"),
    10: ("PtoP", "PtoP"),
    11: ("HtoD", "HtoD"),  # unified memory migrations
    12: ("DtoH", "DtoH"),
    13: ("DtoD", "DtoD"),
}
#: ENUM_CUDA_MEM_KIND id -> label used in memcpy/memset names.
_MEM_KINDS: Final[Mapping[int, str]] = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
}
_HOST_MEMORY: Final[Mapping[int, str]] = {0: "pageable", 1: "pinned"}
#: ENUM_CUPTI_SYNC_TYPE id -> syncs.kind.
_SYNC_KINDS: Final[Mapping[int, str]] = {
    1: "event",
    2: "stream_wait_event",
    3: "stream",
    4: "context",
}

_TABLE_KERNEL: Final = "CUPTI_ACTIVITY_KIND_KERNEL"
_TABLE_MEMCPY: Final = "CUPTI_ACTIVITY_KIND_MEMCPY"
_TABLE_MEMSET: Final = "CUPTI_ACTIVITY_KIND_MEMSET"
_TABLE_GRAPH: Final = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
_TABLE_RUNTIME: Final = "CUPTI_ACTIVITY_KIND_RUNTIME"
_TABLE_SYNC: Final = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
_TABLE_NVTX: Final = "NVTX_EVENTS"
#: Tables of which at least one marks a database as an nsys export.
_NSYS_MARKERS: Final = (
    "StringIds",
    "META_DATA_EXPORT",
    _TABLE_KERNEL,
    _TABLE_RUNTIME,
    _TABLE_NVTX,
)

EXPORT_HINT: Final = "export it first: nsys export --type sqlite -o report.sqlite report.nsys-rep"
GRAPH_NODES_HIDDEN_NOTE: Final = (
    "CUDA graph nodes are hidden: this report recorded each graph launch as one 'graph' "
    "activity (nsys default --cuda-graph-trace=graph), so kernels inside graphs are not "
    "visible; record with `nsys profile --cuda-graph-trace=node` to see them"
)

_API_SUFFIX = re.compile(r"(?:_v\d+|_ptsz|_ptds)+$")
_PROFILER_STEP = re.compile(r"ProfilerStep#\d+")
# torch.autograd.profiler.emit_nvtx: "name[, seq = N][, op_id = N][, sizes = [...]]
# [, input_op_ids = [...]]" (torch/csrc/profiler/standalone/nvtx_observer.cpp).
_EMIT_NVTX_TAIL = re.compile(
    r"(?:, seq = -?\d+)?(?:, op_id = \d+)?"
    r"(?:, sizes = (?P<sizes>\[.*?\]))?(?:, input_op_ids = \[.*\])?",
    re.DOTALL,
)


def read_nsys(path: Path) -> Timeline:
    """Read an nsys SQLite export, a gzipped one, or a ``.nsys-rep`` (through ``nsys``)."""
    kind = sniff(path)
    if kind == "sqlite":
        return _read_sqlite(path, path)
    if kind == "nsys-rep":
        return _read_sqlite(export_report(path), path)
    if kind in ("sqlite.gz", "json.gz"):
        with _gunzipped(path) as plain:
            return _read_sqlite(plain, path)
    raise TraceFormatError(path, "not an Nsight Systems export (expected SQLite or .nsys-rep)")


# --------------------------------------------------------------------------- input files


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


# --------------------------------------------------------------------------- the database


class _Schema:
    """Tables and columns present in one export."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        listing = conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        names = [str(row[0]) for row in listing]
        self.columns: dict[str, set[str]] = {}
        for name in names:
            quoted = name.replace('"', '""')
            cols = conn.execute(f'PRAGMA table_info("{quoted}")').fetchall()
            self.columns[name] = {str(c[1]) for c in cols}

    def has(self, table: str, *columns: str) -> bool:
        return table in self.columns and all(c in self.columns[table] for c in columns)

    def int_col(self, table: str, column: str, alias: str = "t") -> str:
        """SQL for an integer column, ``-1`` where absent or NULL."""
        if column in self.columns.get(table, ()):
            return f"COALESCE({alias}.{column}, -1)"
        return "-1"

    def require(self, path: Path, table: str, *columns: str) -> None:
        missing = [c for c in columns if c not in self.columns.get(table, ())]
        if missing:
            raise TraceFormatError(path, f"table {table} lacks column(s) {', '.join(missing)}")


def _pid_sql(column: str) -> str:
    return f"CASE WHEN {column} IS NULL THEN -1 ELSE ({column} >> {PID_SHIFT}) & {ID_MASK} END"


def _tid_sql(column: str) -> str:
    return f"CASE WHEN {column} IS NULL THEN -1 ELSE {column} & {ID_MASK} END"


#: Interval columns: NULLs become 0 plus an ``untimed`` flag, so that one missing value
#: never turns the column into float64 (which would round ns beyond 2**53).
_INTERVAL_SQL: Final = (
    "COALESCE(t.start, 0) AS start_ns, COALESCE(t.end, 0) AS end_ns, "
    "(t.start IS NULL OR t.end IS NULL) AS untimed"
)


def _read_connection(uri: str, shown: Path, *, lenient: bool) -> Timeline:
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        if lenient:
            conn.text_factory = _decode_text
        return _Reader(conn, shown).timeline()


MESSAGE_CHARS: Final = 200  # longest library message quoted in a one-line error


def _one_line(problem: object) -> str:
    """The first line of ``problem``, shortened: errors are one line on stderr."""
    lines = str(problem).strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def _decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _query(conn: sqlite3.Connection, sql: str) -> pd.DataFrame:
    return pd.read_sql_query(sql, conn)


def _i64(frame: pd.DataFrame, column: str) -> npt.NDArray[np.int64]:
    """``frame[column]`` as int64; ValueError when it holds something else than integers."""
    values = frame[column].to_numpy()
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if not finite.all() or (np.abs(values) >= 2.0**63).any() or (values % 1 != 0).any():
            raise ValueError(f"non-integer values where {column} should be")
    elif values.dtype.kind not in "iub":
        if not all(isinstance(v, (int, np.integer)) for v in values):
            raise ValueError(f"non-integer values where {column} should be")
    return np.asarray(values, dtype=np.int64)


def _read_sqlite(db: Path, shown: Path) -> Timeline:
    """Read export ``db``; errors name ``shown`` (the file the user gave)."""
    try:
        uri = f"{db.resolve().as_uri()}?mode=ro"
        try:
            return _read_connection(uri, shown, lenient=False)
        except (sqlite3.OperationalError, pd.errors.DatabaseError) as exc:
            if "decode" not in str(exc):
                raise
            # NVTX messages are whatever the application passed: bad UTF-8 is replaced
            # (the slower text path, taken only when needed).
            return _read_connection(uri, shown, lenient=True)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        # pandas prefixes the whole query ("Execution failed on sql '...': why"): keep why.
        why = str(exc).rsplit("': ", 1)[-1]
        raise TraceFormatError(shown, f"unreadable SQLite database ({_one_line(why)})") from None
    except UnicodeDecodeError:
        raise TraceFormatError(shown, "unreadable SQLite database (corrupt schema text)") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise TraceFormatError(shown, f"malformed nsys export ({_one_line(exc)})") from None


class _Reader:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.schema = _Schema(conn)
        self.notes: list[str] = []
        if not any(t in self.schema.columns for t in _NSYS_MARKERS) and not any(
            t.startswith("CUPTI_ACTIVITY_KIND_") for t in self.schema.columns
        ):
            problem = "SQLite database but not an Nsight Systems export"
            if not self.schema.columns:
                problem = "empty SQLite database, not an Nsight Systems export"
            raise TraceFormatError(path, f"{problem} (no CUPTI_ACTIVITY_KIND_* or StringIds)")
        self.has_strings = self.schema.has("StringIds", "id", "value")

    def timeline(self) -> Timeline:
        host = self._host()
        parts = [self._kernels(), self._memcpy(), self._memset(), self._graphs()]
        gpu = self._join_launches(pd.concat(parts, ignore_index=True), host)
        annotations, cpu_ops = self._nvtx()
        syncs = self._syncs(host)
        export = self._name_values("META_DATA_EXPORT")
        capture = self._name_values("META_DATA_CAPTURE")
        graph_rows = int((gpu["kind"] == "graph").sum())
        # "CUDA_GRAPH_TRACE_OPTIONS:MODE", per process ("PROCESS_0:...") before nsys 2026.
        graph_mode = next(
            (v for k, v in capture.items() if k.endswith("CUDA_GRAPH_TRACE_OPTIONS:MODE")), ""
        )
        # Graph-level tracing shows as GRAPH_TRACE rows; an export that lacks them (older
        # nsys, or a cut) still says so through the capture option and bare graph launches.
        launched_graphs = bool((host["kind"] == "graph_launch").any())
        nodes_hidden = graph_rows > 0 or (
            graph_mode.lower() == "graph" and launched_graphs and not gpu["from_graph"].any()
        )
        if nodes_hidden:
            self.notes.append(GRAPH_NODES_HIDDEN_NOTE)
        unlaunched = int((gpu["launch_row"] < 0).sum())
        if unlaunched and len(gpu):
            self.notes.append(
                f"{unlaunched} of {len(gpu)} GPU activities have no launching API call in the "
                "trace (the window cut it, or CUDA API tracing was off)"
            )
        profiler = {"tool": "Nsight Systems"}
        for key, name in (
            ("EXPORT_PRODUCT_VERSION", "nsys_version"),
            ("EXPORT_SCHEMA_VERSION", "export_schema"),
        ):
            if export.get(key):
                profiler[name] = export[key]
        if graph_mode:
            profiler["cuda_graph_trace"] = graph_mode.lower()
        # Timestamps stay as exported: ns since the session start, one clock for every table.
        profiler["clock"] = "ns since the nsys session start"
        session = self._session_start()
        if session is not None:
            profiler["session_start_utc_ns"] = str(session)
        pids = set(gpu["pid"].tolist()) | set(host["pid"].tolist())
        processes = self._process_names({p for p in pids if p >= 0})
        if processes:
            profiler["processes"] = processes
        schema = export.get("EXPORT_SCHEMA_VERSION", "")
        meta = TraceMeta(
            path=str(self.path),
            format="nsys",
            generation=f"nsys-{schema}" if schema else "nsys",
            devices=self._devices(gpu),
            profiler=profiler,
            notes=tuple(self.notes),
            graph_nodes_visible=not nodes_hidden,
        )
        timeline = Timeline(
            meta=meta, gpu=gpu, host=host, cpu_ops=cpu_ops, annotations=annotations, syncs=syncs
        )
        try:
            timeline.validate()
        except ValueError as exc:
            raise TraceFormatError(
                self.path, f"inconsistent nsys export ({_one_line(exc)})"
            ) from None
        return timeline

    # ----------------------------------------------------------------------- helpers

    def _string(self, column: str, alias: str) -> tuple[str, str]:
        """(join clause, value expression) resolving an id ``column`` through StringIds."""
        if not self.has_strings:
            return "", "NULL"
        return (
            f" LEFT JOIN StringIds {alias} ON {alias}.id = {column}",
            f"{alias}.value",
        )

    def _timed(self, table: str) -> bool:
        """True when ``table`` exists; raises when it lacks the interval columns."""
        if table not in self.schema.columns:
            return False
        self.schema.require(self.path, table, "start", "end")
        return True

    def _drop_untimed(self, frame: pd.DataFrame, what: str) -> pd.DataFrame:
        bad = frame["untimed"].astype(bool)
        if bool(bad.any()):
            self.notes.append(f"{int(bad.sum())} {what} without start or end time were skipped")
            frame = frame[~bad]
        return frame

    def _gpu_common(self, table: str) -> str:
        s = self.schema
        return ", ".join(
            [
                _INTERVAL_SQL,
                f"{s.int_col(table, 'deviceId')} AS device",
                f"{s.int_col(table, 'streamId')} AS stream",
                f"{s.int_col(table, 'correlationId')} AS correlation",
                f"{_pid_sql('t.globalPid') if s.has(table, 'globalPid') else '-1'} AS pid",
            ]
        )

    @staticmethod
    def _gpu_table(frame: pd.DataFrame) -> pd.DataFrame:
        """A complete ``gpu`` table (unknown values where ``frame`` has no column)."""
        return make_table("gpu", {c: frame[c].to_numpy() for c in _GPU_COLUMNS if c in frame})

    def _gpu_frame(self, sql: str, what: str) -> pd.DataFrame:
        frame = self._drop_untimed(_query(self.conn, sql), what)
        for col in ("start_ns", "end_ns", "device", "stream", "correlation", "pid"):
            frame[col] = _i64(frame, col)
        return frame

    # ----------------------------------------------------------------------- GPU

    def _kernels(self) -> pd.DataFrame:
        table = _TABLE_KERNEL
        if not self._timed(table):
            return make_table("gpu", {})
        s = self.schema
        joins, names = "", []
        for column, alias in (("demangledName", "dn"), ("mangledName", "mn"), ("shortName", "sn")):
            if s.has(table, column):
                join, value = self._string(f"t.{column}", alias)
                joins += join
                names.append(value)
        name_sql = f"COALESCE({', '.join(names)}, '')" if names else "''"

        def dims(prefix: str) -> str:
            axes = [f"{prefix}{a}" for a in "XYZ"]
            if not s.has(table, *axes):
                return "''"
            return " || ',' || ".join(f"COALESCE(t.{a}, '')" for a in axes)

        sql = (
            f"SELECT {self._gpu_common(table)}, {name_sql} AS name, "
            f"{s.int_col(table, 'graphId')} AS graph_id, "
            f"{s.int_col(table, 'graphNodeId')} AS graph_node_id, "
            f"{dims('grid')} AS grid, {dims('block')} AS block "
            f"FROM {table} t{joins}"
        )
        frame = self._gpu_frame(sql, "kernels")
        frame["kind"] = "kernel"
        # Exports before NULLs were allowed wrote 0 for "not in a graph". Exports before
        # schema 3.24 (nsys 2025.3 writes 3.20) have graphNodeId but no graphId: graph_id -1.
        graph_id = _i64(frame, "graph_id")
        frame["graph_id"] = np.where(graph_id > 0, graph_id, -1)
        frame = self._graph_nodes(frame)
        frame["from_graph"] = frame["from_graph"].to_numpy() | (graph_id > 0)
        frame["name"] = frame["name"].astype(str)
        frame["grid"] = frame["grid"].astype(str)
        frame["block"] = frame["block"].astype(str)
        return self._gpu_table(frame)

    def _memcpy(self) -> pd.DataFrame:
        table = _TABLE_MEMCPY
        if not self._timed(table):
            return make_table("gpu", {})
        s = self.schema
        sql = (
            f"SELECT {self._gpu_common(table)}, {s.int_col(table, 'bytes')} AS bytes, "
            f"{s.int_col(table, 'copyKind')} AS copy_code, "
            f"{s.int_col(table, 'srcKind')} AS src_code, "
            f"{s.int_col(table, 'dstKind')} AS dst_code, "
            f"{s.int_col(table, 'graphNodeId')} AS graph_node_id "
            f"FROM {table} t"
        )
        frame = self._gpu_frame(sql, "memory copies")
        frame["kind"] = "memcpy"
        frame["bytes"] = _i64(frame, "bytes")
        copy = _i64(frame, "copy_code")
        src = _i64(frame, "src_code")
        dst = _i64(frame, "dst_code")
        # Strings are built once per distinct (copyKind, srcKind, dstKind), not per copy.
        combos, inverse = np.unique(np.stack([copy, src, dst], axis=1), axis=0, return_inverse=True)
        described = [_describe_copy(int(c), int(a), int(b)) for c, a, b in combos]
        for position, column in enumerate(("name", "copy_kind", "host_memory")):
            values = np.array([d[position] for d in described] or [""], dtype=object)
            frame[column] = values[inverse.reshape(-1)] if len(frame) else []
        return self._gpu_table(self._graph_nodes(frame))

    def _memset(self) -> pd.DataFrame:
        table = _TABLE_MEMSET
        if not self._timed(table):
            return make_table("gpu", {})
        s = self.schema
        sql = (
            f"SELECT {self._gpu_common(table)}, {s.int_col(table, 'bytes')} AS bytes, "
            f"{s.int_col(table, 'memKind')} AS mem_code, "
            f"{s.int_col(table, 'graphNodeId')} AS graph_node_id "
            f"FROM {table} t"
        )
        frame = self._gpu_frame(sql, "memsets")
        frame["kind"] = "memset"
        frame["bytes"] = _i64(frame, "bytes")
        names = {k: f"Memset ({label})" for k, label in _MEM_KINDS.items()}
        frame["name"] = pd.Series(_i64(frame, "mem_code")).map(names).fillna("Memset").to_numpy()
        return self._gpu_table(self._graph_nodes(frame))

    @staticmethod
    def _graph_nodes(frame: pd.DataFrame) -> pd.DataFrame:
        nodes = _i64(frame, "graph_node_id")
        in_graph = nodes > 0
        frame["graph_node_id"] = np.where(in_graph, nodes, -1)
        frame["from_graph"] = in_graph
        return frame

    def _graphs(self) -> pd.DataFrame:
        table = _TABLE_GRAPH
        if not self._timed(table):
            return make_table("gpu", {})
        sql = (
            f"SELECT {self._gpu_common(table)}, "
            f"{self.schema.int_col(table, 'graphId')} AS graph_id FROM {table} t"
        )
        frame = self._gpu_frame(sql, "graph executions")
        # CUPTI writes start = end = 0 when it could not time the graph.
        untimed = (frame["start_ns"] == 0) & (frame["end_ns"] == 0)
        if bool(untimed.any()):
            self.notes.append(f"{int(untimed.sum())} graph executions had no timestamps")
            frame = frame[~untimed].copy()
        frame["kind"] = "graph"
        # deviceId INT_MAX: the graph started on the host (CUpti_ActivityGraphTrace2).
        frame["device"] = np.where(frame["device"] >= HOST_DEVICE_ID, -1, frame["device"])
        frame["graph_id"] = _i64(frame, "graph_id")
        frame["name"] = [f"CUDA graph {g}" if g >= 0 else "CUDA graph" for g in frame["graph_id"]]
        frame["from_graph"] = True
        return self._gpu_table(frame)

    def _join_launches(self, gpu: pd.DataFrame, host: pd.DataFrame) -> pd.DataFrame:
        """The gpu table with ``launch_row`` (and ``from_graph`` for graph launches) filled."""
        columns = [c for c in gpu.columns if c in _GPU_COLUMNS]
        table = make_table("gpu", {c: gpu[c].to_numpy() for c in columns})
        rows = _launch_rows(table, host)
        table["launch_row"] = rows
        launched_by_graph = np.zeros(len(table), dtype=bool)
        linked = rows >= 0
        launched_by_graph[linked] = host["kind"].to_numpy()[rows[linked]] == "graph_launch"
        table["from_graph"] = table["from_graph"].to_numpy() | launched_by_graph
        return table

    # ----------------------------------------------------------------------- host

    def _host(self) -> pd.DataFrame:
        table = _TABLE_RUNTIME
        if not self._timed(table):
            return make_table("host", {})
        s = self.schema
        join, name = self._string("t.nameId", "n") if s.has(table, "nameId") else ("", "NULL")
        has_tid = s.has(table, "globalTid")
        sql = (
            f"SELECT {_INTERVAL_SQL}, "
            f"{s.int_col(table, 'correlationId')} AS correlation, "
            f"{_pid_sql('t.globalTid') if has_tid else '-1'} AS pid, "
            f"{_tid_sql('t.globalTid') if has_tid else '-1'} AS tid, "
            f"COALESCE({name}, '') AS raw_name "
            f"FROM {table} t{join}"
        )
        frame = self._drop_untimed(_query(self.conn, sql), "API calls")
        raw = frame["raw_name"].astype(str)
        # One classification per distinct name (a few hundred), not per call.
        classified = {r: classify_host_call(_API_SUFFIX.sub("", r)) for r in raw.unique()}
        names = raw.map({r: c[0] for r, c in classified.items()})
        plain = {c[0]: c for c in classified.values()}
        return make_table(
            "host",
            {
                "name": names.to_numpy(),
                "api": names.map({p: _api_of(p) for p in plain}).to_numpy(),
                "kind": names.map({p: c[1] for p, c in plain.items()}).to_numpy(),
                "pid": _i64(frame, "pid"),
                "tid": _i64(frame, "tid"),
                "start_ns": _i64(frame, "start_ns"),
                "end_ns": _i64(frame, "end_ns"),
                "correlation": _i64(frame, "correlation"),
            },
        )

    def _syncs(self, host: pd.DataFrame) -> pd.DataFrame:
        table = _TABLE_SYNC
        if not self._timed(table):
            return make_table("syncs", {})
        s = self.schema
        type_col = "syncType" if s.has(table, "syncType") else "deprecatedSyncType"
        sql = (
            f"SELECT {self._gpu_common(table)}, {s.int_col(table, type_col)} AS sync_code "
            f"FROM {table} t"
        )
        frame = self._gpu_frame(sql, "synchronizations")
        tid = np.full(len(frame), -1, dtype=np.int64)
        rows = _launch_rows(frame, host)
        tid[rows >= 0] = host["tid"].to_numpy()[rows[rows >= 0]]
        return make_table(
            "syncs",
            {
                "kind": pd.Series(_i64(frame, "sync_code"))
                .map(_SYNC_KINDS)
                .fillna("unknown")
                .to_numpy(),
                "pid": frame["pid"].to_numpy(),
                "tid": tid,
                # CUPTI reports a context-wide sync on stream/device ids it does not use.
                "device": frame["device"].to_numpy(),
                "stream": frame["stream"].to_numpy(),
                "start_ns": frame["start_ns"].to_numpy(),
                "end_ns": frame["end_ns"].to_numpy(),
                "correlation": frame["correlation"].to_numpy(),
            },
        )

    # ----------------------------------------------------------------------- NVTX

    def _nvtx(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        table = _TABLE_NVTX
        if not self.schema.has(table, "eventType"):
            if table in self.schema.columns:
                self.schema.require(self.path, table, "eventType")
            return make_table("annotations", {}), make_table("cpu_ops", {})
        self.schema.require(self.path, table, "start")
        s = self.schema
        texts = ["t.text"] if s.has(table, "text") else []
        join = ""
        if s.has(table, "textId"):
            join, value = self._string("t.textId", "x")
            texts.append(value)
        text_sql = f"COALESCE({', '.join(texts)}, '')" if texts else "''"
        has_tid = s.has(table, "globalTid")
        interval = _INTERVAL_SQL if s.has(table, "end") else _INTERVAL_SQL.replace("t.end", "NULL")
        sql = (
            f"SELECT {interval}, t.eventType AS event_type, "
            f"{_pid_sql('t.globalTid') if has_tid else '-1'} AS pid, "
            f"{_tid_sql('t.globalTid') if has_tid else '-1'} AS tid, "
            f"{s.int_col(table, 'domainId')} AS domain_id, {text_sql} AS text "
            f"FROM {table} t{join} WHERE t.eventType IN "
            f"({NVTX_PUSH_POP}, {NVTX_START_END}, {NVTX_DOMAIN_CREATE})"
        )
        frame = _query(self.conn, sql)
        frame["event_type"] = _i64(frame, "event_type")
        created = frame[frame["event_type"] == NVTX_DOMAIN_CREATE]
        domains = {
            (int(p), int(d)): str(t)
            for p, d, t in zip(
                _i64(created, "pid"), _i64(created, "domain_id"), created["text"], strict=True
            )
        }
        ranges = frame[frame["event_type"] != NVTX_DOMAIN_CREATE]
        unfinished = ranges["untimed"].astype(bool)
        if bool(unfinished.any()):
            self.notes.append(
                f"{int(unfinished.sum())} NVTX ranges still open when the capture ended "
                "were skipped"
            )
            ranges = ranges[~unfinished]
        pid, tid = _i64(ranges, "pid"), _i64(ranges, "tid")
        start, end = _i64(ranges, "start_ns"), _i64(ranges, "end_ns")
        domain = np.full(len(ranges), "", dtype=object)
        if domains:
            # Domain ids belong to a process; a create event without a thread names the id
            # for every process that does not create it itself.
            domain_id = _i64(ranges, "domain_id")
            by_id = {d: name for (p, d), name in domains.items() if p < 0}
            domain[:] = pd.Series(domain_id).map(by_id).fillna("").to_numpy()
            known = pd.MultiIndex.from_tuples(list(domains))
            found = known.get_indexer(pd.MultiIndex.from_arrays([pid, domain_id]))
            names_of = np.array(list(domains.values()), dtype=object)
            domain[found >= 0] = names_of[found[found >= 0]]
        # Parsed once per distinct message: user ranges repeat every step.
        codes, messages = pd.factorize(ranges["text"].astype(str).to_numpy())
        parsed = [_parse_nvtx_text(str(m)) for m in messages]
        names = np.array([p[0] for p in parsed] or [""], dtype=object)[codes]
        op_like = np.array([p[1] for p in parsed] or [False], dtype=bool)[codes]
        shapes = np.array([p[2] for p in parsed] or [""], dtype=object)[codes]
        ann = ~op_like
        sources = ["profiler_step" if _PROFILER_STEP.fullmatch(n) else "nvtx" for n in names[ann]]
        annotations = make_table(
            "annotations",
            {
                "name": names[ann],
                "source": sources,
                "pid": pid[ann],
                "tid": tid[ann],
                "start_ns": start[ann],
                "end_ns": end[ann],
                "depth": nesting_depth(pid[ann], tid[ann], start[ann], end[ann]),
                "domain": domain[ann],
            },
        )
        cpu_ops = make_table(
            "cpu_ops",
            {
                "name": names[op_like],
                "pid": pid[op_like],
                "tid": tid[op_like],
                "start_ns": start[op_like],
                "end_ns": end[op_like],
                "depth": nesting_depth(pid[op_like], tid[op_like], start[op_like], end[op_like]),
                "input_shapes": shapes[op_like],
            },
        )
        return annotations, cpu_ops

    # ----------------------------------------------------------------------- metadata

    def _name_values(self, table: str) -> dict[str, str]:
        if not self.schema.has(table, "name", "value"):
            return {}
        rows = self.conn.execute(f"SELECT name, value FROM {table}").fetchall()
        return {str(n): str(v) for n, v in rows if n is not None and v is not None}

    def _process_names(self, pids: set[int]) -> str:
        """``"773 python, 774 python"`` for the processes in the timeline (PROCESSES)."""
        if not pids or not self.schema.has("PROCESSES", "pid", "name"):
            return ""
        rows = self.conn.execute("SELECT DISTINCT pid, name FROM PROCESSES").fetchall()
        names = {p: str(n) for p, n in rows if isinstance(p, int) and p in pids and n}
        return ", ".join(f"{p} {names[p]}" for p in sorted(names))

    def _session_start(self) -> int | None:
        table = "TARGET_INFO_SESSION_START_TIME"
        if not self.schema.has(table, "utcEpochNs"):
            return None
        row = self.conn.execute(f"SELECT utcEpochNs FROM {table} LIMIT 1").fetchone()
        return int(row[0]) if row and isinstance(row[0], int) else None

    def _devices(self, gpu: pd.DataFrame) -> tuple[DeviceInfo, ...]:
        """Devices described by TARGET_INFO_GPU, keyed by the CUDA ordinal the GPU rows use,
        plus any device that ran something without being described."""
        found: dict[int, DeviceInfo] = {}
        if self.schema.has("TARGET_INFO_GPU", "id"):
            gpus = _query(self.conn, "SELECT * FROM TARGET_INFO_GPU")
            ordinal: dict[Any, int] = {}
            if self.schema.has("TARGET_INFO_CUDA_DEVICE", "gpuId", "cudaId"):
                pairs = self.conn.execute(
                    "SELECT gpuId, cudaId FROM TARGET_INFO_CUDA_DEVICE"
                ).fetchall()
                ordinal = {g: c for g, c in pairs if isinstance(g, int) and isinstance(c, int)}
            for record in gpus.to_dict("records"):
                props = {str(k): _plain(v) for k, v in record.items() if _plain(v) is not None}
                gpu_id = props.get("id")
                cuda_id = ordinal.get(gpu_id, props.get("cuDevice", gpu_id))
                if isinstance(cuda_id, int) and cuda_id not in found:
                    found[cuda_id] = DeviceInfo(cuda_id, str(props.get("name", "")), props)
        for device in sorted(set(gpu["device"].tolist()) - set(found)):
            if device >= 0:
                found[int(device)] = DeviceInfo(int(device), "")
        return tuple(found[k] for k in sorted(found))


_GPU_COLUMNS: Final = (
    "kind",
    "name",
    "pid",
    "device",
    "stream",
    "start_ns",
    "end_ns",
    "correlation",
    "graph_id",
    "graph_node_id",
    "from_graph",
    "grid",
    "block",
    "bytes",
    "copy_kind",
    "host_memory",
)


def _launch_rows(gpu: pd.DataFrame, host: pd.DataFrame) -> npt.NDArray[np.int64]:
    """Position in ``host`` of the call with the same (pid, correlation), else -1."""
    rows = np.full(len(gpu), -1, dtype=np.int64)
    if not len(gpu) or not len(host):
        return rows
    keys = pd.DataFrame(
        {
            "pid": host["pid"].to_numpy(),
            "correlation": host["correlation"].to_numpy(),
            "row": np.arange(len(host), dtype=np.int64),
        }
    )
    keys = keys[keys["correlation"] >= 0].drop_duplicates(["pid", "correlation"], keep="first")
    probe = pd.DataFrame(
        {"pid": gpu["pid"].to_numpy(), "correlation": gpu["correlation"].to_numpy()}
    )
    joined = probe.merge(keys, on=["pid", "correlation"], how="left", sort=False)
    found = joined["row"].to_numpy()
    hit = ~pd.isna(found)
    rows[hit] = found[hit].astype(np.int64)
    return rows


def _describe_copy(copy: int, src: int, dst: int) -> tuple[str, str, str]:
    """(name, copy_kind, host_memory) of a copy from its ENUM_CUDA_MEMCPY_OPER and
    ENUM_CUDA_MEM_KIND codes, named as the PyTorch profiler names copies."""
    label, copy_kind = _COPY_KINDS.get(copy, ("", ""))
    where = f"({_MEM_KINDS.get(src, 'Unknown')} -> {_MEM_KINDS.get(dst, 'Unknown')})"
    name = f"Memcpy {label} {where}" if label else f"Memcpy {where}"
    # The host side of a copy is its destination for DtoH-like kinds, else its source.
    host_side = dst if copy in (2, 4, 12) else src if copy in (1, 3, 9, 11) else -1
    return name, copy_kind, _HOST_MEMORY.get(host_side, "")


def _plain(value: Any) -> Any:
    """A JSON-ready scalar from a pandas cell; None for missing."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def _parse_nvtx_text(text: str) -> tuple[str, bool, str]:
    """(name, is an emit_nvtx operator range, input shapes JSON text) of an NVTX message."""
    cut = text.find(", seq = ")
    if cut < 0:
        cut = text.find(", op_id = ")
        if cut < 0:
            return text, False, ""
    match = _EMIT_NVTX_TAIL.fullmatch(text, cut)
    if match is None:
        return text, False, ""
    name = text[:cut]
    return name, "::" in name, match["sizes"] or ""


def _api_of(name: str) -> str:
    """``driver`` for ``cu*`` (not ``cuda*``) names, else ``runtime``."""
    return "driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime"
