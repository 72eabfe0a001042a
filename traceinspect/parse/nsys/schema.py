"""What one nsys export holds, and the SQL and column helpers every table reader uses.

Exports differ between nsys releases (2021.x to 2026.x): tables exist only when something
was recorded, columns come and go. Every query is built from ``PRAGMA table_info``; a column
a reader can do without is replaced by its unknown value.

Processes and threads are packed into ``globalTid = (machine ids << 48) | (pid << 24) | tid``
and ``globalPid`` (the same with ``tid`` 0).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.errors import TraceFormatError

PID_SHIFT: Final = 24  # bits: globalTid/globalPid hold the pid above the 24-bit tid
ID_MASK: Final = 0xFFFFFF  # 24-bit pid and tid fields of globalTid/globalPid

TABLE_KERNEL: Final = "CUPTI_ACTIVITY_KIND_KERNEL"
TABLE_MEMCPY: Final = "CUPTI_ACTIVITY_KIND_MEMCPY"
TABLE_MEMSET: Final = "CUPTI_ACTIVITY_KIND_MEMSET"
TABLE_GRAPH: Final = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
TABLE_RUNTIME: Final = "CUPTI_ACTIVITY_KIND_RUNTIME"
TABLE_SYNC: Final = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
TABLE_NVTX: Final = "NVTX_EVENTS"
#: Tables of which at least one marks a database as an nsys export.
NSYS_MARKERS: Final = (
    "StringIds",
    "META_DATA_EXPORT",
    TABLE_KERNEL,
    TABLE_RUNTIME,
    TABLE_NVTX,
)

#: Interval columns: NULLs become 0 plus an ``untimed`` flag, so that one missing value
#: never turns the column into float64 (which would round ns beyond 2**53).
INTERVAL_SQL: Final = (
    "COALESCE(t.start, 0) AS start_ns, COALESCE(t.end, 0) AS end_ns, "
    "(t.start IS NULL OR t.end IS NULL) AS untimed"
)


class Schema:
    """Tables and columns present in one export."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        listing = conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        names = [str(row[0]) for row in listing]
        self.columns: dict[str, set[str]] = {}
        for name in names:
            quoted = name.replace('"', '""')
            cols = conn.execute(f'PRAGMA table_info("{quoted}")').fetchall()
            self.columns[name] = {str(c[1]) for c in cols}
        self.has_strings = self.has("StringIds", "id", "value")

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

    def string(self, column: str, alias: str) -> tuple[str, str]:
        """(join clause, value expression) resolving an id ``column`` through StringIds."""
        if not self.has_strings:
            return "", "NULL"
        return (
            f" LEFT JOIN StringIds {alias} ON {alias}.id = {column}",
            f"{alias}.value",
        )


def pid_sql(column: str) -> str:
    return f"CASE WHEN {column} IS NULL THEN -1 ELSE ({column} >> {PID_SHIFT}) & {ID_MASK} END"


def tid_sql(column: str) -> str:
    return f"CASE WHEN {column} IS NULL THEN -1 ELSE {column} & {ID_MASK} END"


def query(conn: sqlite3.Connection, sql: str) -> pd.DataFrame:
    return pd.read_sql_query(sql, conn)


def i64(frame: pd.DataFrame, column: str) -> npt.NDArray[np.int64]:
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


def plain(value: Any) -> Any:
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
