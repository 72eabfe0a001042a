"""One trace read by several forked workers gives exactly the single-process tables.

The split threshold is lowered so that the small real traces are cut into ranges too; every
table is compared with ``assert_frame_equal(check_exact=True)`` and the metadata with ==.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import CORPUS, SAMPLES

from traceinspect import machine
from traceinspect.errors import TraceFormatError
from traceinspect.model import Timeline
from traceinspect.parse import _parallel, kineto
from traceinspect.parse.kineto import read_kineto

VALIDATION = SAMPLES / "validation"


#: Validation traces the split read is checked on per kind of recording (card, eager or
#: graphed, one stream or several), spread evenly over the kind's sizes.
SPLIT_READ_PER_KIND = 8


def split_read_traces() -> list[Path]:
    """The real traces the split read is checked on: every bundled sample and corpus trace
    (each format generation), and of the ~2,000 validation recordings, for each kind of
    recording (H200 or H100, eager or graphed, one stream or several) eight spread evenly
    over the kind's sizes, the largest included. They come from one recorder and one torch
    build (2.11), so what tells them apart for a split is their size and what a step holds,
    not their set: a median per set (313 traces, every one read alike split and whole) took
    three minutes of CI's two cores. Setting ``TRACEINSPECT_SPLIT_READ_ALL=1`` checks every
    trace (about 10 min on two cores)."""
    samples = sorted(p for p in SAMPLES.glob("**/*.json.gz") if VALIDATION not in p.parents)
    recorded = sorted(VALIDATION.glob("**/*.json.gz"))
    if os.environ.get("TRACEINSPECT_SPLIT_READ_ALL") == "1":
        return samples + recorded + sorted(CORPUS.glob("*.json.gz"))
    kinds: dict[tuple[bool, bool, bool], list[Path]] = {}
    for p in sorted(recorded, key=lambda p: (p.stat().st_size, p)):
        parts = p.relative_to(VALIDATION).parts
        key = (parts[0].startswith("h100"), ".graphed." in p.name, "streams" in str(parts[1:]))
        kinds.setdefault(key, []).append(p)
    chosen: set[Path] = set()
    for group in kinds.values():
        last = len(group) - 1
        count = min(SPLIT_READ_PER_KIND, len(group))
        chosen |= {group[round(i * last / max(count - 1, 1))] for i in range(count)}
    return samples + sorted(chosen) + sorted(CORPUS.glob("*.json.gz"))


KINETO_FILES = split_read_traces()


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Split files of any size; returns the range counts of each parallel read."""
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_parallel, "MIN_RANGE_BYTES", 1)
    counts: list[int] = []
    plan = _parallel.plan_ranges

    def counting(path: Path, workers: int) -> Any:
        planned = plan(path, workers)
        counts.append(len(planned[0]) if planned is not None else 0)
        return planned

    monkeypatch.setattr(_parallel, "plan_ranges", counting)
    return counts


def assert_same(one: Timeline, many: Timeline) -> None:
    for name, table in one.tables().items():
        pd.testing.assert_frame_equal(table, many.tables()[name], check_exact=True, obj=name)
    assert many.meta.devices == one.meta.devices
    assert many.meta.profiler == one.meta.profiler
    assert many.meta.notes == one.meta.notes
    assert many.meta.generation == one.meta.generation


def gunzip(path: Path, folder: Path) -> Path:
    out = folder / path.name.removesuffix(".gz")
    with gzip.open(path, "rb") as f:
        out.write_bytes(f.read())
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("trace", KINETO_FILES, ids=lambda p: str(p.relative_to(p.parents[1]))[:80])
def test_split_read_equals_one_core(
    trace: Path, tmp_path: Path, split_small: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a real trace (sample or corpus) as plain JSON, read on one core
    plain = gunzip(trace, tmp_path)
    one = read_kineto(plain, workers=1)
    # WHEN it is read in 2 and in 5 ranges, with the reader's usual chunks and with
    # 64 KiB chunks (many cuts inside every range); and the .json.gz itself in 4 ranges
    # (gunzipped to a temporary file first; split only from GZIP_PARALLEL_MIN_CORES)
    for workers, chunk in ((2, kineto.CHUNK_BYTES), (5, 64 * 1024)):
        monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk)
        assert_same(one, read_kineto(plain, workers=workers))
    monkeypatch.setattr(kineto, "CHUNK_BYTES", kineto.CHUNK_BYTES)
    monkeypatch.setattr(_parallel.tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    assert_same(one, read_kineto(trace, workers=_parallel.GZIP_PARALLEL_MIN_CORES))
    # THEN every table is identical, files with more than a few events were split, and
    # the temporary text is gone
    if plain.stat().st_size > 100_000:
        assert split_small == [2, 5, 4]
    assert not list((tmp_path / "temporary").iterdir())


def _event(i: int, name: str) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": i, "dur": 1,
            "args": {"External id": i}}  # fmt: skip


def test_false_boundaries_inside_strings(tmp_path: Path, split_small: list[int]) -> None:
    # GIVEN names full of text that looks like the gap between two events
    trap = '"}, {"ph": "X", "cat": "cpu_op"}, {"x": 1}, '
    events = [_event(i, f"op{i} {trap * (i % 7)}") for i in range(3000)]
    path = tmp_path / "trap.json"
    path.write_text(json.dumps({"traceEvents": events, "traceName": "t"}, indent=1))
    one = read_kineto(path, workers=1)
    # WHEN it is split in 2..6 ranges THEN the tables are the single-process ones
    for workers in range(2, 7):
        assert_same(one, read_kineto(path, workers=workers))
    assert one.cpu_ops["name"].iloc[6] == f"op6 {trap * 6}"
    assert min(split_small) >= 2


def test_bare_array_and_keys_after_events(tmp_path: Path, split_small: list[int]) -> None:
    events = [_event(i, f"op{i}") for i in range(2000)]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(events))
    assert_same(read_kineto(bare, workers=1), read_kineto(bare, workers=3))
    # Keys after traceEvents (read by the last range) reach the metadata.
    tail = tmp_path / "tail.json"
    tail.write_text(
        json.dumps({"traceEvents": events, "distributedInfo": {"rank": 3, "world_size": 8}})
    )
    many = read_kineto(tail, workers=3)
    assert_same(read_kineto(tail, workers=1), many)
    assert many.meta.profiler["distributed_rank"] == "3"
    assert split_small == [3, 3]


def test_error_in_a_later_range_is_the_one_core_error(
    tmp_path: Path, split_small: list[int]
) -> None:
    # GIVEN a syntax error three quarters into the events
    text = json.dumps({"traceEvents": [_event(i, f"op{i}") for i in range(4000)]})
    at = text.index('"name"', len(text) * 3 // 4)
    path = tmp_path / "bad.json"
    path.write_text(text[:at] + "@" + text[at + 1 :])
    with pytest.raises(TraceFormatError) as one:
        read_kineto(path, workers=1)
    # WHEN it is read in ranges THEN the same message (byte position included) is raised
    with pytest.raises(TraceFormatError) as many:
        read_kineto(path, workers=4)
    assert str(many.value) == str(one.value)
    assert f"(byte {at})" in str(one.value)


def test_when_not_to_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps({"traceEvents": [_event(i, f"op{i}") for i in range(2000)]})
    plain = tmp_path / "t.json"
    plain.write_text(text)
    packed = tmp_path / "t.json.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    # Below the size threshold: one core.
    assert _parallel.worker_count(plain, 4) == 1
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(_parallel, "MIN_RANGE_BYTES", 1)
    assert _parallel.worker_count(plain, 4) == 4
    assert _parallel.worker_count(plain, 1) == 1
    # Gzip: sized by the text its trailer records, not the compressed bytes.
    assert _parallel.json_text_bytes(packed) == len(text)
    assert _parallel.worker_count(packed, 4) == 4
    # ... and split only with GZIP_PARALLEL_MIN_CORES: on fewer the streamed read is faster
    # than gunzipping to disk first
    assert _parallel.GZIP_PARALLEL_MIN_CORES == 4
    assert _parallel.worker_count(packed, 3) == 1
    assert _parallel.worker_count(packed, 2) == 1
    assert _parallel.worker_count(plain, 2) == 2
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", len(text) + 1)
    assert _parallel.worker_count(packed, 4) == 1
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_BYTES", 0)
    # No range smaller than MIN_RANGE_BYTES.
    monkeypatch.setattr(_parallel, "MIN_RANGE_BYTES", len(text) // 2)
    assert _parallel.worker_count(plain, 4) == 2


def test_fork_beside_a_progress_thread(tmp_path: Path, split_small: list[int]) -> None:
    # A terminal's progress display runs in a thread while the trace is read.
    import threading

    plain = tmp_path / "t.json"
    plain.write_text(json.dumps({"traceEvents": [_event(i, f"op{i}") for i in range(500)]}))
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert _parallel.worker_count(plain) >= 2 or machine.usable_cores() < 2
        assert_same(read_kineto(plain, workers=1), read_kineto(plain, workers=2))
        assert split_small == [2]
    finally:
        release.set()
        other.join()


def test_corrupt_gzip_gives_the_one_core_error(tmp_path: Path, split_small: list[int]) -> None:
    text = json.dumps({"traceEvents": [_event(i, f"op{i}") for i in range(3000)]}).encode()
    packed = gzip.compress(text)
    path = tmp_path / "cut.json.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3] + packed[-8:])  # keeps the size trailer
    with pytest.raises(TraceFormatError) as one:
        read_kineto(path, workers=1)
    with pytest.raises(TraceFormatError) as many:
        read_kineto(path, workers=2)
    assert str(many.value) == str(one.value)
    assert split_small == []  # nothing was planned: the gunzip failed first
