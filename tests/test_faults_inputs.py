"""Inputs under faults: special files, stdin, permissions and option values, one line each.

Each test reproduces a fault found by trying the CLI as an adversarial user would.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, sample_file

import traceinspect.files
from traceinspect.cli import main

TRACE = "tiny_mlp.eager.json.gz"
CALIBRATION = ROOT / "traceinspect" / "calibration" / "nvidia-h200.json"


def cli(*args: str, stdin: object = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "traceinspect", *args],
        stdin=stdin,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        **kwargs,  # type: ignore[call-overload]
    )


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("traceinspect: ") and "Traceback" not in stderr, stderr
    return lines[0]


def feed_fifo(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_fifo_trace_is_read_once_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "report.json"
    writer = feed_fifo(fifo, sample_file(TRACE).read_bytes())
    done = cli("analyze", str(fifo), "--json", str(out))
    writer.join(timeout=10)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["summary"]["activities"]["kernel"] == 480


def test_fifo_without_a_writer_is_refused_not_waited_on_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(traceinspect.files, "FIFO_WAIT_S", 0.3)
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert main(["analyze", str(fifo)]) == 2
    assert time.monotonic() - started < 20
    assert "nothing written to this FIFO within 0.3 s" in one_line(capsys.readouterr().err)


def test_calibration_from_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "calibration.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "report.json"
    writer = feed_fifo(fifo, CALIBRATION.read_bytes())
    done = cli("analyze", str(sample_file(TRACE)), "--calibration", str(fifo), "--json", str(out))
    writer.join(timeout=10)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["calibration"]["name"] == "calibration"


def test_calibration_fifo_without_a_writer_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(traceinspect.files, "FIFO_WAIT_S", 0.3)
    fifo = tmp_path / "calibration.fifo"
    os.mkfifo(fifo)
    assert main(["analyze", str(sample_file(TRACE)), "--calibration", str(fifo)]) == 2
    assert "nothing written to this FIFO within 0.3 s" in capsys.readouterr().err


@pytest.mark.parametrize("compressed", [True, False])
def test_dash_reads_stdin(tmp_path: Path, compressed: bool) -> None:
    data = sample_file(TRACE).read_bytes()
    source = tmp_path / "in.bin"
    source.write_bytes(data if compressed else gzip.decompress(data))
    out = tmp_path / "report.json"
    with open(source, "rb") as stdin:
        done = cli("analyze", "-", "--json", str(out), stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["summary"]["activities"]["kernel"] == 480


def test_piped_dev_stdin_and_process_substitution(tmp_path: Path) -> None:
    trace = sample_file(TRACE)
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    py = f"{sys.executable} -m traceinspect"
    script = (
        f"zcat {trace} | {py} analyze /dev/stdin --json {out1} >/dev/null && "
        f"{py} analyze <(zcat {trace}) --json {out2} >/dev/null"
    )
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    for out in (out1, out2):
        assert json.loads(out.read_text())["summary"]["activities"]["kernel"] == 480


def test_sqlite_from_stdin_is_spooled_privately_and_read(tmp_path: Path) -> None:
    db = ROOT.parent / "shared" / "corpus" / "nsys-ai__mock.sqlite"
    if not db.is_file():
        pytest.skip("corpus absent")
    out = tmp_path / "report.json"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    with open(db, "rb") as stdin:
        done = cli("analyze", "-", "--json", str(out), stdin=stdin, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["trace"]["format"] == "nsys"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # spool removed


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], None]:
    """Make a path unreadable: permissions do not stop root (the test machines' user), so
    the system calls on it fail as they would for another user (EACCES)."""
    denied: list[str] = []

    def blocked(target: object) -> bool:
        text = os.fsdecode(target) if isinstance(target, (str, bytes, os.PathLike)) else ""
        return any(text == d or text.startswith(d + "/") for d in denied)

    def guard(real: Callable[..., object], *, on_folder_itself: bool = True) -> object:
        def call(target: object, *args: object, **kwargs: object) -> object:
            if blocked(target):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(target))  # type: ignore[arg-type]
            return real(target, *args, **kwargs)

        return call

    for module, name in ((os, "open"), (os, "scandir"), (os, "listdir"), (builtins, "open")):
        monkeypatch.setattr(module, name, guard(getattr(module, name)))
    real_stat = os.stat

    def stat(target: object, *args: object, **kwargs: object) -> object:
        text = os.fsdecode(target) if isinstance(target, (str, bytes, os.PathLike)) else ""
        if any(text.startswith(d + "/") for d in denied):  # inside a folder without x
            raise PermissionError(errno.EACCES, "Permission denied", text)
        return real_stat(target, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "stat", stat)
    denied_add = denied.append

    def add(path: Path) -> None:
        denied_add(str(path))

    return add


def test_unreadable_file_is_one_line(
    tmp_path: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.json.gz"
    trace.write_bytes(sample_file(TRACE).read_bytes())
    deny(trace)
    assert main(["analyze", str(trace)]) == 2
    assert f"{trace}: cannot read (Permission denied)" in one_line(capsys.readouterr().err)


def test_unreadable_folder_and_a_file_inside_one_are_one_line(
    tmp_path: Path, deny: Callable[[Path], None], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "ranks"
    folder.mkdir()
    (folder / "rank0.json.gz").write_bytes(sample_file(TRACE).read_bytes())
    deny(folder)
    assert main(["analyze", str(folder)]) == 2
    assert "Permission denied" in one_line(capsys.readouterr().err)
    assert main(["analyze", str(folder / "rank0.json.gz")]) == 2
    assert "Permission denied" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("option", "value"),
    [("--eager-us", "nan"), ("--eager-us", "inf"), ("--eager-us", "-5"), ("--eager-us", "0"),
     ("--top", "-1")],
)
def test_bad_option_values_are_one_line(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["analyze", str(sample_file(TRACE)), f"{option}={value}"])
    assert code == 2
    line = one_line(capsys.readouterr().err)
    assert option in line and value in line


def test_diff_eager_us_nan_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(sample_file(TRACE))
    assert main(["diff", trace, trace, "--eager-us=nan"]) == 2
    assert "--eager-us" in one_line(capsys.readouterr().err)


def test_a_5000_character_path_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    long_path = "/tmp/" + "x" * 5000 + ".json"
    assert main(["analyze", long_path]) == 2
    line = one_line(capsys.readouterr().err)
    assert "File name too long" in line
    assert len(line) < 400  # the path is shortened in the message


def test_a_5000_character_output_path_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    long_path = "/tmp/" + "x" * 5000 + ".json"
    assert main(["analyze", str(sample_file(TRACE)), "--json", long_path]) == 2
    line = one_line(capsys.readouterr().err)
    assert "File name too long" in line
