"""Bad input to the nsys reader ends in TraceFormatError (or a valid timeline), never in
another exception. Bounded hypothesis runs: a few seconds in all."""

from __future__ import annotations

import functools
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from conftest import corpus_file
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from traceinspect.errors import TraceFormatError
from traceinspect.parse import SQLITE_MAGIC
from traceinspect.parse.nsys import read_nsys

MOCK = "nsys-ai__mock.sqlite"
FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
#: For examples that rewrite a copy of an export (~0.2 s each).
FUZZ_EDITS = settings(FUZZ, max_examples=15)
#: Tables the reader queries, with the columns it reads from them.
CORE_COLUMNS = {
    "CUPTI_ACTIVITY_KIND_KERNEL": [
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
        "mangledName",
        "gridX",
        "blockY",
        "graphId",
        "graphNodeId",
    ],
    "CUPTI_ACTIVITY_KIND_RUNTIME": ["start", "end", "globalTid", "correlationId", "nameId"],
    "CUPTI_ACTIVITY_KIND_MEMCPY": ["start", "end", "bytes", "copyKind", "srcKind", "dstKind"],
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": ["start", "end", "syncType", "streamId"],
    "StringIds": ["id", "value"],
    "TARGET_INFO_GPU": ["id", "name"],
}


def check(path: Path) -> None:
    """Read ``path``: a TraceFormatError with a one-line message, or a valid timeline."""
    try:
        timeline = read_nsys(path)
    except TraceFormatError as exc:
        assert "\n" not in str(exc)
        assert str(exc).startswith(str(path))
    else:
        timeline.validate()


def edit(path: Path, *statements: str, params: tuple[object, ...] = ()) -> None:
    """Apply ``statements`` to the copy at ``path``; examples SQLite itself refuses (a NOT
    NULL column set to NULL, dropping a column an index uses) are discarded."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            for sql in statements:
                conn.execute(sql, params)
    except sqlite3.Error:
        assume(False)
    finally:
        conn.close()


@functools.cache
def mock_bytes() -> bytes:
    return corpus_file(MOCK).read_bytes()


def scratch_file(name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="nsys-fuzz-"))
    return folder / name


@FUZZ
@given(data=st.binary(max_size=4096), sqlite_head=st.booleans())
def test_random_bytes(data: bytes, sqlite_head: bool) -> None:
    path = scratch_file("random.sqlite")
    try:
        path.write_bytes((SQLITE_MAGIC if sqlite_head else b"") + data)
        if not path.stat().st_size:
            path.write_bytes(b"\x00")
        check(path)
    finally:
        shutil.rmtree(path.parent)


@FUZZ
@given(fraction=st.floats(min_value=0.0, max_value=0.999))
def test_truncated_export(fraction: float) -> None:
    path = scratch_file("cut.sqlite")
    try:
        data = mock_bytes()
        path.write_bytes(data[: max(1, int(len(data) * fraction))])
        check(path)
    finally:
        shutil.rmtree(path.parent)


@FUZZ
@given(offset=st.integers(min_value=100, max_value=2**20), junk=st.binary(min_size=1, max_size=64))
def test_overwritten_bytes(offset: int, junk: bytes) -> None:
    path = scratch_file("damaged.sqlite")
    data = mock_bytes()
    offset %= len(data)
    try:
        path.write_bytes(data[:offset] + junk + data[offset + len(junk) :])
        check(path)
    finally:
        shutil.rmtree(path.parent)


identifiers = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,15}", fullmatch=True)


@FUZZ
@given(
    tables=st.dictionaries(
        identifiers.filter(lambda n: not n.lower().startswith("sqlite")),
        st.lists(identifiers, min_size=1, max_size=4, unique_by=str.lower),
        min_size=1,
        max_size=4,
    )
)
def test_unrelated_sqlite(tables: dict[str, list[str]]) -> None:
    assume(len({t.lower() for t in tables}) == len(tables))
    path = scratch_file("other.sqlite")
    try:
        with sqlite3.connect(path) as conn:
            for table, columns in tables.items():
                conn.execute(f'CREATE TABLE "{table}" ({", ".join(f"{c!r}" for c in columns)})')
                conn.execute(
                    f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(columns))})',
                    [1] * len(columns),
                )
        conn.close()
        names = {t.lower() for t in tables}
        if not names & {"stringids", "meta_data_export", "nvtx_events"} and not any(
            n.startswith("cupti_activity_kind_") for n in names
        ):
            with pytest.raises(TraceFormatError, match="not an Nsight Systems export"):
                read_nsys(path)
        else:
            check(path)
    finally:
        shutil.rmtree(path.parent)


@FUZZ_EDITS
@given(
    drops=st.lists(
        st.sampled_from([(t, c) for t, cols in CORE_COLUMNS.items() for c in cols]),
        min_size=1,
        max_size=5,
        unique=True,
    )
)
def test_core_tables_missing_columns(drops: list[tuple[str, str]]) -> None:
    path = scratch_file("drift.sqlite")
    try:
        shutil.copyfile(corpus_file(MOCK), path)
        edit(path, *(f"ALTER TABLE {table} DROP COLUMN {column}" for table, column in drops))
        check(path)
    finally:
        shutil.rmtree(path.parent)


@FUZZ_EDITS
@given(
    target=st.sampled_from([(t, c) for t, cols in CORE_COLUMNS.items() for c in cols]),
    value=st.one_of(
        st.none(),
        st.text(max_size=8),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=True),
        st.binary(max_size=8),
    ),
)
def test_odd_values_in_core_columns(target: tuple[str, str], value: object) -> None:
    table, column = target
    path = scratch_file("odd.sqlite")
    try:
        shutil.copyfile(corpus_file(MOCK), path)
        edit(path, f"UPDATE {table} SET {column} = ?", params=(value,))
        check(path)
    finally:
        shutil.rmtree(path.parent)
