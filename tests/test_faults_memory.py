"""Memory bounded by the events kept, never by the bytes read.

The hostile inputs are built as multi-member gzip files: one compressed megabyte of
whitespace (about 1 KiB) repeated, so a 2 MB file inflates to 2 GiB in well under a second
of building. Each is read by a child process under an address-space limit (so a regression
fails with a MemoryError instead of taking the machine's memory), which reports its peak RSS.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, sample_file

from traceinspect.files import expanded_json_bytes

MiB = 1 << 20
GiB = 1 << 30
#: The child's address-space limit: numpy/pandas/msgspec imports take ~1 GiB of virtual space.
ADDRESS_LIMIT = 3 * GiB
#: Peak RSS allowed for reading a bomb: the sample alone peaks near 100 MiB; without the
#: bounds the 512 MiB of blanks alone are held (twice while the buffer grows).
RSS_BOUND_MIB = 400

WHITESPACE_MEMBER = gzip.compress(b" " * MiB, compresslevel=9)
JUNK_MEMBER = gzip.compress(b"x" * MiB, compresslevel=9)

CHILD = """
import resource, sys, json
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from traceinspect.cli import main
code = main(sys.argv[2:])
# VmHWM, not ru_maxrss: Linux carries the forking parent's (pytest's) peak across exec
# into ru_maxrss; VmHWM is this process image's own peak.
with open("/proc/self/status") as status:
    peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) // 1024
print(f"peak_rss_mib={peak}", file=sys.stderr)
sys.exit(code)
"""


def run_child(*args: str, timeout: float = 900) -> tuple[int, str, int]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ADDRESS_LIMIT), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )
    match = re.search(r"peak_rss_mib=(\d+)", done.stderr)
    peak = int(match.group(1)) if match else -1
    stderr = re.sub(r"peak_rss_mib=\d+\n?", "", done.stderr)
    return done.returncode, stderr, peak


def sample_events() -> tuple[bytes, list[bytes], dict[str, object]]:
    doc = json.loads(gzip.decompress(sample_file("tiny_mlp.eager.json.gz").read_bytes()))
    events = [json.dumps(e).encode() for e in doc.pop("traceEvents")]
    return b"", events, doc


def bomb_trace(path: Path, whitespace_mib: int) -> Path:
    """The sample trace with ``whitespace_mib`` MiB of whitespace between two events."""
    _, events, rest = sample_events()
    half = len(events) // 2
    head = b'{"traceEvents": [' + b",\n".join(events[:half]) + b",\n"
    tail = b",\n".join(events[half:]) + b"], " + json.dumps(rest).encode()[1:]
    path.write_bytes(gzip.compress(head) + WHITESPACE_MEMBER * whitespace_mib + gzip.compress(tail))
    return path


@pytest.mark.slow
def test_whitespace_bomb_inside_trace_events_reads_in_bounded_memory(tmp_path: Path) -> None:
    bomb = bomb_trace(tmp_path / "bomb.json.gz", whitespace_mib=512)
    assert bomb.stat().st_size < MiB  # 0.5 MB on disk, 512 MiB of JSON (bench/fuzz.py: 2 GiB)
    out = tmp_path / "report.json"
    code, stderr, peak = run_child("analyze", str(bomb), "--json", str(out))
    assert code == 0, stderr
    report = json.loads(out.read_text())
    # The same report as the trace without the whitespace: 5 steps, 480 kernels.
    assert report["summary"]["activities"]["kernel"] == 480
    assert [r["occurrences"] for r in report["regions"]] == [5, 5]
    assert 0 < peak < RSS_BOUND_MIB, peak


def test_nul_bytes_fail_fast_at_their_position(tmp_path: Path) -> None:
    # NUL at byte 16, then 1 GiB more: one line naming byte 16, without reading on.
    bad = tmp_path / "nul.json.gz"
    bad.write_bytes(gzip.compress(b'{"traceEvents":[\x00') + WHITESPACE_MEMBER * 1024)
    code, stderr, peak = run_child("analyze", str(bad))
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "byte 16" in stderr
    assert 0 < peak < RSS_BOUND_MIB, peak


def test_junk_before_trace_events_fails_fast(tmp_path: Path) -> None:
    bad = tmp_path / "junk.json.gz"
    bad.write_bytes(gzip.compress(b"{") + JUNK_MEMBER * 1024)
    code, stderr, peak = run_child("analyze", str(bad))
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "(byte 1)" in stderr
    assert 0 < peak < RSS_BOUND_MIB, peak


def test_a_huge_string_before_trace_events_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    # Valid JSON, but 1 GiB of one value before the events: refused, not held in memory.
    bad = tmp_path / "big_key.json.gz"
    bad.write_bytes(
        gzip.compress(b'{"junk": "')
        + JUNK_MEMBER * 1024
        + gzip.compress(b'", "traceEvents": []}')
    )
    code, stderr, peak = run_child("analyze", str(bad))
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "MiB" in stderr
    assert 0 < peak < RSS_BOUND_MIB, peak


def test_one_event_larger_than_the_cap_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    bad = tmp_path / "big_event.json.gz"
    bad.write_bytes(
        gzip.compress(b'{"traceEvents": [{"name": "')
        + JUNK_MEMBER * 1024
        + gzip.compress(b'"}]}')
    )
    code, stderr, peak = run_child("analyze", str(bad))
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "MiB" in stderr
    assert 0 < peak < RSS_BOUND_MIB, peak


def test_expansion_is_measured_on_content_not_assumed(tmp_path: Path) -> None:
    # Real events that compress 100x or more, and a whitespace bomb that holds no events.
    _, events, _ = sample_events()
    dense = tmp_path / "dense.json.gz"
    body = b'{"traceEvents": [' + b",".join(events * 40) + b"]}"
    dense.write_bytes(gzip.compress(body, compresslevel=9))
    measured = expanded_json_bytes(dense)
    assert 0.5 * len(body) < measured < 1.5 * len(body)
    bomb = bomb_trace(tmp_path / "bomb.json.gz", whitespace_mib=256)
    assert expanded_json_bytes(bomb) < 64 * MiB  # the events, not the 256 MiB of spaces
    plain = tmp_path / "plain.json"
    plain.write_bytes(body)
    assert expanded_json_bytes(plain) == len(body)


def test_a_whitespace_bomb_is_not_inflated_to_disk_to_be_split(tmp_path: Path) -> None:
    # GIVEN 256 MiB of whitespace around the sample's events: its gzip trailer says 256 MiB
    # of JSON text, past the size the reader splits across processes
    from traceinspect.parse import _parallel

    _, events, rest = sample_events()
    bomb = tmp_path / "bomb.json.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as out:  # one member: its trailer says all
        out.write(b'{"traceEvents": [' + b",\n".join(events))
        blank = b" " * MiB
        for _ in range(256):
            out.write(blank)
        out.write(b"], " + json.dumps(rest).encode()[1:])
    assert _parallel.json_text_bytes(bomb) >= _parallel.PARALLEL_MIN_BYTES
    # THEN it is read on one core (streamed), never inflated into the temporary folder
    assert _parallel.worker_count(bomb, 4) == 1


def test_a_gzip_that_inflates_past_the_room_checked_is_abandoned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a multi-member gzip whose trailer (the last member's) records 1 KiB, and a
    # temporary folder with room for 4 MiB only
    import shutil
    from collections import namedtuple

    from traceinspect.parse import _parallel

    trace = tmp_path / "t.json.gz"
    trace.write_bytes(JUNK_MEMBER * 8 + gzip.compress(b" " * 1024))
    folder = tmp_path / "tmp"
    folder.mkdir()
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(_parallel.tempfile, "gettempdir", lambda: str(folder))
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(8 * MiB, 4 * MiB, 4 * MiB))
    # WHEN it is inflated for the parallel read
    # THEN it stops at the room it checked for (half the free space) and leaves nothing
    assert _parallel._gunzip_to_temporary(trace) is None
    assert list(folder.iterdir()) == []
