"""``traceinspect analyze`` end to end: in-process (typer's CliRunner, ``cli.main``) and as a
subprocess (``python -m traceinspect``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, sample_file
from typer.testing import CliRunner

from traceinspect.cli import app, main
from traceinspect.errors import TraceFormatError, UsageError

TRACE = "tiny_mlp.eager.json.gz"


def test_json_to_stdout_is_pure_json_and_the_terminal_report_goes_to_stderr() -> None:
    result = CliRunner().invoke(app, ["analyze", str(sample_file(TRACE)), "--json", "-"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["schema_version"] == 1
    assert [r["name"] for r in report["regions"]] == ["ProfilerStep", "step"]
    assert report["regions"][1]["verdict"] == "launch-bound"
    assert report["summary"]["activities"]["kernel"] == 480  # 96 per step x 5 steps
    assert "Regions" in result.stderr
    assert "launch-bound" in result.stderr


def test_terminal_report_shows_regions_verdicts_and_capture() -> None:
    result = CliRunner().invoke(app, ["analyze", str(sample_file("host_sync.eager.json.gz"))])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "launch-bound" in out
    assert "Capture pre-flight — ProfilerStep: not capturable" in out
    assert "aten::item" in out
    # AND a nested region kept from capture by the same sync points back to where it is
    # listed, not to nothing
    nested = "Capture pre-flight — step: not capturable\n  breaks host_sync: as under ProfilerStep"
    assert nested in out


def test_json_file_written_and_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    trace = str(sample_file(TRACE))
    runner = CliRunner()
    assert runner.invoke(app, ["analyze", trace, "--json", str(out)]).exit_code == 0
    assert json.loads(out.read_text())["regions"][0]["name"] == "ProfilerStep"
    again = runner.invoke(app, ["analyze", trace, "--json", str(out)])
    assert isinstance(again.exception, UsageError)
    assert again.exception.exit_code == 2
    assert runner.invoke(app, ["analyze", trace, "--json", str(out), "--force"]).exit_code == 0


def test_bad_input_in_process_is_exit_2_and_one_stderr_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("this is not a trace")
    result = CliRunner().invoke(app, ["analyze", str(bad)])
    assert isinstance(result.exception, TraceFormatError)
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("traceinspect: ") and str(bad) in err


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "traceinspect", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_subprocess_json_stdout_and_error_exit_codes(tmp_path: Path) -> None:
    trace = str(sample_file(TRACE))
    ok = run("analyze", trace, "--json", "-")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["regions"][1]["capture"]["verdict"] == "capturable as-is"

    missing = run("analyze", str(tmp_path / "nope.json.gz"))
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0
    assert "no such file" in missing.stderr
    assert "Traceback" not in missing.stderr

    existing = tmp_path / "out.json"
    existing.write_text("{}")
    clobber = run("analyze", trace, "--json", str(existing))
    assert clobber.returncode == 2
    assert clobber.stderr.strip().count("\n") == 0
    assert "already exists" in clobber.stderr
    assert existing.read_text() == "{}"


@pytest.mark.corpus
def test_every_verdict_renders_in_the_terminal() -> None:
    # The 8-rank A100 control trace (rank 3) has a communication-bound region: a verdict
    # the terminal must style (it once raised a rich MarkupError instead of a report).
    from conftest import corpus_file

    trace = corpus_file("HolisticTraceAnalysis__trace_diff__control.json.gz")
    result = CliRunner().invoke(app, ["analyze", str(trace), "--json", "-"])
    assert result.exit_code == 0, result.output
    verdicts = {r["verdict"] for r in json.loads(result.stdout)["regions"]}
    assert "communication-bound" in verdicts
    assert "communication-bound" in result.stderr
