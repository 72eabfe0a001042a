"""Check the graph-replay prediction against the unprofiled latencies measured on the H200.

For every workload in ``sample_traces/latencies.json``: load ``<w>.eager.json.gz``, take the
region ``step`` (record_function; 5 occurrences), predict its graphed time with the built-in
calibration, and compare with the measured unprofiled graphed p50 (``step()`` +
``torch.cuda.synchronize()`` on the host). Also the eager time the estimator infers from the
profiled trace against the measured unprofiled eager p50.

    .venv/bin/python bench/validation_table.py [--samples DIR] [--json]

prints the markdown table for the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from traceinspect.analysis.arrays import index_timeline  # noqa: E402
from traceinspect.analysis.estimate import RegionEstimate, estimate_region  # noqa: E402
from traceinspect.analysis.regions import find_regions  # noqa: E402
from traceinspect.calibration import calibration_for  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

STEP_REGION = "step"


@dataclass(frozen=True)
class ValidationRow:
    workload: str
    eager_measured_us: float
    graphed_measured_us: float
    predicted_us: float
    low_us: float
    high_us: float
    error_frac: float
    eager_estimated_us: float
    eager_error_frac: float
    graphs: int
    nodes: int
    dependencies: int


def predict_step(trace: Path) -> RegionEstimate:
    """The estimator's prediction for the ``step`` region of ``trace`` (built-in profile)."""
    timeline = load_trace(trace)
    regions = [
        r
        for r in find_regions(timeline, index_timeline(timeline))
        if r.name == STEP_REGION and r.source == "record_function"
    ]
    if not regions:
        raise SystemExit(f"{trace}: no record_function region named {STEP_REGION!r}")
    region = regions[0]
    estimate = estimate_region(
        timeline, region.rows, [int(w) for w in region.wall_ns], calibration_for(timeline)
    )
    if estimate is None:
        raise SystemExit(f"{trace}: the step region launched no GPU work")
    return estimate


def validate(samples: Path) -> list[ValidationRow]:
    latencies = json.loads((samples / "latencies.json").read_text())
    rows = []
    for name, entry in latencies["workloads"].items():
        eager, graphed = entry.get("eager"), entry.get("graphed")
        if not eager or not graphed:
            continue
        est = predict_step(samples / f"{name}.eager.json.gz")
        measured = float(graphed["wall_p50_us"])
        eager_measured = float(eager["wall_p50_us"])
        predicted = est.graphed_ns / 1000
        eager_est = est.eager_ns / 1000
        rows.append(
            ValidationRow(
                workload=name,
                eager_measured_us=eager_measured,
                graphed_measured_us=measured,
                predicted_us=round(predicted, 1),
                low_us=round(est.low_ns / 1000, 1),
                high_us=round(est.high_ns / 1000, 1),
                error_frac=round(predicted / measured - 1, 4),
                eager_estimated_us=round(eager_est, 1),
                eager_error_frac=round(eager_est / eager_measured - 1, 4),
                graphs=est.graphs,
                nodes=est.nodes,
                dependencies=est.dependencies,
            )
        )
    return rows


def markdown(rows: list[ValidationRow]) -> str:
    lines = [
        "| workload | eager measured µs | graphed measured µs | predicted µs (range) | error "
        "| eager from trace µs (error) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    lines.extend(
        f"| `{r.workload}` | {r.eager_measured_us:,.1f} | {r.graphed_measured_us:,.1f} | "
        f"{r.predicted_us:,.1f} ({r.low_us:,.0f}–{r.high_us:,.0f}) | "
        f"{r.error_frac:+.1%} | {r.eager_estimated_us:,.0f} ({r.eager_error_frac:+.0%}) |"
        for r in rows
    )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=Path, default=ROOT / "sample_traces")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead")
    args = ap.parse_args()
    rows = validate(args.samples)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
