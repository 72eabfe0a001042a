"""What a newly recorded hold-out set pins in ``tests/test_holdout_probe.py``, printed from its
traces: per workload the measured graphed p50, the prediction with the recording's measured
copy cost and from the trace alone (``EXPECTED``); per recording and mode the count within
±10 %, the median and worst |error| (the blind-set summary), the rows measured outside their
range and the savings more than 15 points off; and each step's verdict beside the saving
replay measurably brought (the verdict sweep), with any region whose verdict contradicts its
predicted saving.

    python bench/holdout_pins.py holdout43 holdout43_rerun

The numbers are the current model's: run it before any change the set is meant to judge, and
paste what it prints where the set's predecessors are pinned.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validation_table import (  # noqa: E402 - bench/ on the path first
    VALIDATION_DIR,
    ValidationRow,
    Workload,
    built_in_row,
    validation_workloads,
)

from traceinspect.analysis.verdict import (  # noqa: E402
    COMPUTE_BOUND_MAX_SAVING,
    LAUNCH_BOUND_MIN_SAVING,
)

#: Rows by workload name, predicted with the recording's probes (True) or from the trace
#: alone (False).
Rows = dict[bool, dict[str, ValidationRow]]


def _rows(workloads: list[Workload]) -> Rows:
    return {
        probe: {
            w.name: built_in_row(w if probe else replace(w, host_costs=None)) for w in workloads
        }
        for probe in (True, False)
    }


def _signed(frac: float) -> str:
    return f"{frac * 100:+.1f}".replace("-", "\N{MINUS SIGN}")


def expected_entries(recording: str, rows: Rows) -> list[str]:
    probed, alone = rows[True], rows[False]
    lines = [f'    "{recording}": {{']
    for name in sorted(probed):
        p, a = probed[name], alone[name]
        lines.append(
            f'        "{name}": ({p.graphed_measured_us:.1f}, {p.predicted_us:.1f}, '
            f"{a.predicted_us:.1f}),  # {_signed(p.error_frac)} / {_signed(a.error_frac)} %"
        )
    lines.append("    },")
    return lines


def summary_lines(recording: str, both: Rows) -> list[str]:
    lines = []
    for probe in (True, False):
        rows = both[probe]
        errors = [abs(r.error_frac) for r in rows.values()]
        within = sum(e <= 0.10 for e in errors)
        lines.append(
            f'        ("{recording}", {probe}, {within}, {statistics.median(errors):.4f}, '
            f"{max(errors):.4f}),"
        )
        outside = sorted(n for n, r in rows.items() if not r.graphed_inside)
        savings = sorted(
            f"{n} {r.saving_error_points:+.1f}"
            for n, r in rows.items()
            if abs(r.saving_error_points) > 15
        )
        mode = "with the probes" if probe else "from the trace alone"
        lines.append(f"        # {mode}: outside the range {outside or 'none'}")
        lines.append(f"        # {mode}: savings beyond 15 points {savings or 'none'}")
    return lines


def table_row(recording: str, alone: dict[str, ValidationRow]) -> str:
    """The set's row of docs/validation.md's hold-out table, from the trace-alone rows (a new
    set: *at freeze* is the current model)."""
    rows = list(alone.values())
    n = len(rows)
    errors = [r.error_frac for r in rows]
    within = f"{sum(abs(e) <= 0.10 for e in errors)}/{n}"
    median = f"{statistics.median(abs(e) for e in errors) * 100:.1f} %"
    signed = _signed(statistics.median(errors))
    worst = f"{max(abs(e) for e in errors) * 100:.1f} %"
    inside = f"{sum(r.graphed_inside for r in rows)}/{n}"
    savings = f"{sum(abs(r.saving_error_points) <= 15 for r in rows)}/{n}"
    eager = f"{statistics.median(abs(r.eager_error_frac) for r in rows) * 100:.0f} %"
    cells = [f"`{recording}`", str(n), within, median, within, median, f"{signed} %", worst]
    return "| " + " | ".join([*cells, inside, savings, eager]) + " |"


def verdict_lines(workloads: list[Workload]) -> list[str]:
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace

    lines = []
    counts: dict[str, int] = {}
    for w in workloads:
        analysis = diagnose(load_trace(w.trace))
        step = analysis.region(w.region)
        counts[step.verdict] = counts.get(step.verdict, 0) + 1
        # the verdict sweep's rule (tests/conftest.py): what replay measurably saved
        agrees = (
            step.verdict == "launch-bound"
            if w.saving >= 0.20
            else step.verdict == "compute-bound"
            if w.saving < 0.10
            else True
        )
        predicted = step.estimate.saving_frac if step.estimate is not None else float("nan")
        mark = "" if agrees else "   <- disagrees with replay"
        lines.append(
            f"    # {w.name}: {step.verdict}, replay saved {w.saving:.3f}, "
            f"predicted {predicted:.2f}{mark}"
        )
        for r in analysis.region_results:
            frac = r.estimate.saving_frac if r.estimate is not None else None
            if frac is None:
                continue
            if (r.verdict == "launch-bound" and frac < LAUNCH_BOUND_MIN_SAVING) or (
                r.verdict == "compute-bound" and frac > COMPUTE_BOUND_MAX_SAVING
            ):
                lines.append(
                    f"    # CONTRADICTION {w.name} / {r.region.name}: {r.verdict} at {frac:.2f}"
                )
    lines.append(f"    # verdicts: {dict(sorted(counts.items()))}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recordings", nargs="+", help="folders under sample_traces/validation/")
    args = parser.parse_args(argv)
    expected, summaries, verdicts, table = [], [], [], []
    for recording in args.recordings:
        folder = VALIDATION_DIR / recording
        if not folder.is_dir():
            print(f"holdout_pins: no recording {folder}", file=sys.stderr)
            return 2
        workloads = validation_workloads(folder)
        rows = _rows(workloads)
        expected += expected_entries(recording, rows)
        summaries += summary_lines(recording, rows)
        table.append(table_row(recording, rows[False]))
        verdicts += [f"    # {recording}", *verdict_lines(workloads)]
    print("# EXPECTED: (measured graphed p50 µs, predicted µs with the probes, from the trace")
    print("# alone)")
    print("\n".join(expected))
    print("\n# the blind-set summary: (recording, probe, within ±10 %, median |error|, worst)")
    print("\n".join(summaries))
    print("\n# docs/validation.md's hold-out table, from the trace alone")
    print("\n".join(table))
    print("\n# step verdicts")
    print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
