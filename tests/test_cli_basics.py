"""Version, help and shell completion, through the CLI as users call it."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT
from typer.testing import CliRunner

from traceinspect.cli import app


def test_version() -> None:
    from importlib.metadata import version

    for flag in ("--version", "-V"):
        result = CliRunner().invoke(app, [flag])
        assert result.exit_code == 0
        assert result.stdout == f"traceinspect {version('traceinspect')}\n"


def test_short_help_on_every_command() -> None:
    runner = CliRunner()
    top = runner.invoke(app, ["-h"])
    assert top.exit_code == 0
    for command in ("analyze", "profile", "diff", "calibrate"):
        assert command in top.stdout
    for command, option in (
        ("analyze", "--quiet"),
        ("diff", "--full-names"),
        ("profile", "--out"),
        ("calibrate", "--quick"),
    ):
        result = runner.invoke(app, [command, "-h"], env={"COLUMNS": "120"})
        assert result.exit_code == 0
        assert option in result.stdout
    # AND an extra's name in square brackets reaches the reader whole (not read as markup)
    shown = runner.invoke(app, ["analyze", "-h"], env={"COLUMNS": "120"}).stdout
    assert "pip install 'traceinspect[cluster]'" in " ".join(shown.replace("│", " ").split())


def test_help_names_option_values_in_words() -> None:
    # typer shows a value's Python type (`<path>`, `<int range>`, `<bool>` beside a flag):
    # options show PATH, N, TEXT instead, flags nothing
    runner = CliRunner()
    pages = {
        command: runner.invoke(app, [*command, "-h"], env={"COLUMNS": "200"}).stdout
        for command in ((), ("analyze",), ("profile",), ("diff",), ("calibrate",))
    }
    lines = {
        line.split()[1]: " ".join(line.replace("│", " ").split())
        for page in pages.values()
        for line in page.splitlines()
        if line.startswith("│ --")
    }
    assert lines["--html"].startswith("--html PATH Write")
    assert lines["--top"].startswith("--top N How many")
    assert lines["--json"].startswith("--json TEXT Write")
    assert lines["--iters"].startswith("--iters N [x>=1] Timed steps")
    assert lines["--quiet"].startswith("--quiet -q No progress")
    assert lines["--help"].startswith("--help -h Show this")
    options = [line for page in pages.values() for line in page.splitlines() if "│ --" in line]
    assert len(options) > 30
    types = ("<path>", "<str>", "<int", "<float", "<bool>", "<list[")
    assert not [line for line in options if any(t in line for t in types)]
    # ... and arguments too, their names kept in the usage line
    arguments = [line for page in pages.values() for line in page.splitlines() if "│ *" in line]
    assert any(" trace " in line and " PATH " in line for line in arguments)
    assert not [line for page in pages.values() for line in page.splitlines()
                if any(t in line for t in types)]
    assert "Usage: traceinspect analyze [OPTIONS] {trace}" in pages[("analyze",)]


def test_completion_scripts_and_completions() -> None:
    # GIVEN the installed entry point, as a shell calls it (the shell named: typer otherwise
    # detects it from the process tree, which fails where a runner, not a shell, started
    # the tests, and takes no value)
    env = {**os.environ, "COLUMNS": "100", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    shown = subprocess.run(
        [sys.executable, "-m", "traceinspect", "--show-completion", "bash"],
        capture_output=True, text=True, timeout=60, check=False, cwd=ROOT, env=env,
    )
    assert shown.returncode == 0, shown.stderr
    assert "complete -o default -F _traceinspect_completion traceinspect" in shown.stdout
    # WHEN bash asks for completions of `traceinspect an` and `traceinspect analyze --fu`
    for words, cword, expected in (
        ("traceinspect an", "1", "analyze"),
        ("traceinspect diff a b --fu", "4", "--full-names"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", "from traceinspect.cli import main; main()"],
            capture_output=True, text=True, timeout=60, check=False, cwd=ROOT,
            env={**env, "_TRACEINSPECT_COMPLETE": "complete_bash", "COMP_WORDS": words,
                 "COMP_CWORD": cword},
        )
        # THEN the command or option comes back
        assert done.stdout.split() == [expected], done.stderr
