"""Fit the profiler's cost per recorded Python call (``with_stack=True``) on the H200 scripts.

Each script under ``sample_traces/validation/unannotated/`` was recorded whole twice by
``traceinspect profile`` — ``trace.json.gz`` without Python stacks and
``trace.stacks.json.gz`` with them (``stack_cost.py trace``) — and its step was timed
unprofiled, eager and graphed, by the ``--mark`` run (``mark.results.json``). The step is
the detected one (``step (detected)``); its eager time is simulated from the stacks trace
(:mod:`traceinspect.analysis.estimate.eager`) for each cost on a grid, with every other
constant as built in, and compared with the measured eager p50:

* the fit: the cost with the least mean |log(simulated / measured)| (the objective of
  ``bench/validation_table.py --fit``), and each script's error out of fold (fitted on the
  other five);
* two cross-checks: the cost that makes the stacks trace's simulation agree with the trace
  without stacks (what separates the two recordings is the Python tracer), and the traced
  host time per step the stacks add, per recorded Python call.

    python bench/python_frame_cost.py              # table and fit
    python bench/python_frame_cost.py --json       # the numbers as JSON
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from traceinspect.analysis.arrays import index_timeline  # noqa: E402
from traceinspect.analysis.estimate.eager import EagerSimulation  # noqa: E402
from traceinspect.analysis.regions import find_regions  # noqa: E402
from traceinspect.calibration import Calibration, calibration_for  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

UNANNOTATED = ROOT / "sample_traces" / "validation" / "unannotated"
STEP = "step (detected)"
#: Costs searched, ns per recorded Python call.
PYTHON_NS_GRID = tuple(range(0, 3_001, 50))


@dataclass
class Recording:
    """One trace of a script: its detected step's occurrences, ready to simulate."""

    sims: list[EagerSimulation]
    calibration: Calibration
    wall_ns: float  # median traced wall time of the step
    python_calls: float  # median recorded Python calls per step

    @classmethod
    def load(cls, path: Path) -> Recording:
        timeline = load_trace(path)
        arrays = index_timeline(timeline)
        step = next(r for r in find_regions(timeline, arrays) if r.name == STEP)
        sims = [
            EagerSimulation.of(
                timeline, rows, start_ns=int(start), end_ns=int(end), columns=arrays.columns
            )
            for rows, start, end in zip(step.rows, step.start_ns, step.end_ns, strict=True)
            if len(rows)
        ]
        return cls(
            sims=sims,
            calibration=calibration_for(timeline),
            wall_ns=float(np.median(step.wall_ns)),
            python_calls=float(np.median([len(s.python_starts) for s in sims])),
        )

    def eager_ns(self, python_ns: float | None = None) -> float:
        """Median simulated eager time, with ``python_ns`` per Python call (default: the
        built-in cost)."""
        cost = self.calibration.profiler_cost
        if python_ns is not None:
            cost = replace(cost, python_ns=float(python_ns))
        return float(np.median([s.run(cost, self.calibration.sync_ns).eager_ns for s in self.sims]))


def measured_eager_ns(script: Path) -> int:
    """The ``--mark`` run's unprofiled eager step p50 (host, synchronized), read as
    ``bench/validation_table.py`` reads it (the least disturbed round of recordings that
    traced between rounds)."""
    from validation_table import _unprofiled_p50

    data = json.loads((script / "mark.results.json").read_text())
    (row,) = [r for r in data["rows"] if r["mode"] == "eager" and r["status"] == "ok"]
    return int(_unprofiled_p50(row, data))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args()
    scripts = sorted(p.parent for p in UNANNOTATED.glob("*/trace.stacks.json.gz"))
    names = [s.name for s in scripts]
    measured = np.array([measured_eager_ns(s) for s in scripts], np.float64)
    stacks = [Recording.load(s / "trace.stacks.json.gz") for s in scripts]
    plain = [Recording.load(s / "trace.json.gz") for s in scripts]
    grid = np.array(PYTHON_NS_GRID, np.float64)
    # log(simulated / measured) and log(simulated with stacks / simulated without).
    simulated = np.array([[r.eager_ns(ns) for r in stacks] for ns in grid])
    plain_ns = np.array([r.eager_ns() for r in plain])
    to_measured = np.log(simulated / measured)
    to_plain = np.log(simulated / plain_ns)
    best = int(np.abs(to_measured).mean(axis=1).argmin())
    agree = int(np.abs(to_plain).mean(axis=1).argmin())
    out_of_fold = []
    for i in range(len(scripts)):
        others = [j for j in range(len(scripts)) if j != i]
        fold = int(np.abs(to_measured[:, others]).mean(axis=1).argmin())
        out_of_fold.append((int(grid[fold]), float(np.expm1(to_measured[fold, i]))))
    per_call = [
        (s.wall_ns - p.wall_ns) / s.python_calls if s.python_calls else None
        for s, p in zip(stacks, plain, strict=True)
    ]
    builtin = np.array([r.eager_ns() for r in stacks])
    result: dict[str, Any] = {
        "fitted_python_ns": int(grid[best]),
        "fitted_mean_abs_log_error": round(float(np.abs(to_measured[best]).mean()), 4),
        "agreeing_with_plain_python_ns": int(grid[agree]),
        "median_traced_ns_per_python_call": round(
            float(np.median([c for c in per_call if c is not None])), 1
        ),
        "scripts": {
            name: {
                "python_calls_per_step": stacks[i].python_calls,
                "eager_measured_us": round(measured[i] / 1000, 1),
                "eager_builtin_us": round(builtin[i] / 1000, 1),
                "error_builtin": round(float(builtin[i] / measured[i] - 1), 4),
                "eager_fitted_us": round(simulated[best, i] / 1000, 1),
                "error_fitted": round(float(np.expm1(to_measured[best, i])), 4),
                "out_of_fold_python_ns": out_of_fold[i][0],
                "error_out_of_fold": round(out_of_fold[i][1], 4),
                "eager_without_stacks_us": round(plain_ns[i] / 1000, 1),
                "error_without_stacks": round(float(plain_ns[i] / measured[i] - 1), 4),
                "traced_ns_per_python_call": None
                if per_call[i] is None
                else round(float(per_call[i]), 1),
            }
            for i, name in enumerate(names)
        },
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(
        "| script | Python calls / step | eager measured µs | simulated, built-in cost | "
        f"simulated, fitted {result['fitted_python_ns']} ns | out of fold | "
        "without stacks | traced ns per call |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in result["scripts"].items():
        per = r["traced_ns_per_python_call"]
        print(
            f"| `{name}` | {r['python_calls_per_step']:,.0f} | {r['eager_measured_us']:,.1f} | "
            f"{r['eager_builtin_us']:,.1f} ({r['error_builtin']:+.1%}) | "
            f"{r['eager_fitted_us']:,.1f} ({r['error_fitted']:+.1%}) | "
            f"{r['error_out_of_fold']:+.1%} ({r['out_of_fold_python_ns']} ns) | "
            f"{r['eager_without_stacks_us']:,.1f} ({r['error_without_stacks']:+.1%}) | "
            f"{'-' if per is None else f'{per:,.0f}'} |"
        )
    print()
    print(
        f"fitted: {result['fitted_python_ns']} ns per Python call (mean |log error| "
        f"{result['fitted_mean_abs_log_error']:.3f}); the stacks trace agrees best with the "
        f"one without stacks at {result['agreeing_with_plain_python_ns']} ns; traced host "
        f"time added per call: median {result['median_traced_ns_per_python_call']:,.0f} ns"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
