"""Speed of step detection on a trace with millions of kernels.

    python bench/step_detection.py                       # decode_step, ~2 M kernels
    python bench/step_detection.py --trace T.json.gz --copies 500

Reads one real trace, drops its annotations (the detector must find the steps by itself),
and tiles its timeline ``--copies`` times end to end in memory (every table shifted by the
trace's span, ``launch_row`` by the host table's length), so the result is a long run of the
same loop, as a long unannotated profile would be. Then times, in this process:
``index_timeline`` (shared with every analysis), ``detect_steps`` alone, and
``find_regions`` (detection plus building the regions' rows), and prints what was found.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from traceinspect.analysis.arrays import index_timeline  # noqa: E402
from traceinspect.analysis.regions import find_regions  # noqa: E402
from traceinspect.analysis.steps import detect_steps  # noqa: E402
from traceinspect.model import Timeline, empty_table  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

DEFAULT_TRACE = HERE.parent / "sample_traces" / "decode_step.eager.json.gz"


def tiled(timeline: Timeline, copies: int) -> Timeline:
    """``timeline`` without annotations, repeated ``copies`` times back to back."""
    tables = {k: v for k, v in timeline.tables().items() if k != "annotations"}
    starts = [int(t["start_ns"].min()) for t in tables.values() if len(t)]
    ends = [int(t["end_ns"].max()) for t in tables.values() if len(t)]
    span = max(ends) - min(starts) + 1_000_000  # 1 ms between copies
    n_host = len(timeline.host)
    out = {}
    for name, table in tables.items():
        shift = np.repeat(np.arange(copies, dtype=np.int64) * span, len(table))
        big = pd.concat([table] * copies, ignore_index=True)
        big["start_ns"] = big["start_ns"].to_numpy(np.int64) + shift
        big["end_ns"] = big["end_ns"].to_numpy(np.int64) + shift
        if name == "gpu":
            row = big["launch_row"].to_numpy(np.int64)
            offset = np.repeat(np.arange(copies, dtype=np.int64) * n_host, len(table))
            big["launch_row"] = np.where(row >= 0, row + offset, -1)
        out[name] = big
    return Timeline(meta=timeline.meta, annotations=empty_table("annotations"), **out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--copies", type=int, default=2400)
    args = ap.parse_args(argv)
    timeline = tiled(load_trace(args.trace), args.copies)
    kernels = int((timeline.gpu["kind"] == "kernel").sum())
    print(f"{args.trace.name} x {args.copies}: {kernels:,} kernels, {len(timeline.host):,} calls")
    clocks = [(time.perf_counter(), time.process_time())]
    arrays = index_timeline(timeline)
    clocks.append((time.perf_counter(), time.process_time()))
    found = detect_steps(timeline, arrays)
    clocks.append((time.perf_counter(), time.process_time()))
    regions = find_regions(timeline, arrays)
    clocks.append((time.perf_counter(), time.process_time()))
    stages = ("index_timeline", "detect_steps", "find_regions")
    for name, (w0, c0), (w1, c1) in zip(stages, clocks, clocks[1:], strict=False):
        print(f"{name}: {w1 - w0:.2f} s wall, {c1 - c0:.2f} s CPU")
    if found is None:
        print("no steps found")
        return 1
    print(found.describe())
    print("regions:", [(r.name, r.occurrences) for r in regions])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
