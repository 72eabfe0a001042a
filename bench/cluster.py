"""``analyze DIR`` on a local process pool, on ``--cluster local`` and on a real dask
scheduler with two workers on 127.0.0.1: wall time, and whether the reports are equal.

    python bench/cluster.py                      # 4 ranks of 100 MB
    python bench/cluster.py --ranks 8 --size 200MB --workers 2

The rank folder holds ``--ranks`` links to one trace built by ``make_big_trace.py`` from a
real corpus trace (cached under ``--workdir``). The scheduler and its workers are started
with the ``dask`` command of this interpreter (``--nthreads 1`` each) and stopped at the
end; starting them is not part of the timed run, connecting to them is. Every run is a
``python -m traceinspect analyze DIR --json OUT`` subprocess; the best of ``--repeat`` is
kept and the 1-minute load average of that run listed (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Final

HERE: Final = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_big_trace import parse_size  # noqa: E402
from run import DEFAULT_SOURCE, ROOT, ensure_trace  # noqa: E402

#: Seconds for the scheduler and its workers to come up.
START_TIMEOUT_S: Final = 120


def start_cluster(
    folder: Path, workers: int, memory: str
) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """``dask scheduler`` and ``workers`` single-threaded ``dask worker`` processes on
    127.0.0.1; the scheduler's address once every worker has joined."""
    dask = Path(sys.executable).with_name("dask")
    info = folder / "scheduler.json"
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    processes = [
        subprocess.Popen(
            [str(dask), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
             "--scheduler-file", str(info)],
            start_new_session=True, cwd=folder, **quiet,
        )  # fmt: skip
    ]
    worker = [str(dask), "worker", "--scheduler-file", str(info), "--nthreads", "1",
              "--memory-limit", memory, "--no-dashboard", "--host", "127.0.0.1"]  # fmt: skip
    processes.extend(
        subprocess.Popen(worker, start_new_session=True, cwd=folder, **quiet)
        for _ in range(workers)
    )
    from distributed import Client

    deadline = time.monotonic() + START_TIMEOUT_S
    while not info.exists() or not info.read_text().strip():
        if time.monotonic() > deadline:
            stop_cluster(processes)
            raise SystemExit("dask scheduler did not start")
        time.sleep(0.2)
    address = str(json.loads(info.read_text())["address"])
    with Client(address, timeout="60s") as client:
        client.wait_for_workers(workers, timeout=max(1.0, deadline - time.monotonic()))
    return address, processes


def stop_cluster(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in reversed(processes):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        _wait_or_kill(process)


def _wait_or_kill(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def timed(cmd: list[str], repeat: int) -> tuple[float, float]:
    """Best wall seconds of ``cmd`` over ``repeat`` runs, and the load average then."""
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
        best = min(best, (wall, load))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--size", default="100MB", help="JSON size of each rank trace")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="dask workers (and pool size)")
    parser.add_argument("--memory-limit", default="4GB", help="per dask worker")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/traceinspect-bench"))
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    name = f"{args.source.name.split('.')[0]}.{args.size}.json"
    trace = ensure_trace(args.source, parse_size(args.size), args.workdir / name)
    print(f"cores: {os.cpu_count()}, load average now {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="traceinspect-ranks-") as tmp:
        folder = Path(tmp) / "ranks"
        folder.mkdir()
        for rank in range(args.ranks):
            (folder / f"rank-{rank}.json").symlink_to(trace)
        analyze = [sys.executable, "-m", "traceinspect", "analyze", str(folder), "--json"]
        reports = {}
        rows = []
        address, processes = start_cluster(Path(tmp), args.workers, args.memory_limit)
        try:
            for label, extra in (
                (f"process pool ({args.workers})", []),
                (f"dask scheduler + {args.workers} workers", ["--cluster", address]),
                ("--cluster local", ["--cluster", "local"]),
            ):
                out = Path(tmp) / f"{len(rows)}.json"
                wall, load = timed([*analyze, str(out), "--force", *extra], args.repeat)
                reports[label] = json.loads(out.read_text())
                rows.append((label, wall, load))
                print(f"  {label:<32} {wall:7.2f} s  load {load:.1f}", flush=True)
        finally:
            stop_cluster(processes)
    first = next(iter(reports.values()))
    same = all(report == first for report in reports.values())
    print(f"\n{args.ranks} ranks × {args.size} ({trace.name})")
    print(f"{'run':<34} {'wall s':>7} {'load':>5}")
    for label, wall, load in rows:
        print(f"{label:<34} {wall:7.2f} {load:5.1f}")
    print(f"reports identical: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
