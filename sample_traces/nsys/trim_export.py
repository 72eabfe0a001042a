"""Trim an Nsight Systems SQLite export to what traceinspect reads, and gzip it.

    python sample_traces/nsys/trim_export.py EXPORT.sqlite OUT.sqlite.gz [--from-range NAME]
        [--keep-range NAME ...]

Keeps the tables the reader uses (GPU activities, API calls, syncs, NVTX, strings, device
and process descriptions, export metadata without the recorded environment variables);
with ``--from-range NAME``, only what starts from 1 ms before the first NVTX range NAME on
(NVTX domain creations are always kept); with ``--keep-range NAME`` (repeatable), only the
API calls, NVTX ranges and syncs that start inside the first NVTX range of each NAME, and the
GPU activities those calls launched; then the strings still referenced. The input is copied
first, never changed.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sqlite3
import tempfile
from pathlib import Path

KEEP = {
    "StringIds",
    "META_DATA_EXPORT",
    "META_DATA_CAPTURE",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "PROCESSES",
    "ThreadNames",
    "TARGET_INFO_GPU",
    "TARGET_INFO_CUDA_DEVICE",
    "TARGET_INFO_SESSION_START_TIME",
}
TIMED = [t for t in sorted(KEEP) if t.startswith("CUPTI_") or t == "NVTX_EVENTS"]
STRING_COLUMNS = ("nameId", "demangledName", "mangledName", "shortName", "textId", "name")
MARGIN_NS = 1_000_000


def _first_range(conn: sqlite3.Connection, name: str) -> tuple[int, int]:
    row = conn.execute(
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE COALESCE(n.text, s.value) = ? ORDER BY n.start LIMIT 1",
        (name,),
    ).fetchone()
    if row is None:
        raise SystemExit(f"no NVTX range named {name!r}")
    return int(row[0]), int(row[1])


def keep_ranges(conn: sqlite3.Connection, names: list[str], present: list[str]) -> None:
    """Delete what neither starts inside nor was launched from inside the named ranges."""
    conn.execute("CREATE TEMP TABLE kept (s INTEGER, e INTEGER)")
    conn.executemany("INSERT INTO kept VALUES (?, ?)", [_first_range(conn, n) for n in names])
    inside = "EXISTS (SELECT 1 FROM kept k WHERE {t}.start >= k.s AND {t}.start <= k.e)"
    for table in ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
        if table in present:
            spare = " AND eventType != 75" if table == "NVTX_EVENTS" else ""
            conn.execute(f"DELETE FROM {table} WHERE NOT {inside.format(t=table)}{spare}")
    for table in present:
        if table in ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"):
            continue
        conn.execute(
            f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
            f"WHERE r.correlationId = {table}.correlationId "
            f"AND (r.globalTid >> 24) = ({table}.globalPid >> 24))"
        )


def trim(conn: sqlite3.Connection, from_range: str | None, keep: list[str] | None = None) -> None:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        if table not in KEEP:
            conn.execute(f'DROP TABLE "{table}"')
    conn.execute("DELETE FROM META_DATA_CAPTURE WHERE name LIKE '%ENVIRONMENT_VARIABLE%'")
    present = [t for t in TIMED if t in tables]
    if from_range:
        row = conn.execute(
            "SELECT MIN(n.start) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
            "WHERE COALESCE(n.text, s.value) = ? OR COALESCE(n.text, s.value) LIKE ?",
            (from_range, from_range.replace("%", r"\%") + ", %"),
        ).fetchone()
        if row is None or row[0] is None:
            raise SystemExit(f"no NVTX range named {from_range!r}")
        cut = int(row[0]) - MARGIN_NS
        for table in present:
            keep_domains = " AND eventType != 75" if table == "NVTX_EVENTS" else ""
            conn.execute(f"DELETE FROM {table} WHERE start < ?{keep_domains}", (cut,))
    if keep:
        keep_ranges(conn, keep, present)
    used: set[int] = set()
    for table in present:
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for column in STRING_COLUMNS:
            if column in columns and column != "name":
                used.update(
                    r[0] for r in conn.execute(f"SELECT DISTINCT {column} FROM {table}") if r[0]
                )
    conn.execute("CREATE TEMP TABLE used (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO used VALUES (?)", [(i,) for i in used])
    conn.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT id FROM used)")
    conn.commit()
    conn.execute("VACUUM")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--from-range")
    parser.add_argument("--keep-range", action="append", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "export.sqlite"
        shutil.copyfile(args.export, copy)
        conn = sqlite3.connect(copy)
        try:
            trim(conn, args.from_range, args.keep_range)
        finally:
            conn.close()
        with open(copy, "rb") as src, gzip.open(args.out, "wb", compresslevel=9) as dst:
            shutil.copyfileobj(src, dst)
    print(f"{args.out}: {args.out.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
