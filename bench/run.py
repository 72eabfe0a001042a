"""Speed and memory of ``traceinspect analyze`` on big traces, against ``json.load`` and HTA.

    python bench/run.py                      # 200 MB and 1 GB (+ 200 MB .json.gz)
    python bench/run.py --sizes 200MB --repeat 3
    python bench/run.py --hta-python /tmp/hta-venv/bin/python

One run measures everything. The traces are built by ``make_big_trace.py`` from a real
corpus trace (cached under ``--workdir``; rebuilt when missing). Every measured command
runs in its own subprocess after the file has been read once (page cache warm):

* ``analyze``: ``python -m traceinspect analyze FILE --json OUT --force`` (parse, model,
  diagnosis, terminal and JSON report: the whole thing a user waits for);
* ``read``: the reader alone (``load_trace``: decoding and the model's tables), to tell
  the reader's share from the diagnosis;
* ``json.load``: the same interpreter, ``json.load`` of the file (``gzip.open`` for .gz),
  nothing else: the floor a pure-Python tool would start from;
* ``hta``: Holistic Trace Analysis' ``TraceAnalysis(trace_dir=...)`` on a folder holding
  only a link to the file, when ``--hta-python`` names an interpreter that has it (keep it
  in its own virtualenv; it is not a dependency of this project).

With ``--repeat N`` the tools take turns, N rounds of one run each, and each tool's
fastest run is kept: on a shared host whose speed drifts over minutes, every tool meets
the same drift. Wall time is measured around the subprocess (interpreter start included,
for every tool).
Peak RSS is exact, not sampled: ``os.wait4`` returns the child's ``ru_maxrss``, which the
kernel keeps as the high-water mark of the child and of every descendant it waited for
(the largest single process, not their sum). CPU is user + system seconds of the same.

Results are printed as a table and written to ``bench/out/bench-<UTC time>.json`` (and
``bench/out/latest.json``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
ROOT: Final = HERE.parent
sys.path.insert(0, str(HERE))

from make_big_trace import parse_size, write_big_trace  # noqa: E402

DEFAULT_SOURCE: Final = (
    ROOT.parent / "shared" / "corpus" / "HolisticTraceAnalysis__trace_diff__control.json.gz"
)
DEFAULT_SIZES: Final = ("200MB", "1GB")
DEFAULT_HTA_PYTHON: Final = Path("/tmp/hta-venv/bin/python")
#: HTA needs ~125 s and ~6x the file in RAM at 200 MB; larger files are skipped by default.
HTA_MAX_BYTES: Final = 250 * 10**6
#: Targets: analyze of a plain .json within this share of json.load's time ...
TARGET_TIME_RATIO: Final = 0.75
#: ... peak RSS within this multiple of the file size ...
TARGET_RSS_RATIO: Final = 1.5
#: ... and a 1 GB trace in under this many seconds (wall).
TARGET_1GB_S: Final = 15.0
#: Size slack when reusing a cached trace (a rebuilt one lands within one event of --size).
CACHE_SLACK: Final = 0.02

JSON_LOAD: Final = """\
import gzip, json, sys
path = sys.argv[1]
opener = gzip.open if open(path, "rb").read(2) == b"\\x1f\\x8b" else open
with opener(path, "rb") as f:
    json.load(f)
"""

READ_ONLY: Final = """\
import sys
from traceinspect.parse import load_trace
load_trace(sys.argv[1])
"""

HTA_LOAD: Final = """\
import logging, sys
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
TraceAnalysis(trace_dir=sys.argv[1])
"""


@dataclass
class Measure:
    tool: str
    file: str
    file_bytes: int  # on disk
    json_bytes: int  # the JSON text (after gunzip): what RSS is compared with
    wall_s: float
    cpu_s: float
    peak_rss_bytes: int
    exit_code: int
    error: str = ""
    #: 1-minute load average when the run started: other work on the machine inflates wall
    #: time (cpu_s much less so).
    load_1m: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def run_measured(
    cmd: list[str],
    *,
    timeout_s: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[float, float, int, int, str]:
    """Run ``cmd``; return (wall s, cpu s, peak RSS bytes, exit code, stderr tail)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        deadline = start + timeout_s
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-400:].decode("utf-8", "replace").strip()
    # Linux reports ru_maxrss in KiB.
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, proc.returncode, tail


def warm(path: Path) -> None:
    """Read the file once so every tool starts from the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def ensure_trace(source: Path, size: int, out: Path) -> Path:
    if out.is_file():
        # A .gz holds less than its JSON size; trust the name for those.
        if out.suffix == ".gz" or abs(out.stat().st_size - size) <= CACHE_SLACK * size:
            return out
    print(f"building {out} ({size / 1e6:,.0f} MB of JSON) from {source.name} ...", flush=True)
    tmp = out.with_name(".part-" + out.name)  # keeps the .gz suffix: compressed as it is written
    write_big_trace(source, tmp, size=size)
    tmp.replace(out)
    return out


def json_bytes(path: Path) -> int:
    """Size of the JSON text: the file's size, or what it gunzips to (streamed, not stored)."""
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return path.stat().st_size
    total = 0
    with gzip.open(path, "rb") as g:
        while chunk := g.read(1 << 24):
            total += len(chunk)
    return total


def measure_file(path: Path, args: argparse.Namespace, workdir: Path) -> list[Measure]:
    size = path.stat().st_size
    json_size = json_bytes(path)
    tools: list[tuple[str, list[str], dict[str, str] | None]] = []
    report = workdir / f"{path.name}.report.json"
    tools.append((
        "analyze",
        [sys.executable, "-m", "traceinspect", "analyze", str(path), "--json", str(report),
         "--force"],
        {**os.environ, "PYTHONPATH": str(args.tree), "COLUMNS": "120"},
    ))  # fmt: skip
    tools.append((
        "read",
        [sys.executable, "-c", READ_ONLY, str(path)],
        {**os.environ, "PYTHONPATH": str(args.tree)},
    ))  # fmt: skip
    tools.append(("json.load", [sys.executable, "-c", JSON_LOAD, str(path)], None))
    if args.hta_python is None:
        pass
    elif size > args.hta_max_bytes and not path.name.endswith(".gz"):
        print(
            f"  hta        {path.name}: skipped (> {args.hta_max_bytes / 1e6:,.0f} MB; "
            "raise --hta-max-bytes to run it)"
        )
    else:
        folder = workdir / f"hta-{path.name}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        (folder / path.name).symlink_to(path)
        tools.append(("hta", [str(args.hta_python), "-c", HTA_LOAD, str(folder)], None))

    # Round by round, every tool once a round: a machine that slows for a minute (other
    # tenants' load on a shared host) slows every tool's run of that round alike, where
    # all of one tool's runs back to back would take the slow minute for one tool alone.
    best: dict[str, Measure] = {}
    failed: set[str] = set()
    for _ in range(args.repeat):
        for tool, cmd, env in tools:
            if tool in failed:
                continue
            warm(path)
            load = os.getloadavg()[0]
            # `python -m`/`-c` put the working folder first on sys.path: run from the
            # measured tree so that its traceinspect is the one imported.
            wall, cpu, rss, code, tail = run_measured(
                cmd, timeout_s=args.timeout, env=env, cwd=args.tree
            )
            error = "" if code == 0 else tail
            m = Measure(tool, path.name, size, json_size, wall, cpu, rss, code, error, load)
            print(
                f"  {tool:<10} {path.name}: {wall:7.2f} s  {rss / 2**20:8,.0f} MiB"
                + ("" if code == 0 else f"  FAILED ({code}): {tail.splitlines()[-1:]}"),
                flush=True,
            )
            kept = best.get(tool)
            if kept is None or (m.ok and (not kept.ok or m.wall_s < kept.wall_s)):
                best[tool] = m
            if not m.ok:
                failed.add(tool)
    results = [best[tool] for tool, _, _ in tools if tool in best]
    return results


def _label(name: str) -> str:
    """``<source stem>.200MB.json.gz`` -> ``200MB.json.gz``."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.endswith("MB") and part[:-2].isdigit():
            return ".".join(parts[i:])
    return name


def table(results: list[Measure]) -> str:
    base = {m.file: m for m in results if m.tool == "json.load" and m.ok}
    lines = [
        f"{'trace':<14} {'JSON MB':>7} {'disk MB':>7} {'tool':<10} {'wall s':>8} {'cpu s':>7} "
        f"{'peak MiB':>9} "
        f"{'×json.load':>10} {'RSS/JSON':>8} {'load':>5}"
    ]
    for m in results:
        ref = base.get(m.file)
        ratio = f"{m.wall_s / ref.wall_s:.2f}" if ref and m.ok else "-"
        rss = f"{m.peak_rss_bytes / m.json_bytes:.2f}" if m.ok else "-"
        status = "" if m.ok else f"  FAILED: {m.error.splitlines()[-1] if m.error else m.exit_code}"
        lines.append(
            f"{_label(m.file):<14} {m.json_bytes / 1e6:7,.0f} {m.file_bytes / 1e6:7,.0f} "
            f"{m.tool:<10} {m.wall_s:8.2f} "
            f"{m.cpu_s:7.2f} {m.peak_rss_bytes / 2**20:9,.0f} {ratio:>10} {rss:>8} {m.load_1m:5.1f}"
            f"{status}"
        )
    return "\n".join(lines)


def verdicts(results: list[Measure]) -> list[str]:
    """The targets, checked on what was measured."""
    out = []
    base = {m.file: m for m in results if m.tool == "json.load" and m.ok}
    for m in results:
        if m.tool != "analyze" or not m.ok:
            continue
        ref = base.get(m.file)
        if m.file.endswith(".json") and ref and m.file_bytes < 5 * 10**8:
            ratio = m.wall_s / ref.wall_s
            out.append(
                f"{'PASS' if ratio <= TARGET_TIME_RATIO else 'FAIL'} {m.file}: analyze "
                f"{ratio:.2f}× json.load (target ≤ {TARGET_TIME_RATIO})"
            )
            rss = m.peak_rss_bytes / m.json_bytes
            out.append(
                f"{'PASS' if rss <= TARGET_RSS_RATIO else 'FAIL'} {m.file}: peak RSS "
                f"{rss:.2f}× the JSON size (target ≤ {TARGET_RSS_RATIO})"
            )
        if m.file.endswith(".json") and m.file_bytes >= 5 * 10**8:
            out.append(
                f"{'PASS' if m.wall_s < TARGET_1GB_S else 'FAIL'} {m.file}: "
                f"{m.wall_s:.1f} s (target < {TARGET_1GB_S:.0f} s)"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="real Kineto trace to scale (default: the 8-rank A100 control)",
    )
    parser.add_argument(
        "--sizes",
        default=",".join(DEFAULT_SIZES),
        help="comma-separated JSON sizes (default 200MB,1GB)",
    )
    parser.add_argument("--no-gz", action="store_true", help="skip the .json.gz of the first size")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path("/tmp/traceinspect-bench"),
        help="where the big traces are cached (needs ~1.5 GB)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool; the best is kept")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument(
        "--hta-python",
        type=Path,
        default=DEFAULT_HTA_PYTHON if DEFAULT_HTA_PYTHON.exists() else None,
        help="interpreter with HolisticTraceAnalysis installed",
    )
    parser.add_argument(
        "--hta-max-bytes",
        type=int,
        default=HTA_MAX_BYTES,
        help="skip HTA on plain files larger than this",
    )
    parser.add_argument("--out", type=Path, default=HERE / "out", help="results folder")
    parser.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="source tree whose traceinspect is measured (e.g. a `git archive` of a commit)",
    )
    args = parser.parse_args(argv)
    args.tree = args.tree.resolve()

    if not args.source.is_file():
        print(f"bench: source trace {args.source} not found", file=sys.stderr)
        return 2
    if args.hta_python is None:
        print(
            "bench: HTA not measured (no --hta-python; install HolisticTraceAnalysis "
            "into its own venv, e.g. /tmp/hta-venv)"
        )
    args.workdir.mkdir(parents=True, exist_ok=True)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    stem = args.source.name.removesuffix(".gz").removesuffix(".json")
    files = []
    for i, size in enumerate(sizes):
        name = f"{stem}.{size // 10**6}MB.json"
        files.append(ensure_trace(args.source, size, args.workdir / name))
        if i == 0 and not args.no_gz:
            files.append(ensure_trace(args.source, size, args.workdir / (name + ".gz")))

    results: list[Measure] = []
    for path in files:
        print(f"{path.name} ({path.stat().st_size / 1e6:,.0f} MB on disk)", flush=True)
        results.extend(measure_file(path, args, args.workdir))

    print()
    print(table(results))
    for line in verdicts(results):
        print(line)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    doc = {
        "when_utc": stamp,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "source": str(args.source),
        "tree": str(args.tree),
        "rss_method": "os.wait4 ru_maxrss (peak of the child and its waited-for descendants)",
        "results": [asdict(m) for m in results],
        "targets": verdicts(results),
    }
    text = json.dumps(doc, indent=1)
    (args.out / f"bench-{stamp}.json").write_text(text)
    (args.out / "latest.json").write_text(text)
    print(f"\nwritten {args.out / f'bench-{stamp}.json'}")
    return 0 if all(m.ok for m in results) else 1


if __name__ == "__main__":
    sys.exit(main())
