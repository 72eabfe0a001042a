"""How the chains probe's replays scale with the chains beside each other, against the model.

``sample_traces/validation/chains_probe_workloads/`` runs K dependent kernel chains side by
side, one per side stream: GEMM + tanh recurrences (K = 1, 2, 4, 8), cuDNN LSTMs (1, 2, 4)
and BiLSTMs (1, 2). Per family and K this prints the measured graphed p50 (unprofiled, the
spread of its timing rounds), its ratio to the family's K = 1, the prediction from the eager
trace alone (``analyze``'s) and its error; then, from the profiled replays, the median pace
of each chain's recurrent GEMMs (start to start, µs per step) against the eager trace's::

    python bench/chains_probe.py [SET]     # SET: h100_chains_probe (default), or another
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validation_table import VALIDATION_DIR, evaluate, prepare, set_workloads  # noqa: E402

from traceinspect.calibration import calibration_for  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

NAME = re.compile(r"(?P<family>.+)_chains_(?P<k>\d+)streams?_b\d+$")
#: Names of the recurrent (per-step) GEMM kernels: cuBLAS/cuDNN small GEMMs.
STEP_GEMM = re.compile(r"gemm|nvjet|gemv", re.IGNORECASE)


def step_pace_us(gpu: Any) -> float:
    """Median start-to-start gap of consecutive recurrent GEMMs on one stream of a trace's
    GPU activities, over the streams that ran more than 20 of them (µs): the chains' pace
    per step."""
    gemm = gpu[gpu["name"].str.contains(STEP_GEMM)]
    gaps: list[np.ndarray] = []
    for _, rows in gemm.groupby("stream"):
        if len(rows) <= 20:
            continue
        start = np.sort(rows["start_ns"].to_numpy())
        gap = np.diff(start)
        gaps.append(gap[gap < 50_000])  # within a step's occurrence, not across replays
    pooled = np.concatenate(gaps) if gaps else np.array([])
    return float(np.median(pooled)) / 1000 if pooled.size else float("nan")


def main() -> int:
    recording = sys.argv[1] if len(sys.argv) > 1 else "h100_chains_probe"
    if not (VALIDATION_DIR / recording).is_dir():
        print(f"{VALIDATION_DIR / recording}: not recorded", file=sys.stderr)
        return 1
    rows = []
    for w in set_workloads([recording]):
        m = NAME.match(w.name.split("/", 1)[1])
        if m is None:
            continue
        prepared = prepare(replace(w, host_costs=None))  # from the trace alone
        row = evaluate(prepared, calibration_for(prepared.timeline))
        graphed = w.trace.with_name(w.trace.name.replace(".eager.", ".graphed."))
        rows.append(
            (
                m["family"],
                int(m["k"]),
                w,
                row,
                step_pace_us(prepared.timeline.gpu),
                step_pace_us(load_trace(graphed).gpu) if graphed.exists() else float("nan"),
            )
        )
    rows.sort(key=lambda r: (r[0], r[1]))
    print(
        "| family | K | graphed µs (spread) | × K=1 | predicted µs | error "
        "| eager µs | step pace eager / replay µs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    base: dict[str, float] = {}
    for family, k, w, row, eager_pace, replay_pace in rows:
        base.setdefault(family, w.graphed_us)
        print(
            f"| {family} | {k} | {w.graphed_us:,.1f} (±{w.graphed_spread:.0%}) "
            f"| {w.graphed_us / base[family]:.2f} | {row.predicted_us:,.1f} "
            f"| {row.error_frac:+.1%} | {w.eager_us:,.1f} | {eager_pace:.2f} / {replay_pace:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
