"""Running a user's script as `python script.py args` would (no profiler involved)."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

from traceinspect.collect.runner import INTERRUPTED_STATUS, run_script

FIXTURES = Path(__file__).parent / "fixtures" / "scripts"


def _script(tmp_path: Path, body: str, name: str = "user_script.py") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_argv_name_path_and_cwd_are_as_python_sets_them(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    argv_before, path_before, cwd_before = list(sys.argv), list(sys.path), os.getcwd()
    outcome = run_script(FIXTURES / "echo_argv.py", [str(report), "0", "--lr=3"])
    seen = json.loads(report.read_text())
    assert outcome.exit_status == 0
    assert outcome.error_type is None
    assert seen["argv"] == [str((FIXTURES / "echo_argv.py").absolute()), str(report), "0", "--lr=3"]
    assert seen["name"] == "__main__"
    assert seen["file"] == str((FIXTURES / "echo_argv.py").absolute())
    assert seen["path0"] == str(FIXTURES.resolve())
    assert seen["cwd"] == cwd_before
    assert seen["recording"] is False  # no profiler here
    # AND everything is restored afterwards
    assert sys.argv == argv_before
    assert sys.path == path_before
    assert sys.modules["__main__"].__name__ == "__main__"


def test_sys_exit_status_is_kept(tmp_path: Path) -> None:
    outcome = run_script(FIXTURES / "echo_argv.py", [str(tmp_path / "r.json"), "3"])
    assert outcome.exit_status == 3
    assert not outcome.interrupted


def test_sys_exit_with_a_message_prints_it_and_gives_1(tmp_path: Path) -> None:
    err = io.StringIO()
    outcome = run_script(_script(tmp_path, "import sys\nsys.exit('bad config')\n"), [], stderr=err)
    assert outcome.exit_status == 1
    assert outcome.error_message == "bad config"
    assert err.getvalue() == "bad config\n"


def test_sys_exit_none_is_success(tmp_path: Path) -> None:
    assert run_script(_script(tmp_path, "raise SystemExit\n"), []).exit_status == 0


def test_uncaught_exception_prints_the_scripts_traceback_only(tmp_path: Path) -> None:
    script = _script(tmp_path, "def f():\n    return 1 / 0\n\nf()\n")
    err = io.StringIO()
    outcome = run_script(script, [], stderr=err)
    assert outcome.exit_status == 1
    assert outcome.error_type == "ZeroDivisionError"
    text = err.getvalue()
    assert text.startswith("Traceback (most recent call last):\n")
    assert f'File "{script}", line 4, in <module>' in text
    assert f'File "{script}", line 2, in f' in text
    assert text.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "runpy" not in text and "runner.py" not in text


def test_syntax_error_prints_like_python(tmp_path: Path) -> None:
    err = io.StringIO()
    outcome = run_script(_script(tmp_path, "x = (1,\n"), [], stderr=err)
    assert outcome.exit_status == 1
    assert outcome.error_type == "SyntaxError"
    assert "Traceback" not in err.getvalue()
    assert "SyntaxError" in err.getvalue()


def test_ctrl_c_gives_130(tmp_path: Path) -> None:
    err = io.StringIO()
    outcome = run_script(_script(tmp_path, "raise KeyboardInterrupt\n"), [], stderr=err)
    assert outcome.exit_status == INTERRUPTED_STATUS == 130
    assert outcome.interrupted
    assert "KeyboardInterrupt" in err.getvalue()


def test_script_imports_its_sibling_modules(tmp_path: Path) -> None:
    # sys.path[0] is the script's folder, so `import helper` finds helper.py beside it.
    _script(tmp_path, "VALUE = 41\n", name="ti_sibling_helper.py")
    script = _script(
        tmp_path, "import sys, ti_sibling_helper\nsys.exit(ti_sibling_helper.VALUE + 1)\n"
    )
    try:
        assert run_script(script, []).exit_status == 42
    finally:
        sys.modules.pop("ti_sibling_helper", None)
