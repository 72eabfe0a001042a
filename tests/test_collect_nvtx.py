"""``traceinspect.region`` under an NVTX tool (Nsight Systems) and without one.

Whether a tool listens is decided once per process from its environment, so each case runs
in a fresh interpreter; the ``nvtx`` package's range calls are replaced by recorders there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nvtx")

ROOT = Path(__file__).resolve().parents[1]
TOOL_ENV = (
    "NSYS_PROFILING_SESSION_ID",
    "NVTX_INJECTION64_PATH",
    "NVTX_INJECTION32_PATH",
    "CUDA_INJECTION64_PATH",
)

SCRIPT = """
import json, sys
import nvtx
calls = []
nvtx.push_range = lambda message=None, **kw: calls.append(("push", message))
nvtx.pop_range = lambda domain=None: calls.append(("pop", None))
import traceinspect
from traceinspect.collect.regions import nvtx_tool_attached

@traceinspect.region("step")
def step():
    with traceinspect.region("decode"):
        pass

step()
with traceinspect.region("decode"):
    pass
print(json.dumps({"attached": nvtx_tool_attached(), "calls": calls,
                  "torch": "torch" in sys.modules}))
"""


def run_with(env_extra: dict[str, str], script: str = SCRIPT) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in TOOL_ENV}
    env.update(env_extra)
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    "variable", ["NSYS_PROFILING_SESSION_ID", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"]
)
def test_regions_emit_nvtx_ranges_when_a_tool_is_injected(variable: str) -> None:
    result = run_with({variable: "1"})
    assert result["attached"] is True
    assert result["calls"] == [
        ["push", "step"],
        ["push", "decode"],
        ["pop", None],
        ["pop", None],
        ["push", "decode"],
        ["pop", None],
    ]
    assert result["torch"] is False  # no profiler involved: torch never imported


def test_regions_stay_silent_without_a_tool_or_profiler() -> None:
    result = run_with({})
    assert result["attached"] is False
    assert result["calls"] == []


def test_an_imported_nvtx_package_is_asked_whether_a_tool_listens() -> None:
    # nvtx's default domain is its no-op dummy unless a tool is attached: here it is replaced
    # by a live one, as with a tool that injects itself without the environment.
    script = SCRIPT.replace(
        "import traceinspect\n",
        "nvtx.get_domain = lambda name=None: object()\nimport traceinspect\n",
        1,
    )
    result = run_with({}, script)
    assert result["attached"] is True
    assert len(result["calls"]) == 6  # type: ignore[arg-type]


def test_a_script_that_never_imports_nvtx_does_not_import_it() -> None:
    script = (
        "import sys, traceinspect\n"
        "with traceinspect.region('x'):\n"
        "    pass\n"
        "import json; print(json.dumps({'nvtx': 'nvtx' in sys.modules}))\n"
    )
    assert run_with({}, script) == {"nvtx": False}
    assert run_with({"NSYS_PROFILING_SESSION_ID": "7"}, script) == {"nvtx": True}
