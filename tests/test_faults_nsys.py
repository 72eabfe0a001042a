"""Nsight inputs never touched, exports validated and bounded, temporary files always removed."""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, corpus_file

import traceinspect.parse.nsys.export as export
from traceinspect.errors import TraceFormatError
from traceinspect.parse import load_trace

MOCK = "nsys-ai__mock.sqlite"


def listing(folder: Path) -> tuple[list[str], int]:
    return sorted(p.name for p in folder.iterdir()), folder.stat().st_mtime_ns


def test_wal_mode_export_leaves_its_folder_unchanged(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    db = folder / "wal.sqlite"
    db.write_bytes(corpus_file(MOCK).read_bytes())
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.close()
    before = listing(folder)
    assert before[0] == ["wal.sqlite"]
    timeline = load_trace(db)
    assert len(timeline.kernels) == 2
    assert listing(folder) == before  # no -wal/-shm, folder mtime unchanged


FAKE_NSYS = """#!{python}
import os, shutil, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA Nsight Systems version 2099.1.1")
    sys.exit(0)
with open(os.environ["FAKE_NSYS_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
out = args[args.index("--output") + 1]
mode = os.environ["FAKE_NSYS_MODE"]
if mode == "garbage":
    open(out, "wb").write(b"SQLite format 3\\0" + b"garbage" * 100)
elif mode == "hang":
    open(out, "wb").write(b"partial")
    time.sleep(60)
else:
    shutil.copyfile({source!r}, out)
"""


@pytest.fixture
def fake_nsys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nsys"
    fake.write_text(FAKE_NSYS.format(python=sys.executable, source=str(corpus_file(MOCK))))
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    log.touch()
    monkeypatch.setenv("FAKE_NSYS_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return log


def report(tmp_path: Path, name: str = "run.nsys-rep", content: bytes = b"report 1") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def cached(tmp_path: Path) -> list[str]:
    folder = tmp_path / "cache" / "traceinspect"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_garbage_export_is_refused_and_never_cached(
    tmp_path: Path, fake_nsys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NSYS_MODE", "garbage")
    rep = report(tmp_path)
    for _ in range(2):
        with pytest.raises(TraceFormatError, match="nsys export failed"):
            load_trace(rep)
    assert cached(tmp_path) == []
    assert len(fake_nsys.read_text().splitlines()) == 2  # tried again, not reused


def test_cache_is_keyed_on_content_and_nsys_version(
    tmp_path: Path, fake_nsys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NSYS_MODE", "ok")
    first = report(tmp_path, "a.nsys-rep", b"same bytes")
    moved = report(tmp_path, "b.nsys-rep", b"same bytes")
    assert len(load_trace(first).kernels) == 2
    assert len(load_trace(moved).kernels) == 2  # same content: from the cache
    assert len(fake_nsys.read_text().splitlines()) == 1
    stat = first.stat()
    first.write_bytes(b"other bytes")  # same size, same mtime: still a new report
    os.utime(first, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    load_trace(first)
    assert len(fake_nsys.read_text().splitlines()) == 2
    assert len(cached(tmp_path)) == 2


def test_hung_nsys_times_out_with_one_line(
    tmp_path: Path, fake_nsys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_NSYS_MODE", "hang")
    monkeypatch.setattr(export, "NSYS_EXPORT_TIMEOUT_S", 1.0)
    with pytest.raises(TraceFormatError, match="nsys export ran longer than 1 s"):
        load_trace(report(tmp_path))
    assert cached(tmp_path) == []


def sqlite_bomb(path: Path, mib: int) -> Path:
    header = gzip.compress(corpus_file(MOCK).read_bytes()[:4096])
    path.write_bytes(header + gzip.compress(b"\0" * (1 << 20)) * mib)
    return path


def test_compressed_sqlite_inflation_is_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export, "MAX_INFLATED_BYTES", 8 << 20)
    bomb = sqlite_bomb(tmp_path / "bomb.sqlite.gz", 64)
    with pytest.raises(TraceFormatError, match="decompresses to more than 0 GiB|more than"):
        load_trace(bomb)


def test_sigterm_while_inflating_a_sqlite_gz_removes_the_temporary_copy(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bomb = sqlite_bomb(tmp_path / "big.sqlite.gz", 4096)
    run = subprocess.Popen(
        [sys.executable, "-m", "traceinspect", "analyze", str(bomb)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    # Wait until the inflated copy exists and is growing, then stop the run.
    for _ in range(600):
        copies = list(scratch.rglob("*.sqlite"))
        if copies and copies[0].stat().st_size > (16 << 20):
            break
        run.poll()
        assert run.returncode is None, run.stderr
        subprocess.run(["sleep", "0.1"], check=True)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    assert list(scratch.iterdir()) == []
