"""Time the Kineto reader alone against a bare ``json.load`` of the same file.

    python bench/parse_speed.py TRACE [TRACE ...] [--repeat 2]

Each measurement runs in a fresh interpreter (imports included, page cache warm) and
reports wall seconds, CPU seconds and peak RSS (``ru_maxrss`` of the child). Build big
inputs with ``bench/make_big_trace.py``; ``bench/run.py`` measures the whole ``analyze``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READER = "from traceinspect.parse.kineto import read_kineto; read_kineto({path!r})"
JSON_LOAD = (
    "import gzip, json; p = {path!r}\n"
    "f = gzip.open(p) if open(p, 'rb').read(2) == b'\\x1f\\x8b' else open(p, 'rb')\n"
    "json.load(f)"
)


def measure(code: str) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of ``python -c code`` in a child process."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"measured command failed ({status}): {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("traces", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    print(f"{'file':<28} {'what':<10} {'wall s':>7} {'cpu s':>7} {'peak MiB':>9} {'x json':>7}")
    for trace in args.traces:
        trace.read_bytes()  # warm the page cache
        size_mb = trace.stat().st_size / 1e6
        for _ in range(args.repeat):
            base = measure(JSON_LOAD.format(path=str(trace)))
            ours = measure(READER.format(path=str(trace)))
            for what, (wall, cpu, rss) in (("json.load", base), ("reader", ours)):
                ratio = wall / base[0]
                print(f"{trace.name:<28} {what:<10} {wall:7.2f} {cpu:7.2f} {rss:9.0f} {ratio:7.2f}")
        print(f"{trace.name:<28} file size {size_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
