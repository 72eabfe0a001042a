"""How much longer a light kernel runs beside other streams' kernels than alone, measured in
the profiled replays of the H200 validation sets, against what the schedule charges
(``schedule.LIGHT_BESIDE_NS``, ``schedule.LIGHT_SLOWDOWN``).

For every multi-stream workload with an eager and a graphed trace: each kernel that ran with
no other stream's kernel beside it (in either trace) gives its time alone, per kernel name and
grid size (the median). Each light kernel (not a matrix kernel, holding room) of the graphed
trace that ran at least 80 % of its time beside other streams' kernels, with room for all
(device shares adding up to at most 1), and has a time alone gives a ratio: its duration over
that time, and its extra time in ns. ``H`` is the device share matrix kernels beside it held
(time-weighted over its run). Per group (beside light kernels only, by its time alone; beside
matrix kernels, by ``H``), the median over workloads of each workload's median, with the
quartiles of those medians, beside what the schedule charges::

    python bench/light_beside.py [--sets holdout15,holdout42,...] [--slope]

``--slope`` reads, for the kernels beside matrix kernels holding at least 0.3 of the device,
the slowdown per unit of ``H`` each ran at, ``(ratio - 1) / H`` (what ``LIGHT_SLOWDOWN``
charges, ignoring the company charge), by ``H`` and time alone.

``--bandwidth`` reads the kernels that stream memory (``TimelineColumns.streaming``, as the
schedule marks them) of at least 4 µs alone, beside only other streams' light kernels (room or
not), by the share of the bandwidth each demands itself and the share those beside it demand
(``schedule.bandwidth_demand``, time-weighted, from times alone): the median over workloads of
each workload's median ratio, beside what the schedule charges
(``schedule.bandwidth_slowdown``, or the company charge ``LIGHT_BESIDE_NS`` where larger), and
the median |log| of each kernel's ratio over that charge. Times alone whose samples spread more
than 20 % are left out.

Without ``--sets``, every fresh-process H200 set (``holdout*``, ``streams_fit``,
``probe_rerecord*``; about 4 minutes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from matrix_contention import Kernels, validation_folders  # noqa: E402
from validation_table import fresh_sets  # noqa: E402

from traceinspect.analysis.estimate.schedule import (  # noqa: E402
    LIGHT_BESIDE_NS,
    LIGHT_SLOWDOWN,
    bandwidth_demand,
    bandwidth_slowdown,
)

#: A kernel counts as beside others where they overlap at least this share of its run.
BESIDE_SHARE = 0.8


@dataclass(frozen=True)
class Beside:
    workload: str
    ratio: float  # duration beside others / time alone
    alone_ns: float
    matrix_held: float  # H: device share of the matrix kernels beside it
    beside_matrix: bool


def replay_and_alone(folder: Path) -> tuple[Kernels, dict[tuple[str, float], list[float]]] | None:
    """``folder``'s replay (None where it has no eager and graphed trace, or runs one stream)
    and, per kernel name and grid, the times its kernels ran with no other stream's beside
    them in either trace."""
    eager = sorted(folder.glob("*.eager.json.gz"))
    graphed = sorted(folder.glob("*.graphed.json.gz"))
    if not eager or not graphed:
        return None
    g = Kernels.of(graphed[0])
    if len(np.unique(g.stream)) < 2:
        return None
    alone: dict[tuple[str, float], list[float]] = defaultdict(list)
    for k in (Kernels.of(eager[0]), g):
        for i, others in enumerate(k.beside()):
            if not others:
                alone[k.key[i]].append(k.end[i] - k.start[i])
    return g, alone


def measured(folder: Path) -> list[Beside]:
    """The light kernels of ``folder``'s replay that ran beside other streams' kernels."""
    read = replay_and_alone(folder)
    if read is None:
        return []
    g, alone = read
    out = []
    for i, others in enumerate(g.beside()):
        if g.matrix[i] or g.share[i] <= 0 or not others or g.key[i] not in alone:
            continue
        duration = g.end[i] - g.start[i]
        if sum(t for _, t in others) < BESIDE_SHARE * duration:
            continue
        if g.share[i] + sum(g.share[j] * t for j, t in others) / duration > 1.0:
            continue  # no room for all: the schedule has it wait
        held = sum(g.share[j] * t for j, t in others if g.matrix[j]) / duration
        solo = statistics.median(alone[g.key[i]])
        out.append(
            Beside(
                f"{folder.parent.name}/{folder.name}",
                duration / solo,
                solo,
                held,
                any(g.matrix[j] for j, _ in others),
            )
        )
    return out


@dataclass(frozen=True)
class Streaming:
    workload: str
    ratio: float  # duration beside others / time alone
    alone_ns: float
    own: float  # bandwidth it demands itself
    others: float  # bandwidth those beside it demand (time-weighted over its run)

    @property
    def charged(self) -> float:
        """What the schedule charges it: the shared bandwidth's slowdown or the company
        charge beside other streams' light kernels, whichever is larger."""
        return max(bandwidth_slowdown(self.own, self.others), 1 + LIGHT_BESIDE_NS / self.alone_ns)


#: A row of either table, grouped by workload (:func:`_by_workload`).
Row = TypeVar("Row", Beside, Streaming)


#: ``--bandwidth`` reads kernels of at least this long alone (shorter ones: the company
#: charge, ``LIGHT_BESIDE_NS``).
STREAMING_MIN_NS = 4000.0


def streaming(folder: Path) -> list[Streaming]:
    """``--bandwidth``'s kernels of ``folder``'s replay (see the module's description)."""
    read = replay_and_alone(folder)
    if read is None:
        return []
    g, alone = read
    solo = {
        key: statistics.median(v)
        for key, v in alone.items()
        if len(v) > 1 and (max(v) - min(v)) <= 0.2 * statistics.median(v)
    }
    streams = g.streaming.tolist()
    # each kernel's demand, from its time alone where known (else its time here), once
    alone_or_here = [solo.get(key, e - s) for key, s, e in zip(g.key, g.start, g.end, strict=True)]
    demand = np.where(g.streaming, bandwidth_demand(np.array(alone_or_here), g.share), 0.0)

    out = []
    for i, others in enumerate(g.beside()):
        if not streams[i] or g.share[i] <= 0 or not others or g.key[i] not in solo:
            continue
        if solo[g.key[i]] < STREAMING_MIN_NS or any(g.matrix[j] for j, _ in others):
            continue
        duration = g.end[i] - g.start[i]
        if sum(t for _, t in others) < BESIDE_SHARE * duration:
            continue
        out.append(
            Streaming(
                f"{folder.parent.name}/{folder.name}",
                duration / solo[g.key[i]],
                solo[g.key[i]],
                float(demand[i]),
                sum(float(demand[j]) * t for j, t in others) / duration,
            )
        )
    return out


def bandwidth(rows: list[Streaming]) -> None:
    """``--bandwidth``'s table (see the module's description)."""
    head = f"{'own':9s} {'others':9s} {'kernels':>7s} {'wl':>4s}"
    print(f"{head}  ratio (quartiles)   alone   charged")
    for own_lo, own_hi in ((0.0, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01)):
        for lo, hi in ((0.0, 0.3), (0.3, 0.6), (0.6, 0.9), (0.9, 9.0)):
            sel = [r for r in rows if own_lo <= r.own < own_hi and lo <= r.others < hi]
            by = _by_workload(sel)
            if not by:
                continue
            ratio = _workload_medians(by, lambda r: r.ratio)
            charged = _workload_medians(by, lambda r: r.charged)
            q1, q3 = np.percentile(ratio, [25, 75])
            print(
                f"{own_lo:.2f}-{own_hi:.2f} {lo:.1f}-{hi:.1f}   {len(sel):7,d} {len(by):4d}  "
                f"{statistics.median(ratio):5.2f}x ({q1:.2f}-{q3:.2f})  "
                f"{statistics.median(r.alone_ns for r in sel) / 1e3:5.1f} µs"
                f"  {statistics.median(charged):.2f}x"
            )
    off = [abs(np.log(r.ratio / r.charged)) for r in rows]
    print(
        f"{len(rows):,d} kernels of {len(_by_workload(rows))} workloads: median |log(ratio / "
        f"charged)| {statistics.median(off):.3f}"
    )


def _by_workload(rows: list[Row]) -> dict[str, list[Row]]:
    by: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by[r.workload].append(r)
    return by


def _workload_medians(by: dict[str, list[Row]], value: Callable[[Row], float]) -> list[float]:
    """Per workload of ``by`` (:func:`_by_workload`), the median ``value`` of its rows: the
    tables weigh workloads, not kernels."""
    return [statistics.median(value(r) for r in v) for v in by.values()]


def report(label: str, rows: list[Beside], charged: float | None = None) -> None:
    """One group's line; ``charged`` None: :data:`LIGHT_BESIDE_NS` over its median time
    alone."""
    by = _by_workload(rows)
    if not by:
        return
    ratio = _workload_medians(by, lambda r: r.ratio)
    extra = _workload_medians(by, lambda r: (r.ratio - 1) * r.alone_ns)
    q1, q3 = np.percentile(ratio, [25, 75])
    if charged is None:
        charged = 1 + LIGHT_BESIDE_NS / statistics.median(r.alone_ns for r in rows)
    print(
        f"{label:34s} {len(rows):6,d} {len(by):4d}  {statistics.median(ratio):5.2f}x "
        f"({q1:.2f}-{q3:.2f})  {statistics.median(extra):6.0f} ns  charged {charged:.2f}x"
    )


def report_slope(label: str, rows: list[Beside]) -> None:
    """One group's line of ``--slope``: the median over workloads of each workload's median
    ``(ratio - 1) / H``, with the quartiles of those medians."""
    by = _by_workload(rows)
    if not by:
        return
    slope = _workload_medians(by, lambda r: (r.ratio - 1) / r.matrix_held)
    ratio = _workload_medians(by, lambda r: r.ratio)
    held = _workload_medians(by, lambda r: r.matrix_held)
    q1, q3 = np.percentile(slope, [25, 75])
    print(
        f"{label:34s} {len(rows):6,d} {len(by):4d}  {statistics.median(ratio):5.2f}x  "
        f"H {statistics.median(held):.2f}  {statistics.median(slope):5.2f} ({q1:.2f}-{q3:.2f})"
    )


def slopes(rows: list[Beside]) -> None:
    """``--slope``'s table (see the module's description)."""
    print(f"{'group':34s} {'kernels':>6s} {'wl':>4s}  ratio   H     slope (quartiles)")
    beside = [r for r in rows if r.beside_matrix and r.matrix_held >= 0.3]
    for lo, hi in ((0.3, 0.6), (0.6, 0.8), (0.8, 1.01)):
        for short, long in ((0.0, 2500.0), (2500.0, float("inf"))):
            sel = [r for r in beside if lo <= r.matrix_held < hi and short <= r.alone_ns < long]
            report_slope(f"H {lo:g}-{hi:g}, {short / 1e3:g}-{long / 1e3:g} µs", sel)
    report_slope("H 0.3-1.01, all", beside)
    print(f"schedule: LIGHT_SLOWDOWN {LIGHT_SLOWDOWN:g}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", help="comma-separated validation sets (default: every fresh one)")
    ap.add_argument("--slope", action="store_true", help="the slowdown per unit of H instead")
    ap.add_argument(
        "--bandwidth", action="store_true", help="streaming kernels beside each other, by B"
    )
    args = ap.parse_args()
    sets = args.sets.split(",") if args.sets else fresh_sets()
    if args.bandwidth:
        bandwidth([r for folder in validation_folders(sets) for r in streaming(folder)])
        return 0
    rows = [r for folder in validation_folders(sets) for r in measured(folder)]
    if args.slope:
        slopes(rows)
        return 0
    print(f"{'group':34s} {'kernels':>6s} {'wl':>4s}  ratio (quartiles)   extra   schedule")
    light = [r for r in rows if not r.beside_matrix]
    for lo, hi in (
        (0.0, 1500.0),
        (1500.0, 2500.0),
        (2500.0, 4000.0),
        (4000.0, 8000.0),
        (8000.0, float("inf")),
    ):
        sel = [r for r in light if lo <= r.alone_ns < hi]
        report(f"beside light only, {lo / 1e3:g}-{hi / 1e3:g} µs", sel)
    report("beside light only, all", light)
    for lo, hi in ((0.0, 0.1), (0.1, 0.3), (0.3, 0.6), (0.6, 1.01)):
        sel = [r for r in rows if r.beside_matrix and lo <= r.matrix_held < hi]
        if sel:  # the larger of the two charges (_slowed_path_ns)
            company = 1 + LIGHT_BESIDE_NS / statistics.median(r.alone_ns for r in sel)
            report(
                f"beside matrix, H {lo:g}-{hi:g}",
                sel,
                max(1 + LIGHT_SLOWDOWN * (lo + hi) / 2, company),
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
