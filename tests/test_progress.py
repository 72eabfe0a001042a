"""Progress on stderr: only on a terminal, only for work that outlasts a second, never with -q."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, sample_file
from rich.console import Console
from typer.testing import CliRunner

from traceinspect.cli import app
from traceinspect.report.progress import (
    SHOW_AFTER_ENV,
    SHOW_AFTER_S,
    Progress,
    default_show_after_s,
    file_label,
)


def terminal(buffer: io.StringIO) -> Console:
    return Console(file=buffer, force_terminal=True, width=80)


def test_a_stage_longer_than_the_delay_is_drawn_and_then_cleared() -> None:
    buffer = io.StringIO()
    with Progress(console=terminal(buffer), show_after_s=0.05) as progress:
        with progress.stage("reading big.json.gz (312.0 MB)"):
            time.sleep(0.4)
        assert progress.shown
    out = buffer.getvalue()
    assert "reading big.json.gz (312.0 MB)" in out
    assert "0:00:00" in out  # elapsed time column


def test_quick_work_draws_nothing() -> None:
    buffer = io.StringIO()
    with Progress(console=terminal(buffer)) as progress:
        with progress.stage("reading small.json"):
            pass
    assert SHOW_AFTER_S == 1.0
    assert not progress.shown
    assert buffer.getvalue() == ""


def test_nothing_when_quiet_or_not_a_terminal() -> None:
    for console, quiet in (
        (terminal(io.StringIO()), True),
        (Console(file=io.StringIO(), force_terminal=False), False),
    ):
        with Progress(console=console, quiet=quiet, show_after_s=0.0) as progress:
            assert not progress.enabled
            with progress.stage("reading"):
                time.sleep(0.05)
        assert not progress.shown
        assert console.file.getvalue() == ""  # type: ignore[attr-defined]


def test_stage_description_is_not_markup() -> None:
    buffer = io.StringIO()
    with Progress(console=terminal(buffer), show_after_s=0.0) as progress:
        with progress.stage("reading [bold red]x[/].json"):
            time.sleep(0.3)
    assert "[bold red]x[/].json" in buffer.getvalue()


def test_file_label_gives_the_size(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_bytes(b"x" * 2_500_000)
    assert file_label(f) == "t.json (2.5 MB)"
    assert file_label(tmp_path / "missing.json") == "missing.json"


def test_piped_cli_prints_no_progress() -> None:
    result = CliRunner().invoke(app, ["analyze", str(sample_file("tiny_mlp.eager.json.gz"))])
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.fixture(scope="module")
def slow_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trace that takes more than a second to read: 120 copies of the mixed step (82 MB)."""
    big = tmp_path_factory.mktemp("progress") / "big.json"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "make_big_trace.py"),
         str(sample_file("mixed.eager.json.gz")), "--copies", "120", "-o", str(big)],
        check=True, capture_output=True, timeout=120,
    )
    return big


@pytest.mark.slow
@pytest.mark.parametrize("quiet", [False, True], ids=["terminal", "quiet"])
def test_cli_on_a_terminal_shows_progress_for_a_slow_read(slow_trace: Path, quiet: bool) -> None:
    big = slow_trace
    # WHEN analyzed with stderr on a pseudo-terminal (stdout piped)
    main_fd, child_fd = pty.openpty()
    args = [sys.executable, "-m", "traceinspect", "analyze", str(big)] + (["-q"] if quiet else [])
    # progress drawn at once: whether a read outlasts the 1 s delay depends on the machine
    env = {**os.environ, SHOW_AFTER_ENV: "0"}
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=child_fd, cwd=ROOT, env=env)
    os.close(child_fd)
    seen = b""
    while True:
        ready, _, _ = select.select([main_fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif child.poll() is not None:
            break
    stdout, _ = child.communicate(timeout=120)
    os.close(main_fd)
    assert child.returncode == 0
    # THEN the terminal saw the stage (unless -q), and stdout holds the report only
    assert (b"reading big.json" in seen or b"diagnosing" in seen) is not quiet
    assert b"reading" not in stdout
    assert b"Regions" in stdout


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 1.0), ("0", 0.0), ("2.5", 2.5), ("-1", 1.0), ("nan", 1.0), ("soon", 1.0)],
)
def test_progress_delay_from_the_environment(
    value: str | None, expected: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(SHOW_AFTER_ENV, raising=False)
    else:
        monkeypatch.setenv(SHOW_AFTER_ENV, value)
    assert default_show_after_s() == expected
