"""How much of the eager-time error is the recording, not the model.

For every fresh-process H200 recording of a host-bound step (measured eager p50 at least
1.3x its traced GPU work), the share of its profiled host span the step kept unprofiled:
``kept = measured eager p50 / traced host span`` (the median occurrence). For workloads
recorded twice (``holdoutN`` and ``holdoutN_rerun``, ``probe_rerecord`` and its rerun), the
correlation of ``log(kept)`` between the two recordings says how much of it belongs to the
workload (what a model of the trace could learn) and how much to the process that ran it.

Then least-squares fits in log space, in-sample, of the measured eager p50 on what a
trace holds: the traced host span, the time outside the outermost operators and inside
them, the operators (outermost and nested), the CUDA calls and their time, the kernels. The
best of them bounds what any per-event profiler-cost model could reach on these steps.

Last, over every pair of recordings of one workload (any two sets, host-bound or not), how far
the measured eager p50 and the measured saving of one recording are from the other's: with
recordings equally noisy, ``|log ratio| / sqrt(2)`` is what one recording's eager time strays
from the workload's, the floor of any eager time read from one trace, and a measured saving
that differs by more than ``15 * sqrt(2)`` points between two recordings strays by more than
15 from the workload's::

    python bench/eager_noise.py --sets holdout4,holdout5,...   # the sets in the README
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import validation_table as vt  # noqa: E402

from traceinspect.analysis.estimate.eager import profiler_cost_for  # noqa: E402
from traceinspect.calibration import calibration_for  # noqa: E402

HOST_BOUND = 1.3  # measured eager p50 over traced GPU work


def features(prepared: vt.Prepared) -> dict[str, float]:
    """Per occurrence, what its trace holds on the launching threads; the median."""
    cols = prepared.columns
    ops = prepared.timeline.cpu_ops
    op_thread = (ops["pid"].to_numpy().astype(np.int64) << 32) ^ ops["tid"].to_numpy().astype(
        np.int64
    )
    op_start, op_end = ops["start_ns"].to_numpy(), ops["end_ns"].to_numpy()
    depth = ops["depth"].to_numpy()
    host_start, host_end = cols.host("start_ns"), cols.host("end_ns")
    rows = []
    for sim in prepared.sims:
        launched = sim.launched_at[sim.known]
        threads = np.unique(cols.host_thread[np.isin(host_start, launched)])
        mine = (op_start >= sim.t0) & (op_end <= sim.t1) & np.isin(op_thread, threads)
        d = depth[mine]
        top = d == d.min() if len(d) else d.astype(bool)
        inside = float((op_end[mine][top] - op_start[mine][top]).sum())
        calls = (host_start >= sim.t0) & (host_end <= sim.t1) & np.isin(cols.host_thread, threads)
        span = float(sim.t1 - sim.t0)
        rows.append(
            {
                "span": span,
                "outside": span - inside,
                "inside": inside,
                "top_ops": float(top.sum()),
                "nested_ops": float(len(d) - top.sum()),
                "calls": float(calls.sum()),
                "call_time": float((host_end[calls] - host_start[calls]).sum()),
                "kernels": float(len(sim.duration)),
                "gpu": float(sim.duration.sum()),
            }
        )
    return {k: float(np.median([r[k] for r in rows])) for k in rows[0]}


def log_fit(x: np.ndarray, y: np.ndarray, rounds: int = 50) -> np.ndarray:
    """Coefficients ``c`` minimizing the squares of ``log(x @ c / y)``: Gauss-Newton from
    the least squares of the relative error, halving steps that do not improve."""
    c = np.linalg.lstsq(x / y[:, None], np.ones(len(y)), rcond=None)[0]

    def cost(c: np.ndarray) -> float:
        p = x @ c
        return float(np.sum(np.log(p / y) ** 2)) if (p > 0).all() else np.inf

    best = cost(c)
    for _ in range(rounds):
        p = x @ c
        step = np.linalg.lstsq(x / p[:, None], -np.log(p / y), rcond=None)[0]
        t = 1.0
        while t > 1e-4 and cost(c + t * step) >= best:
            t /= 2
        if t <= 1e-4:
            break
        c = c + t * step
        best = cost(c)
    out: np.ndarray = c
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", required=True, help="comma-separated recordings")
    args = ap.parse_args()
    table: dict[str, dict[str, float]] = {}
    for w in vt.set_workloads(args.sets.split(",")):
        prepared = vt.prepare(w)
        f = features(prepared)
        f["eager"] = w.eager_us * 1000
        cal = calibration_for(prepared.timeline)
        f["model"] = prepared.eager_ns(profiler_cost_for(prepared.timeline, cal), cal.sync_ns)
        f["graphed"] = w.graphed_us * 1000
        f["predicted"] = (
            replace(prepared, workload=replace(w, host_costs=None)).estimate(cal).graphed_ns
        )
        table[w.name] = f
    bound = {k: f for k, f in table.items() if f["eager"] >= HOST_BOUND * f["gpu"]}
    print(f"{len(table)} recordings, {len(bound)} host-bound")
    kept = {k: f["eager"] / f["span"] for k, f in bound.items()}
    q = np.percentile(list(kept.values()), [5, 25, 50, 75, 95])
    print("kept share of the traced host span: " + ", ".join(f"{x:.2f}" for x in q))
    pairs = []
    for name, value in kept.items():
        recording, workload = name.split("/", 1)
        again = kept.get(f"{recording}_rerun/{workload}")
        if again is not None:
            pairs.append((np.log(value), np.log(again)))
    if len(pairs) > 2:
        a, b = np.array(pairs).T
        r = float(np.corrcoef(a, b)[0, 1])
        print(f"{len(pairs)} workloads recorded twice: log(kept) correlates at r = {r:.2f}")
    measured = np.array([f["eager"] for f in bound.values()])
    err = np.abs(np.log(np.array([f["model"] for f in bound.values()]) / measured))
    print(
        f"  {'the built-in eager simulation':58s} median |log error| {np.median(err):.3f}, "
        f"mean {np.mean(err):.3f}"
    )
    for keys in (
        ("span",),
        ("outside", "inside"),
        ("span", "call_time"),
        ("outside", "inside", "calls"),
        ("outside", "inside", "nested_ops"),
        ("outside", "inside", "call_time", "top_ops", "nested_ops", "calls"),
        ("top_ops", "nested_ops", "calls", "kernels"),
    ):
        x = np.array([[f[k] for k in keys] for f in bound.values()])
        coef = log_fit(x, measured)
        err = np.abs(np.log(np.maximum(x @ coef, 1.0) / measured))
        print(
            f"  {' + '.join(keys):58s} median |log error| {np.median(err):.3f}, "
            f"mean {np.mean(err):.3f}"
        )
    between_recordings(table)
    return 0


@dataclass(frozen=True)
class GraphedSpread:
    """The measured graphed p50s of the workloads recorded more than once: every pair's
    ``|a / b - 1|``, how many workloads and recordings, and how many of those recordings lie
    outside ±10 % of their workload's mean (what a predictor that knew the mean would miss)."""

    apart: list[float]
    workloads: int
    recordings: int
    mean_misses: int


def graphed_spread(by_workload: Mapping[str, Sequence[float]]) -> GraphedSpread:
    """:class:`GraphedSpread` of the graphed p50s by workload (one per recording)."""
    twice = [g for g in by_workload.values() if len(g) > 1]
    apart = [abs(a / b - 1) for g in twice for i, a in enumerate(g) for b in g[i + 1 :]]
    misses = sum(abs(x / statistics.mean(g) - 1) > 0.10 for g in twice for x in g)
    return GraphedSpread(apart, len(twice), sum(len(g) for g in twice), misses)


def between_recordings(table: dict[str, dict[str, float]]) -> None:
    """How the measured eager p50 and saving of one workload differ between its recordings
    (every pair), against the eager simulation's error on them."""
    by_workload: dict[str, list[dict[str, float]]] = {}
    for name, f in table.items():
        by_workload.setdefault(name.split("/", 1)[1], []).append(f)
    eager, saving = [], []
    for recordings in by_workload.values():
        for i, a in enumerate(recordings):
            for b in recordings[i + 1 :]:
                eager.append(abs(np.log(a["eager"] / b["eager"])))
                saving.append(100 * abs(b["graphed"] / b["eager"] - a["graphed"] / a["eager"]))
    if not eager:
        return
    e, sv = np.array(eager), np.array(saving)
    twice = sum(len(r) > 1 for r in by_workload.values())
    model = np.abs(np.log(np.array([f["model"] / f["eager"] for f in table.values()])))
    print(f"{len(e)} pairs of recordings of {twice} workloads:")
    print(
        f"  measured eager p50, |log ratio|: median {np.median(e):.3f} "
        f"(one recording from the workload's: {np.median(e) / np.sqrt(2):.3f}), "
        f"over 10 % apart on {np.mean(e > np.log(1.1)):.0%} of pairs"
    )
    print(
        f"  eager simulation, |log error| on all {len(model)} recordings: median "
        f"{np.median(model):.3f}"
    )
    graphed = graphed_spread(
        {name: [f["graphed"] for f in recordings] for name, recordings in by_workload.items()}
    )
    graphed_apart = np.array(graphed.apart)
    print(
        f"  measured graphed p50, apart: median {np.median(graphed_apart):.1%}, over 10 % on "
        f"{np.sum(graphed_apart > 0.10)} of {len(graphed_apart)} pairs"
    )
    model_misses = sum(
        abs(f["predicted"] / f["graphed"] - 1) > 0.10
        for recordings in by_workload.values()
        if len(recordings) > 1
        for f in recordings
    )
    print(
        f"  graphed p50 outside ±10 %, on the {graphed.recordings} recordings of those "
        f"workloads: {graphed.mean_misses} from the workload's mean, {model_misses} from the "
        "model's prediction"
    )
    far = 15 * np.sqrt(2)
    print(
        f"  measured saving, points apart: median {np.median(sv):.1f}, over 15 on "
        f"{np.mean(sv > 15):.0%} of pairs, over {far:.1f} on {np.mean(sv > far):.0%}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
