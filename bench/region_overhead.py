"""What one ``traceinspect.region`` costs: entering and leaving it, ns per pair.

    python bench/region_overhead.py [--pairs N]            # the modes below, one process each
    nsys profile -t nvtx --sample=none --cpuctxsw=none python bench/region_overhead.py --here

Modes, each measured in its own process (a process decides once whether a tool listens):

- ``baseline``: ``with contextlib.nullcontext():`` — what any context manager costs;
- ``off``: a region with no profiler and no NVTX tool (the common case);
- ``nvtx-env``: a region in a process whose environment names an NVTX injection
  (``NVTX_INJECTION64_PATH``). Without a real tool behind it (this machine), NVTX's calls are
  no-ops and this is traceinspect's and the ``nvtx`` package's own share;
- ``--here``: this process as it is (under ``nsys profile``: the real cost with Nsight
  Systems recording every range).

Prints one JSON object: mode -> median ns per enter/exit pair over 15 rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROUNDS = 15


def measure(mode: str, pairs: int) -> float:
    """Median ns per enter/exit pair in this process."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import traceinspect

    manager = contextlib.nullcontext() if mode == "baseline" else traceinspect.region("bench")
    with manager:  # resolves the one-time state (tool detection, nvtx import)
        pass
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter_ns()
        for _ in range(pairs):
            with manager:
                pass
        rounds.append((time.perf_counter_ns() - start) / pairs)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--here", action="store_true", help="measure this process only")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child or args.here:
        mode = args.child or "here"
        result: dict[str, object] = {mode: round(measure(mode, args.pairs), 1)}
        if args.here:
            from traceinspect.collect.regions import NVTX_TOOL_ENVIRONMENT, nvtx_tool_attached

            result["tool_attached"] = nvtx_tool_attached()
            result["tool_environment"] = [v for v in NVTX_TOOL_ENVIRONMENT if os.environ.get(v)]
        print(json.dumps(result))
        return
    tool_env = ("NSYS_PROFILING_SESSION_ID", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")
    clean = {k: v for k, v in os.environ.items() if k not in tool_env}
    results: dict[str, float] = {}
    for mode, extra in (
        ("baseline", {}),
        ("off", {}),
        ("nvtx-env", {"NVTX_INJECTION64_PATH": "/nonexistent/libinjection.so"}),
    ):
        done = subprocess.run(
            [sys.executable, __file__, "--child", mode, "--pairs", str(args.pairs)],
            env={**clean, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        results.update(json.loads(done.stdout))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
