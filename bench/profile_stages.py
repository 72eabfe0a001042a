"""Where ``traceinspect analyze`` spends time and memory, stage by stage, on one trace.

    python bench/profile_stages.py BIG.json                 # stage table
    python bench/profile_stages.py BIG.json --py-spy /tmp/hta-venv/bin/py-spy

The stages are those of ``traceinspect analyze`` (commands/analyze.py), run in this process
in the same order: imports, read (decode + tables), diagnose (with the trace summary),
report building, terminal rendering (to text), JSON encoding and writing. For each: wall
seconds, the resident set after it, and the peak so far (``ru_maxrss``): the stage where
the peak jumps is the one that sets the memory bill.

With ``--py-spy``, the whole command also runs under py-spy (sampling, 200 Hz, native
frames off) and the functions with the most inclusive time are listed: the split inside a
stage (e.g. JSON decoding vs. column building in the reader).
"""

from __future__ import annotations

import time

_T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Final, TypeVar  # noqa: E402

ROOT: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: py-spy sampling rate, Hz: 5 ms resolution, low enough overhead for a 10 s run.
PYSPY_RATE_HZ: Final = 200

T = TypeVar("T")


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Stages:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def run(self, name: str, fn: Callable[[], T]) -> T:
        start = time.perf_counter()
        value = fn()
        self.add(name, time.perf_counter() - start)
        return value

    def add(self, name: str, seconds: float) -> None:
        self.rows.append({"stage": name, "s": seconds, "rss": _rss_bytes(), "peak": _peak_bytes()})

    def table(self, file_bytes: int) -> str:
        total = sum(r["s"] for r in self.rows)
        lines = [
            f"{'stage':<12} {'s':>7} {'share':>6} {'RSS MiB':>8} {'peak MiB':>9} {'peak/file':>9}"
        ]
        lines.extend(
            f"{r['stage']:<12} {r['s']:7.2f} {r['s'] / total:6.1%} {r['rss'] / 2**20:8,.0f} "
            f"{r['peak'] / 2**20:9,.0f} {r['peak'] / file_bytes:9.2f}"
            for r in self.rows
        )
        lines.append(f"{'total':<12} {total:7.2f}")
        return "\n".join(lines)


def stage_profile(trace: Path) -> Stages:
    stages = Stages()
    start = time.perf_counter()
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace
    from traceinspect.report.json_report import report_data
    from traceinspect.report.terminal import render_terminal

    stages.add("imports", time.perf_counter() - start + (start - _T0))
    timeline = stages.run("read", lambda: load_trace(trace))
    # The analysis includes the trace summary.
    analysis = stages.run("diagnose", lambda: diagnose(timeline))
    report = stages.run("report", lambda: report_data(analysis))
    stages.run("render", lambda: render_terminal(analysis, width=120))
    text = stages.run("json encode", lambda: json.dumps(report, indent=1))
    with tempfile.TemporaryDirectory() as tmp:
        stages.run("json write", lambda: (Path(tmp) / "r.json").write_text(text))
    return stages


def py_spy_profile(trace: Path, py_spy: str, top: int) -> str:
    """Inclusive time per function of a sampled ``analyze`` run, traceinspect frames first."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "profile.txt"
        report = Path(tmp) / "report.json"
        cmd = [
            py_spy,
            "record",
            "-r",
            str(PYSPY_RATE_HZ),
            "-f",
            "raw",
            "-o",
            str(raw),
            "--",
            sys.executable,
            "-m",
            "traceinspect",
            "analyze",
            str(trace),
            "--json",
            str(report),
            "--force",
        ]
        subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
        total = 0
        inclusive: Counter[str] = Counter()
        for line in raw.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            n = int(count)
            total += n
            # "function (path/file.py:line)" -> "function (file.py)", once per stack.
            frames = {re.sub(r":\d+\)$", ")", f) for f in stack.split(";")}
            for frame in frames:
                inclusive[frame] += n
    lines = [f"py-spy: {total / PYSPY_RATE_HZ:.2f} s sampled; inclusive time per function"]
    shown = 0
    for frame, n in inclusive.most_common():
        if "importlib" in frame or "<frozen" in frame or "typer" in frame or "click" in frame:
            continue
        lines.append(f"{n / PYSPY_RATE_HZ:7.2f} s {n / total:6.1%}  {frame[:110]}")
        shown += 1
        if shown >= top:
            break
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--py-spy", help="py-spy executable: also sample the whole command")
    parser.add_argument("--top", type=int, default=40, help="functions listed with --py-spy")
    args = parser.parse_args(argv)
    size = args.trace.stat().st_size
    stages = stage_profile(args.trace)
    print(f"{args.trace.name}: {size / 1e6:,.0f} MB")
    print(stages.table(size))
    if args.py_spy:
        print()
        print(py_spy_profile(args.trace, args.py_spy, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
