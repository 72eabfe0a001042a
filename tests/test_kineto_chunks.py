"""Chunked ``traceEvents`` decoding (parse/_chunks.py): cuts land between events even when
kernel names are full of braces, and an event longer than the window widens it instead of
sending the rest of the file to one whole decode."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.conftest import sample_file
from traceinspect.parse._chunks import EventChunks, Source

DECODE_STEP = "decode_step.eager.json.gz"


def _chunk_sizes(path: Path, chunk_bytes: int, read_bytes: int = 4096) -> list[int]:
    source = Source(path, read_bytes)
    try:
        return [len(events) for events in EventChunks(source, chunk_bytes)]
    finally:
        source.close()


def test_brace_heavy_kernel_names_still_cut_per_window() -> None:
    # The H200 decode-step trace: 2.67 MB of JSON, 8,603 events; templated kernel names
    # hold dozens of "}" ("{lambda(int)#1}>(int, ...") each. Every "}" not followed by ","
    # is skipped without a decode, so each 32 KiB window ends at an event boundary: 97
    # chunks of at most 168 events. (Counting those braces as failed cuts gave up in the
    # 78th window and decoded the remaining 2,086 events whole; at 200 MB that was 4.6x
    # the file in RAM.)
    path = sample_file(DECODE_STEP)
    sizes = _chunk_sizes(path, 32 * 1024)
    with gzip.open(path, "rb") as f:
        assert sum(sizes) == len(json.load(f)["traceEvents"]) == 8603
    assert len(sizes) == 97
    assert max(sizes) == 168
    assert sizes[-1] == 17


def test_event_longer_than_the_window_widens_it(tmp_path: Path) -> None:
    # 50 events of ~1.1 KB each against a 256-byte window: each step widens the window
    # until one event fits, so every chunk holds exactly one event (the tail, the last).
    name = "x" * 1000
    events = [
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": i, "dur": 1}
        for i in range(50)
    ]
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert _chunk_sizes(path, 256, read_bytes=100) == [1] * 50
