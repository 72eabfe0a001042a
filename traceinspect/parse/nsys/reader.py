"""The nsys export reader: one SQLite export into a :class:`Timeline`.

What comes from where
---------------------
- ``gpu``: ``CUPTI_ACTIVITY_KIND_KERNEL`` / ``_MEMCPY`` / ``_MEMSET``, and
  ``CUPTI_ACTIVITY_KIND_GRAPH_TRACE`` (one row per whole graph when the report was recorded
  with the default ``--cuda-graph-trace=graph``). ``collective`` marks NCCL/RCCL kernels.
- ``host``: ``CUPTI_ACTIVITY_KIND_RUNTIME`` holds runtime *and* driver calls; names come
  from ``StringIds`` and lose their ``_v7000``/``_ptsz`` suffixes.
- ``annotations`` and ``cpu_ops``: NVTX ranges (:mod:`traceinspect.parse.nsys.nvtx`).
- ``syncs``: ``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION``.

Correlation ids are unique per process only, so GPU rows join their launching call on
(pid, correlation). Times stay as exported: integer ns since the session start, one clock for
all tables (``TraceMeta.profiler``: ``clock``, and ``session_start_utc_ns`` when the export
has it). Devices are named from ``TARGET_INFO_GPU`` when the export has it.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.errors import TraceFormatError
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, collective_names, make_table
from traceinspect.parse import sniff
from traceinspect.parse.cuda_api import classify_host_call
from traceinspect.parse.nsys.export import _gunzipped, _one_line, export_report
from traceinspect.parse.nsys.nvtx import read_nvtx
from traceinspect.parse.nsys.schema import (
    INTERVAL_SQL,
    NSYS_MARKERS,
    TABLE_GRAPH,
    TABLE_KERNEL,
    TABLE_MEMCPY,
    TABLE_MEMSET,
    TABLE_RUNTIME,
    TABLE_SYNC,
    Schema,
    i64,
    pid_sql,
    plain,
    query,
    tid_sql,
)

HOST_DEVICE_ID: Final = 2**31 - 1  # CUPTI's deviceId for a graph whose first node is on the host

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

GRAPH_NODES_HIDDEN_NOTE: Final = (
    "CUDA graph nodes are hidden: this report recorded each graph launch as one 'graph' "
    "activity (nsys default --cuda-graph-trace=graph), so kernels inside graphs are not "
    "visible; record with `nsys profile --cuda-graph-trace=node` to see them"
)

_API_SUFFIX = re.compile(r"(?:_v\d+|_ptsz|_ptds)+$")


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


def _read_sqlite(db: Path, shown: Path) -> Timeline:
    """Read export ``db``; errors name ``shown`` (the file the user gave)."""
    try:
        # immutable: no -wal/-shm files or locks beside the input (its folder is untouched,
        # and a read-only folder or shared archive works); exports are complete files.
        uri = f"{db.resolve().as_uri()}?mode=ro&immutable=1"
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


def _decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _read_connection(uri: str, shown: Path, *, lenient: bool) -> Timeline:
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        if lenient:
            conn.text_factory = _decode_text
        return _Reader(conn, shown).timeline()


class _Reader:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.schema = Schema(conn)
        self.notes: list[str] = []
        if not any(t in self.schema.columns for t in NSYS_MARKERS) and not any(
            t.startswith("CUPTI_ACTIVITY_KIND_") for t in self.schema.columns
        ):
            problem = "SQLite database but not an Nsight Systems export"
            if not self.schema.columns:
                problem = "empty SQLite database, not an Nsight Systems export"
            raise TraceFormatError(path, f"{problem} (no CUPTI_ACTIVITY_KIND_* or StringIds)")

    def timeline(self) -> Timeline:
        host = self._host()
        parts = [self._kernels(), self._memcpy(), self._memset(), self._graphs()]
        gpu = self._join_launches(pd.concat(parts, ignore_index=True), host)
        nvtx = read_nvtx(self.conn, self.schema, self.path)
        annotations, cpu_ops = nvtx.annotations, nvtx.cpu_ops
        self.notes.extend(nvtx.notes)
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
                INTERVAL_SQL,
                f"{s.int_col(table, 'deviceId')} AS device",
                f"{s.int_col(table, 'streamId')} AS stream",
                f"{s.int_col(table, 'correlationId')} AS correlation",
                f"{pid_sql('t.globalPid') if s.has(table, 'globalPid') else '-1'} AS pid",
            ]
        )

    @staticmethod
    def _gpu_table(frame: pd.DataFrame) -> pd.DataFrame:
        """A complete ``gpu`` table (unknown values where ``frame`` has no column)."""
        return make_table("gpu", {c: frame[c].to_numpy() for c in _GPU_COLUMNS if c in frame})

    def _gpu_frame(self, sql: str, what: str) -> pd.DataFrame:
        frame = self._drop_untimed(query(self.conn, sql), what)
        for col in ("start_ns", "end_ns", "device", "stream", "correlation", "pid"):
            frame[col] = i64(frame, col)
        return frame

    # ----------------------------------------------------------------------- GPU

    def _kernels(self) -> pd.DataFrame:
        table = TABLE_KERNEL
        if not self._timed(table):
            return make_table("gpu", {})
        s = self.schema
        joins, names = "", []
        for column, alias in (("demangledName", "dn"), ("mangledName", "mn"), ("shortName", "sn")):
            if s.has(table, column):
                join, value = self.schema.string(f"t.{column}", alias)
                joins += join
                names.append(value)
        name_sql = f"COALESCE({', '.join(names)}, '')" if names else "''"

        def dims(prefix: str) -> str:
            axes = [f"{prefix}{a}" for a in "XYZ"]
            if not s.has(table, *axes):
                return "''"
            return " || ',' || ".join(f"COALESCE(t.{a}, '')" for a in axes)

        # Shared memory per block: static + dynamic, unknown (-1) when neither column exists.
        shared = [c for c in ("staticSharedMemory", "dynamicSharedMemory") if s.has(table, c)]
        shared_sql = " + ".join(f"COALESCE(t.{c}, 0)" for c in shared) if shared else "-1"
        sql = (
            f"SELECT {self._gpu_common(table)}, {name_sql} AS name, "
            f"{s.int_col(table, 'graphId')} AS graph_id, "
            f"{s.int_col(table, 'graphNodeId')} AS graph_node_id, "
            f"{dims('grid')} AS grid, {dims('block')} AS block, "
            f"{s.int_col(table, 'registersPerThread')} AS registers, "
            f"{shared_sql} AS shared_mem "
            f"FROM {table} t{joins}"
        )
        frame = self._gpu_frame(sql, "kernels")
        frame["kind"] = "kernel"
        # Exports before NULLs were allowed wrote 0 for "not in a graph". Exports before
        # schema 3.24 (nsys 2025.3 writes 3.20) have graphNodeId but no graphId: graph_id -1.
        graph_id = i64(frame, "graph_id")
        frame["graph_id"] = np.where(graph_id > 0, graph_id, -1)
        frame = self._graph_nodes(frame)
        frame["from_graph"] = frame["from_graph"].to_numpy() | (graph_id > 0)
        frame["name"] = frame["name"].astype(str)
        frame["grid"] = frame["grid"].astype(str)
        frame["block"] = frame["block"].astype(str)
        frame["registers"] = i64(frame, "registers")
        frame["shared_mem"] = i64(frame, "shared_mem")
        return self._gpu_table(frame)

    def _memcpy(self) -> pd.DataFrame:
        table = TABLE_MEMCPY
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
        frame["bytes"] = i64(frame, "bytes")
        copy = i64(frame, "copy_code")
        src = i64(frame, "src_code")
        dst = i64(frame, "dst_code")
        # Strings are built once per distinct (copyKind, srcKind, dstKind), not per copy.
        combos, inverse = np.unique(np.stack([copy, src, dst], axis=1), axis=0, return_inverse=True)
        described = [_describe_copy(int(c), int(a), int(b)) for c, a, b in combos]
        for position, column in enumerate(("name", "copy_kind", "host_memory")):
            values = np.array([d[position] for d in described] or [""], dtype=object)
            frame[column] = values[inverse.reshape(-1)] if len(frame) else []
        return self._gpu_table(self._graph_nodes(frame))

    def _memset(self) -> pd.DataFrame:
        table = TABLE_MEMSET
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
        frame["bytes"] = i64(frame, "bytes")
        names = {k: f"Memset ({label})" for k, label in _MEM_KINDS.items()}
        frame["name"] = pd.Series(i64(frame, "mem_code")).map(names).fillna("Memset").to_numpy()
        return self._gpu_table(self._graph_nodes(frame))

    @staticmethod
    def _graph_nodes(frame: pd.DataFrame) -> pd.DataFrame:
        nodes = i64(frame, "graph_node_id")
        in_graph = nodes > 0
        frame["graph_node_id"] = np.where(in_graph, nodes, -1)
        frame["from_graph"] = in_graph
        return frame

    def _graphs(self) -> pd.DataFrame:
        table = TABLE_GRAPH
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
        frame["graph_id"] = i64(frame, "graph_id")
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
        table["collective"] = collective_names(table["name"].to_numpy())
        return table

    # ----------------------------------------------------------------------- host

    def _host(self) -> pd.DataFrame:
        table = TABLE_RUNTIME
        if not self._timed(table):
            return make_table("host", {})
        s = self.schema
        join, name = self.schema.string("t.nameId", "n") if s.has(table, "nameId") else ("", "NULL")
        has_tid = s.has(table, "globalTid")
        sql = (
            f"SELECT {INTERVAL_SQL}, "
            f"{s.int_col(table, 'correlationId')} AS correlation, "
            f"{pid_sql('t.globalTid') if has_tid else '-1'} AS pid, "
            f"{tid_sql('t.globalTid') if has_tid else '-1'} AS tid, "
            f"COALESCE({name}, '') AS raw_name "
            f"FROM {table} t{join}"
        )
        frame = self._drop_untimed(query(self.conn, sql), "API calls")
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
                "pid": i64(frame, "pid"),
                "tid": i64(frame, "tid"),
                "start_ns": i64(frame, "start_ns"),
                "end_ns": i64(frame, "end_ns"),
                "correlation": i64(frame, "correlation"),
            },
        )

    def _syncs(self, host: pd.DataFrame) -> pd.DataFrame:
        table = TABLE_SYNC
        if not self._timed(table):
            return make_table("syncs", {})
        s = self.schema
        type_col = "syncType" if s.has(table, "syncType") else "deprecatedSyncType"
        sql = (
            f"SELECT {self._gpu_common(table)}, {s.int_col(table, type_col)} AS sync_code, "
            f"{s.int_col(table, 'eventId')} AS event_id "
            f"FROM {table} t"
        )
        frame = self._gpu_frame(sql, "synchronizations")
        tid = np.full(len(frame), -1, dtype=np.int64)
        rows = _launch_rows(frame, host)
        tid[rows >= 0] = host["tid"].to_numpy()[rows[rows >= 0]]
        return make_table(
            "syncs",
            {
                "kind": pd.Series(i64(frame, "sync_code"))
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
                "event_id": i64(frame, "event_id"),
            },
        )

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
            gpus = query(self.conn, "SELECT * FROM TARGET_INFO_GPU")
            ordinal: dict[Any, int] = {}
            if self.schema.has("TARGET_INFO_CUDA_DEVICE", "gpuId", "cudaId"):
                pairs = self.conn.execute(
                    "SELECT gpuId, cudaId FROM TARGET_INFO_CUDA_DEVICE"
                ).fetchall()
                ordinal = {g: c for g, c in pairs if isinstance(g, int) and isinstance(c, int)}
            for record in gpus.to_dict("records"):
                props = {str(k): plain(v) for k, v in record.items() if plain(v) is not None}
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
    "registers",
    "shared_mem",
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


def _api_of(name: str) -> str:
    """``driver`` for ``cu*`` (not ``cuda*``) names, else ``runtime``."""
    return "driver" if name.startswith("cu") and not name.startswith("cuda") else "runtime"
