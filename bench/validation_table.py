"""Check the estimator against the unprofiled latencies measured on the H200, fit its
constants and cross-validate them.

Workloads come from three places:

* ``sample_traces/latencies.json`` and ``sample_traces/holdout/latencies.json``
  (``record.py``): the region ``step`` of ``<w>.eager.json.gz`` (record_shapes on, each
  step synchronized), measured eager and graphed ``wall_p50_us``;
* ``sample_traces/validation/<w>/results.json`` (``traceinspect profile --repeats N``):
  per callable and bucket the eager trace (region = the callable's name, record_shapes
  off), the pooled eager and graphed ``host_p50_ns`` and each round's p50 (the spread);
  where the recording measured them (``host_costs``), the machine's copy host costs, which
  the prediction then uses as ``traceinspect profile`` does (``--no-host-costs``: not).

For each workload: the predicted graphed time (range) against the measured graphed p50;
the eager time simulated from the trace (range) against the measured eager p50; the saving
without ``--eager-us`` (range) against the measured saving.

    python bench/validation_table.py                 # tables with the built-in constants
    python bench/validation_table.py --fit           # fitted constants on all workloads
    python bench/validation_table.py --cv            # two-fold cross-validation tables
    python bench/validation_table.py --json          # rows as JSON
    python bench/validation_table.py --samples DIR   # one latencies.json folder only
    python bench/validation_table.py --sets holdout5,holdout5_rerun   # named recordings only
    python bench/validation_table.py --sets holdout5 --calibration FILE  # another calibration
    python bench/validation_table.py --sets holdout17 --no-host-costs   # as analyze predicts
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from traceinspect.analysis.arrays import index_timeline  # noqa: E402
from traceinspect.analysis.estimate import (  # noqa: E402
    RegionEstimate,
    TimelineColumns,
    estimate_region,
)
from traceinspect.analysis.estimate.eager import (  # noqa: E402
    EagerSimulation,
    profiler_cost_for,
)
from traceinspect.analysis.regions import Region, find_regions  # noqa: E402
from traceinspect.calibration import (  # noqa: E402
    Calibration,
    ProfilerCost,
    calibration_for,
    load_calibration,
)
from traceinspect.collect.host_probe import valid_host_costs  # noqa: E402
from traceinspect.collect.replay import TIMING_ORDER  # noqa: E402
from traceinspect.model import Timeline  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

STEP_REGION = "step"
SAMPLE_SETS = (ROOT / "sample_traces", ROOT / "sample_traces" / "holdout")
VALIDATION_DIR = ROOT / "sample_traces" / "validation"

#: Grids searched by the fit (ns; floor as a share).
OP_NS_GRID = (0.0, 4_000.0, 8_000.0, 12_000.0, 16_000.0, 24_000.0, 30_000.0, 40_000.0)
OP_SHAPES_NS_GRID = (0.0, 2_000.0, 4_000.0)
CALL_NS_GRID = (0.0, 1_000.0, 2_000.0, 4_000.0)
FLOOR_GRID = (0.2, 0.3, 0.35, 0.4, 0.45)
NODE_EXTRA_NS_GRID = tuple(range(0, 1_501, 50))


@dataclass(frozen=True)
class Workload:
    name: str
    group: str  # samples | holdout | validation
    trace: Path
    region: str
    eager_us: float
    graphed_us: float
    #: Each timing round's p50 (one value when the recording had one round).
    eager_rounds_us: tuple[float, ...] = ()
    graphed_rounds_us: tuple[float, ...] = ()
    #: The copies into the static inputs each measured replay made (bytes), where the
    #: recording kept them; ``None``: one small copy is assumed.
    input_copy_bytes: tuple[int, ...] | None = None
    #: ``(first, warm)`` copy host ns the recording's timing process measured
    #: (``results.json``'s ``host_costs``), applied to the calibration as ``traceinspect
    #: profile`` does; ``None`` for recordings without them (or with ``--no-host-costs``).
    host_costs: tuple[int, int] | None = None

    @property
    def saving(self) -> float:
        return 1.0 - self.graphed_us / self.eager_us

    @property
    def eager_spread(self) -> float:
        """Round-to-round spread of the eager p50 (max − min) / pooled p50; 0 for one."""
        rounds = self.eager_rounds_us
        return (max(rounds) - min(rounds)) / self.eager_us if len(rounds) > 1 else 0.0

    @property
    def graphed_spread(self) -> float:
        rounds = self.graphed_rounds_us
        return (max(rounds) - min(rounds)) / self.graphed_us if len(rounds) > 1 else 0.0


@dataclass
class Prepared:
    """A workload's trace loaded once, with its region and eager simulations."""

    workload: Workload
    timeline: Timeline
    region: Region
    columns: TimelineColumns
    sims: list[EagerSimulation] = field(default_factory=list)

    @cached_property
    def walls(self) -> list[int]:
        return [int(w) for w in self.region.wall_ns]

    def estimate(self, calibration: Calibration) -> RegionEstimate:
        if self.workload.host_costs is not None:
            calibration = calibration.with_host_costs(*self.workload.host_costs)
        est = estimate_region(
            self.timeline,
            self.region.rows,
            self.walls,
            calibration,
            input_copy_bytes=self.workload.input_copy_bytes,
            columns=self.columns,
            occurrence_start_ns=[int(s) for s in self.region.start_ns],
        )
        if est is None:
            raise SystemExit(f"{self.workload.trace}: region launched no GPU work")
        return est

    def eager_ns(self, cost: ProfilerCost | None, sync_ns: int) -> float:
        """Median simulated eager time with the profiler's ``cost`` removed."""
        return float(np.median([sim.run(cost, sync_ns).eager_ns for sim in self.sims]))


@dataclass(frozen=True)
class ValidationRow:
    workload: str
    group: str
    eager_measured_us: float
    graphed_measured_us: float
    predicted_us: float
    low_us: float
    high_us: float
    error_frac: float
    eager_estimated_us: float
    eager_low_us: float
    eager_high_us: float
    eager_error_frac: float
    saving_measured: float
    saving_predicted: float
    saving_low: float
    saving_high: float
    saving_error_points: float
    eager_spread: float
    graphed_spread: float
    graphs: int
    nodes: int
    dependencies: int

    @property
    def graphed_inside(self) -> bool:
        return self.low_us <= self.graphed_measured_us <= self.high_us

    @property
    def saving_inside(self) -> bool:
        return self.saving_low <= self.saving_measured <= self.saving_high


# ---------------------------------------------------------------- workloads


def sample_workloads(folder: Path, group: str) -> list[Workload]:
    latencies = json.loads((folder / "latencies.json").read_text())
    out = []
    for name, entry in latencies["workloads"].items():
        eager, graphed = entry.get("eager"), entry.get("graphed")
        if not eager or not graphed:
            continue
        out.append(
            Workload(
                name=name,
                group=group,
                trace=folder / f"{name}.eager.json.gz",
                region=STEP_REGION,
                eager_us=float(eager["wall_p50_us"]),
                graphed_us=float(graphed["wall_p50_us"]),
                eager_rounds_us=(float(eager["wall_p50_us"]),),
                graphed_rounds_us=(float(graphed["wall_p50_us"]),),
            )
        )
    return out


def _rows(data: Any) -> Iterator[dict[str, Any]]:
    """Every results row (a mapping with ``mode`` and ``host_p50_ns``) in a results.json."""
    if isinstance(data, dict):
        if "mode" in data and "host_p50_ns" in data and "callable" in data:
            yield data
            return
        for value in data.values():
            yield from _rows(value)
    elif isinstance(data, list):
        for value in data:
            yield from _rows(value)


def validation_workloads(folder: Path = VALIDATION_DIR) -> list[Workload]:
    """The ``traceinspect profile --repeats`` recordings under ``folder``: one workload per
    callable and bucket with an ok eager and graphed row and an eager trace."""
    out: list[Workload] = []
    for results in sorted(folder.glob("*/results.json")) + sorted(
        folder.glob("unannotated/*/mark.results.json")
    ):
        data = json.loads(results.read_text())
        rows = list(_rows(data))
        for (callable_name, bucket), pair in itertools.groupby(
            sorted(rows, key=lambda r: (str(r["callable"]), str(r["bucket"]))),
            key=lambda r: (str(r["callable"]), str(r["bucket"])),
        ):
            by_mode = {r["mode"]: r for r in pair}
            eager, graphed = by_mode.get("eager"), by_mode.get("graphed")
            if not eager or not graphed:
                continue
            if eager.get("status") != "ok" or graphed.get("status") != "ok":
                continue
            if not eager.get("host_p50_ns") or not graphed.get("host_p50_ns"):
                continue
            prefix = "mark." if results.name.startswith("mark.") else ""
            trace = _find(results.parent, f"{prefix}{eager.get('trace')}")
            if trace is None:
                continue
            label = results.parent.name
            if prefix:
                label = f"unannotated/{label}"
            if len({str(r["callable"]) for r in rows}) > 1:
                label += f"/{callable_name}"
            if len({str(r["bucket"]) for r in rows if str(r["callable"]) == callable_name}) > 1:
                label += f"@b{bucket}"
            out.append(
                Workload(
                    name=label,
                    group="validation",
                    trace=trace,
                    region=str(callable_name),
                    eager_us=_unprofiled_p50(eager, data) / 1000,
                    graphed_us=_unprofiled_p50(graphed, data) / 1000,
                    eager_rounds_us=tuple(
                        v / 1000 for v in eager.get("round_host_p50_ns") or [eager["host_p50_ns"]]
                    ),
                    graphed_rounds_us=tuple(
                        v / 1000
                        for v in graphed.get("round_host_p50_ns") or [graphed["host_p50_ns"]]
                    ),
                    input_copy_bytes=(
                        tuple(int(b) for b in graphed["input_copy_bytes"])
                        if isinstance(graphed.get("input_copy_bytes"), list)
                        else None
                    ),
                    host_costs=valid_host_costs(data.get("host_costs")),
                )
            )
    return out


def _unprofiled_p50(row: dict[str, Any], results: Any) -> float:
    """The row's unprofiled p50: pooled over its rounds when every round ran before the
    candidate's profiled traces (``options.timing_order``); else its least disturbed
    round's (the lowest round p50): those recordings traced the candidate after its first
    round, and a profiler session can slow the rounds after it by 20-40 %
    (``sample_traces/validation/clock_drift.json``) while a clean round moves by 1-2 %."""
    options = results.get("options", {}) if isinstance(results, dict) else {}
    rounds = row.get("round_host_p50_ns") or []
    if options.get("timing_order") == TIMING_ORDER or not rounds:
        return float(row["host_p50_ns"])
    return float(min(rounds))


def _find(folder: Path, name: Any) -> Path | None:
    if not isinstance(name, str) or not name or name.endswith("None"):
        return None
    direct = folder / name
    if direct.is_file():
        return direct
    found = sorted(folder.rglob(Path(name).name))
    return found[0] if found else None


def all_workloads(validation: Path = VALIDATION_DIR) -> list[Workload]:
    out = sample_workloads(SAMPLE_SETS[0], "samples") + sample_workloads(SAMPLE_SETS[1], "holdout")
    if validation.is_dir():
        out += validation_workloads(validation)
    return out


def fresh_sets(folder: Path = VALIDATION_DIR) -> list[str]:
    """The fresh-process H200 recordings under ``folder`` (the hold-outs, ``streams_fit`` and
    the probe re-recordings; not ``holdout``, ``holdout2`` or ``holdout3``, timed in the
    profiled process), by name."""
    stale = {"holdout", "holdout2", "holdout2_rerun", "holdout3"}
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_dir()
        and p.name.startswith(("holdout", "streams_fit", "probe_rerecord"))
        and not p.name.endswith("_workloads")
        and p.name not in stale
    )


def set_workloads(names: Sequence[str], folder: Path = VALIDATION_DIR) -> list[Workload]:
    """The workloads of the named recordings under ``folder``, grouped and named by set."""
    out: list[Workload] = []
    for name in names:
        if not (folder / name).is_dir():
            raise SystemExit(f"{folder / name}: no such recording")
        out += [
            replace(w, name=f"{name}/{w.name}", group=name)
            for w in validation_workloads(folder / name)
        ]
    return out


def prepare(workload: Workload) -> Prepared:
    timeline = load_trace(workload.trace)
    regions = [
        r for r in find_regions(timeline, index_timeline(timeline)) if r.name == workload.region
    ]
    if not regions:
        raise SystemExit(f"{workload.trace}: no region named {workload.region!r}")
    region = regions[0]
    columns = TimelineColumns(timeline)
    sims = [
        EagerSimulation.of(timeline, rows, start_ns=int(start), end_ns=int(end), columns=columns)
        for rows, start, end in zip(region.rows, region.start_ns, region.end_ns, strict=True)
        if len(rows)
    ]
    return Prepared(workload, timeline, region, columns, sims)


# ---------------------------------------------------------------- evaluation


def evaluate(prepared: Prepared, calibration: Calibration) -> ValidationRow:
    w = prepared.workload
    est = prepared.estimate(calibration)
    predicted = est.graphed_ns / 1000
    eager_est = est.eager_ns / 1000
    saving_predicted = 1.0 - predicted / eager_est
    return ValidationRow(
        workload=w.name,
        group=w.group,
        eager_measured_us=round(w.eager_us, 1),
        graphed_measured_us=round(w.graphed_us, 1),
        predicted_us=round(predicted, 1),
        low_us=round(est.low_ns / 1000, 1),
        high_us=round(est.high_ns / 1000, 1),
        error_frac=round(predicted / w.graphed_us - 1, 4),
        eager_estimated_us=round(eager_est, 1),
        eager_low_us=round(est.eager_low_ns / 1000, 1),
        eager_high_us=round(est.eager_high_ns / 1000, 1),
        eager_error_frac=round(eager_est / w.eager_us - 1, 4),
        saving_measured=round(w.saving, 4),
        saving_predicted=round(saving_predicted, 4),
        saving_low=round(est.saving_low_frac, 4),
        saving_high=round(est.saving_high_frac, 4),
        saving_error_points=round((saving_predicted - w.saving) * 100, 1),
        eager_spread=round(w.eager_spread, 4),
        graphed_spread=round(w.graphed_spread, 4),
        graphs=est.graphs,
        nodes=est.nodes,
        dependencies=est.dependencies,
    )


def predict_step(trace: Path, region: str = STEP_REGION) -> RegionEstimate:
    """The estimator's prediction for ``region`` of ``trace`` (built-in profile)."""
    workload = Workload(trace.name, "", trace, region, 1.0, 1.0)
    prepared = prepare(workload)
    return prepared.estimate(calibration_for(prepared.timeline))


def built_in_row(workload: Workload) -> ValidationRow:
    """``workload`` predicted with the built-in calibration of its trace's device."""
    prepared = prepare(workload)
    return evaluate(prepared, calibration_for(prepared.timeline))


def validate(samples: Path) -> list[ValidationRow]:
    """Rows for one ``latencies.json`` folder with the built-in calibration."""
    return [built_in_row(w) for w in sample_workloads(samples, samples.name)]


def validate_folder(folder: Path) -> dict[str, ValidationRow]:
    """Rows, by workload name, for one folder of ``traceinspect profile`` recordings (a
    hold-out set) with the built-in calibration."""
    return {w.name: built_in_row(w) for w in validation_workloads(folder)}


# ---------------------------------------------------------------- fitting


@dataclass(frozen=True)
class Fit:
    cost: ProfilerCost
    graph_node_extra_ns: int
    eager_log_error: float  # mean |log(estimated / measured)| of the eager time
    graphed_median_error: float

    def apply(self, calibration: Calibration) -> Calibration:
        return replace(
            calibration, profiler_cost=self.cost, graph_node_extra_ns=self.graph_node_extra_ns
        )


def fit(prepared: Sequence[Prepared], bases: Sequence[Calibration]) -> Fit:
    """Constants that minimize the eager model's mean |log error| (profiler costs, grid
    search) and the graphed prediction's median |error| (per-node extra) on ``prepared``,
    each workload otherwise predicted with its own ``bases`` entry (its device's profile)."""
    # the per-Python-call cost is fitted elsewhere (bench/python_frame_cost.py): kept, as the
    # first profile has it
    python_ns = bases[0].profiler_cost.python_ns
    deflated = [
        (p, b)
        for p, b in zip(prepared, bases, strict=True)
        if profiler_cost_for(p.timeline, b) is not None
    ]
    measured = np.array([p.workload.eager_us * 1000 for p, _ in deflated])
    best: tuple[float, ProfilerCost] | None = None
    for op, shapes, call, floor in itertools.product(
        OP_NS_GRID, OP_SHAPES_NS_GRID, CALL_NS_GRID, FLOOR_GRID
    ):
        cost = ProfilerCost(
            op_ns=op,
            op_shapes_ns=shapes,
            call_ns=call,
            floor_frac=floor,
            python_ns=python_ns,
        )
        est = np.array([p.eager_ns(cost, b.sync_ns) for p, b in deflated])
        score = float(np.mean(np.abs(np.log(est / measured))))
        if best is None or score < best[0] - 1e-9:
            best = (score, cost)
    assert best is not None
    eager_score, cost = best
    graphed_best: tuple[float, int] | None = None
    for extra in NODE_EXTRA_NS_GRID:
        errors = [
            abs(
                p.estimate(replace(b, graph_node_extra_ns=extra)).graphed_ns
                / (p.workload.graphed_us * 1000)
                - 1
            )
            for p, b in zip(prepared, bases, strict=True)
        ]
        score = float(np.median(errors)) + float(np.mean(errors))
        if graphed_best is None or score < graphed_best[0] - 1e-9:
            graphed_best = (score, extra)
    assert graphed_best is not None
    return Fit(cost, graphed_best[1], eager_score, graphed_best[0])


def halves(workloads: Sequence[Workload]) -> tuple[list[int], list[int]]:
    """Two folds: workloads sorted by (group, name), alternating."""
    order = sorted(range(len(workloads)), key=lambda i: (workloads[i].group, workloads[i].name))
    return order[0::2], order[1::2]


def cross_validate(
    prepared: Sequence[Prepared], bases: Sequence[Calibration]
) -> list[ValidationRow]:
    """Each half predicted with constants fitted on the other."""
    a, b = halves([p.workload for p in prepared])
    rows: list[ValidationRow] = []
    for train, test in ((a, b), (b, a)):
        fitted = fit([prepared[i] for i in train], [bases[i] for i in train])
        print(
            f"fold fitted on {len(train)}: {fitted.cost}, node extra "
            f"{fitted.graph_node_extra_ns} ns",
            file=sys.stderr,
        )
        rows += [evaluate(prepared[i], fitted.apply(bases[i])) for i in test]
    order = {p.workload.name: i for i, p in enumerate(prepared)}
    return sorted(rows, key=lambda r: order[r.workload])


# ---------------------------------------------------------------- tables


def markdown(rows: Sequence[ValidationRow]) -> str:
    lines = [
        "| workload | graphed measured µs (spread) | predicted µs (range) | error "
        "| eager measured µs (spread) | eager from trace µs (range) | error "
        "| saving measured | saving predicted (range) | points |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines.extend(
        f"| `{r.workload}` | {r.graphed_measured_us:,.1f} ({_spread(r.graphed_spread)}) | "
        f"{r.predicted_us:,.1f} ({r.low_us:,.0f}–{r.high_us:,.0f}) | {r.error_frac:+.1%} | "
        f"{r.eager_measured_us:,.1f} ({_spread(r.eager_spread)}) | "
        f"{r.eager_estimated_us:,.0f} ({r.eager_low_us:,.0f}–{r.eager_high_us:,.0f}) | "
        f"{r.eager_error_frac:+.0%} | {r.saving_measured:.0%} | "
        f"{r.saving_predicted:.0%} ({r.saving_low:.0%}–{r.saving_high:.0%}) | "
        f"{r.saving_error_points:+.0f} |"
        for r in rows
    )
    return "\n".join(lines)


def _spread(value: float) -> str:
    return f"±{value / 2:.0%}" if value > 0 else "1 run"


def summary(rows: Sequence[ValidationRow]) -> str:
    errors = np.array([abs(r.error_frac) for r in rows])
    points = np.array([abs(r.saving_error_points) for r in rows])
    return (
        f"{len(rows)} workloads: graphed |error| median {np.median(errors):.1%}, "
        f"max {errors.max():.1%}, within ±10 % on {(errors <= 0.10).sum()}/{len(rows)}; "
        f"measured graphed inside [low, high] on {sum(r.graphed_inside for r in rows)}"
        f"/{len(rows)}; saving without --eager-us within ±15 points on "
        f"{(points <= 15).sum()}/{len(rows)} (median {np.median(points):.1f} points), "
        f"measured saving inside its range on {sum(r.saving_inside for r in rows)}/{len(rows)}; "
        f"eager |error| median {np.median([abs(r.eager_error_frac) for r in rows]):.0%}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=Path, help="one latencies.json folder only")
    ap.add_argument(
        "--validation", type=Path, default=VALIDATION_DIR, help="profile --repeats recordings"
    )
    ap.add_argument("--only", help="only this group: samples, holdout or validation")
    ap.add_argument(
        "--sets",
        help="comma-separated recordings under sample_traces/validation/ (e.g. "
        "holdout2_fresh,holdout4): only their workloads, named SET/WORKLOAD",
    )
    ap.add_argument(
        "--calibration",
        type=Path,
        help="a calibration file (traceinspect calibrate) instead of the built-in one",
    )
    ap.add_argument(
        "--no-host-costs",
        action="store_true",
        help="ignore the copy host costs a recording measured (predict as analyze does)",
    )
    ap.add_argument("--fit", action="store_true", help="fit the constants on every workload")
    ap.add_argument("--cv", action="store_true", help="two-fold cross-validation")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead")
    args = ap.parse_args()
    if args.samples is not None:
        workloads = sample_workloads(args.samples, args.samples.name)
    elif args.sets:
        workloads = set_workloads(args.sets.split(","), args.validation)
    else:
        workloads = all_workloads(args.validation)
    if args.only:
        workloads = [w for w in workloads if w.group == args.only]
    if args.no_host_costs:
        workloads = [replace(w, host_costs=None) for w in workloads]
    prepared = [prepare(w) for w in workloads]
    # each workload is predicted with its own device's profile, as analyze would: one
    # profile for all (the first trace's) mispredicts a mixed H200 and H100 selection
    given = load_calibration(args.calibration) if args.calibration is not None else None
    bases = [given or calibration_for(p.timeline) for p in prepared]
    if args.fit:
        fitted = fit(prepared, bases)
        print(f"fitted on {len(prepared)}: {fitted}", file=sys.stderr)
        bases = [fitted.apply(b) for b in bases]
    rows = (
        cross_validate(prepared, bases)
        if args.cv
        else [evaluate(p, b) for p, b in zip(prepared, bases, strict=True)]
    )
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
    else:
        print(markdown(rows))
        print()
        print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
