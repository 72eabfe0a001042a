"""``traceinspect profile`` under the script's faults: the trace and results.json survive.

Three runs of the CPU build of torch, each combining faults a script can commit: forking a
child that returns normally, closing stdout, raising an exception whose ``__str__`` raises;
starting its own torch.profiler, then leaving with ``os._exit``; being stopped by SIGTERM.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT

pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def profile(script: Path, out: Path, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "traceinspect", "profile", str(script), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        **kwargs,  # type: ignore[call-overload]
    )


def results(out: Path) -> dict[str, object]:
    assert (out / "trace.json.gz").stat().st_size > 0
    data: dict[str, object] = json.loads((out / "results.json").read_text())
    return data


def test_fork_closed_stdout_and_unprintable_exception(tmp_path: Path) -> None:
    script = tmp_path / "faulty.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys
            import torch
            x = torch.randn(32, 32) @ torch.randn(32, 32)
            pid = os.fork()
            if pid == 0:
                print("child done", flush=True)  # and the child returns from the script
            else:
                os.waitpid(pid, 0)
                sys.stdout.close()

                class Unprintable(Exception):
                    def __str__(self):
                        raise ValueError("no str for you")

                raise Unprintable()
            """
        )
    )
    out = tmp_path / "out"
    run = profile(script, out)
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 1, stderr
    assert stderr.count("results written to") == 1, stderr  # the child did not run our exit
    assert "Traceback" in stderr and "Unprintable" in stderr  # the script's own traceback
    assert "traceinspect/" not in stderr.split("Unprintable")[-1]  # no traceback of ours
    assert "whole trace" in stdout  # our report, printed after the script closed stdout
    script_outcome = results(out)["script"]
    assert isinstance(script_outcome, dict)
    assert script_outcome["error_type"] == "Unprintable"
    assert script_outcome["error_message"] == "<Unprintable: str() failed>"


def test_own_profiler_refused_and_os_exit_keeps_the_trace(tmp_path: Path) -> None:
    script = tmp_path / "own_profiler.py"
    script.write_text(
        textwrap.dedent(
            """
            import os
            import torch
            try:
                with torch.profiler.profile():
                    torch.randn(8, 8) @ torch.randn(8, 8)
            except RuntimeError as exc:
                print("refused:", "already records" in str(exc), flush=True)
            os._exit(3)
            """
        )
    )
    out = tmp_path / "out"
    run = profile(script, out)
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 3, stderr  # not 139 (SIGSEGV)
    assert "refused: True" in stdout
    assert stderr.count("cannot run a second profiler") == 1
    script_outcome = results(out)["script"]
    assert isinstance(script_outcome, dict)
    assert script_outcome["exit_status"] == 3
    assert script_outcome["error_type"] == "os._exit"


def test_sigterm_exports_the_trace_and_exits_143(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(
        "import time, torch\n"
        "torch.randn(16, 16) @ torch.randn(16, 16)\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n"
    )
    out = tmp_path / "out"
    run = profile(script, out)
    assert run.stdout is not None
    while (line := run.stdout.readline()) and "ready" not in line:
        pass
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 128 + signal.SIGTERM, stderr
    script_outcome = results(out)["script"]
    assert isinstance(script_outcome, dict)
    assert script_outcome["interrupted"] is True
    assert script_outcome["exit_status"] == 143
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary files
