"""How much longer a matrix kernel runs beside other streams' matrix kernels, measured in the
profiled replays of the H200 validation sets, against what the schedule charges
(``schedule.MATRIX_SLOWDOWN`` past ``schedule.MATRIX_LATENCY_NS``).

For every multi-stream workload with an eager and a graphed trace: each kernel that ran with
no other stream's kernel beside it (in either trace) gives its time alone, per kernel name and
grid size (the median). Each matrix kernel of the graphed trace that ran beside another
stream's kernels, with room for all of them (device shares adding up to at most 1, where the
schedule runs them side by side), and has a time alone gives a ratio: its duration over that
time. Beside it, ``C`` is the share of the SMs the other matrix kernels' blocks covered
(time-weighted over its run), ``L`` the same for light kernels.

The fit reads each workload's median of ``log(ratio / predicted)`` (kernels of one workload
are not independent) and reports the mean and median of their absolute values, for the
constants in the schedule, for none, and over a grid::

    python bench/matrix_contention.py [--sets holdout15,holdout20,...] [--grid]

``--by-order`` splits the slowdown by which kernel started first. ``--without-room``
compares the kernels that started without room instead (the schedule has them wait, so its
charge there is not what they ran), ``--min-us`` only kernels that long alone.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from traceinspect.analysis.estimate import TimelineColumns  # noqa: E402
from traceinspect.analysis.estimate.schedule import (  # noqa: E402
    FP32_BOUND_MIN_NS,
    MATRIX_LATENCY_NS,
    MATRIX_SLOWDOWN,
    Packing,
    matrix_contention,
)
from traceinspect.parse import load_trace  # noqa: E402

VALIDATION = ROOT / "sample_traces" / "validation"


def validation_folders(sets: list[str] | None = None) -> list[Path]:
    """The workload folders of the named validation sets (every set where None), in order."""
    return [
        folder
        for s in sorted(p.name for p in VALIDATION.iterdir() if p.is_dir())
        if not s.endswith("_workloads") and (sets is None or s in sets)
        for folder in sorted((VALIDATION / s).iterdir())
        if folder.is_dir()
    ]


@dataclass(frozen=True)
class Kernels:
    start: np.ndarray
    end: np.ndarray
    stream: np.ndarray
    key: list[tuple[str, float]]  # (name, blocks)
    matrix: np.ndarray
    share: np.ndarray
    cover: np.ndarray
    resident: np.ndarray  # blocks of it one SM holds at once
    ffma: np.ndarray  # a matrix kernel on the FP32 pipes (columns.FFMA_KERNEL)
    streaming: np.ndarray  # a light kernel streaming memory (TimelineColumns.streaming)

    @classmethod
    def of(cls, trace: Path) -> Kernels:
        cols = TimelineColumns(load_trace(trace))
        rows = np.flatnonzero(cols.gpu("kind") == "kernel")
        blocks, resident, sms = (a[rows] for a in cols.occupancy)
        # the SMs each kernel's blocks spread over, as the schedule charges them
        cover = Packing(blocks, resident, sms, cols.matrix[rows]).cover(cols.share[rows])
        return cls(
            start=cols.gpu("start_ns")[rows].astype(np.float64),
            end=cols.gpu("end_ns")[rows].astype(np.float64),
            stream=cols.gpu("stream")[rows],
            key=list(zip(cols.gpu("name")[rows].tolist(), blocks.tolist(), strict=True)),
            matrix=cols.matrix[rows],
            share=cols.share[rows],
            cover=cover,
            resident=resident,
            ffma=cols.ffma[rows],
            streaming=cols.streaming[rows],
        )

    def beside(self) -> list[list[tuple[int, float]]]:
        """Per kernel, the other streams' kernels that overlapped it and for how long (ns)."""
        order = np.argsort(self.start, kind="stable")
        starts = self.start[order]
        out: list[list[tuple[int, float]]] = [[] for _ in order]
        longest = float((self.end - self.start).max()) if len(order) else 0.0
        for i in range(len(order)):
            lo = np.searchsorted(starts, self.start[i] - longest)
            hi = np.searchsorted(starts, self.end[i])
            for j in order[lo:hi]:
                if j == i or self.stream[j] == self.stream[i]:
                    continue
                both = min(self.end[i], self.end[j]) - max(self.start[i], self.start[j])
                if both > 0:
                    out[i].append((int(j), float(both)))
        return out


@dataclass(frozen=True)
class Ratio:
    workload: str
    ratio: float  # duration beside others / time alone
    alone_ns: float
    matrix_cover: float  # C
    light_cover: float  # L
    #: Of its time beside other matrix kernels, the share spent beside ones that started
    #: before it (0: it started first; 1: it started after them all).
    after: float = 0.0
    #: Bound by the FP32 pipes (an FFMA kernel of at least ``FP32_BOUND_MIN_NS`` alone):
    #: the schedule charges it ``FP32_SLOWDOWN``.
    fp32: bool = False


def ratios(folder: Path, without_room: bool = False, min_ns: float = 0.0) -> list[Ratio]:
    """The matrix kernels of ``folder``'s replay that ran beside other streams' kernels
    with room for all (``without_room``: only those that started without it, where the
    schedule has them wait), of at least ``min_ns`` alone."""
    eager = sorted(folder.glob("*.eager.json.gz"))
    graphed = sorted(folder.glob("*.graphed.json.gz"))
    if not eager or not graphed:
        return []
    g, e = Kernels.of(graphed[0]), Kernels.of(eager[0])
    if len(np.unique(g.stream)) < 2:
        return []
    alone: dict[tuple[str, float], list[float]] = defaultdict(list)
    for k in (e, g):
        for i, others in enumerate(k.beside()):
            if not others:
                alone[k.key[i]].append(k.end[i] - k.start[i])
    out = []
    for i, others in enumerate(g.beside()):
        duration = g.end[i] - g.start[i]
        if not g.matrix[i] or not others or g.key[i] not in alone or duration < 2_000:
            continue
        held = sum(g.share[j] * t for j, t in others) / duration
        if (g.share[i] + held > 1.0) != without_room:
            continue  # no room for all: the schedule has them wait, not share
        m = sum(g.cover[j] * t for j, t in others if g.matrix[j]) / duration
        light = sum(g.cover[j] * t for j, t in others if not g.matrix[j]) / duration
        if m <= 0.05 and light <= 0.05:
            continue
        solo = statistics.median(alone[g.key[i]])
        if solo < min_ns:
            continue
        beside_matrix = [(j, t) for j, t in others if g.matrix[j]]
        total = sum(t for _, t in beside_matrix)
        after = (
            sum(t for j, t in beside_matrix if g.start[j] < g.start[i]) / total if total else 0.0
        )
        fp32 = bool(g.ffma[i]) and solo >= FP32_BOUND_MIN_NS
        out.append(Ratio(folder.name, duration / solo, solo, m, light, after, fp32))
    return out


def predicted(r: Ratio, slowdown: float, latency_ns: float) -> float:
    """The stretch the schedule charges ``r``'s kernel (:func:`matrix_contention`; a kernel
    bound by the FP32 pipes at ``FP32_SLOWDOWN`` where ``slowdown`` is the schedule's)."""
    fp32 = np.array([r.fp32 and slowdown == MATRIX_SLOWDOWN])
    per_cover = float(matrix_contention(np.array([r.alone_ns]), slowdown, latency_ns, fp32=fp32)[0])
    return 1.0 + per_cover * min(1.0, r.matrix_cover)


def score(
    by_workload: dict[str, list[Ratio]], slowdown: float, latency_ns: float
) -> tuple[float, float, float]:
    errors = [
        statistics.median(math.log(r.ratio / predicted(r, slowdown, latency_ns)) for r in rows)
        for rows in by_workload.values()
    ]
    return (
        statistics.fmean(abs(e) for e in errors),
        statistics.median(abs(e) for e in errors),
        statistics.fmean(errors),
    )


def by_order(by_workload: dict[str, list[Ratio]]) -> None:
    """Print the slowdown per unit of matrix cover (``(ratio - 1) / C``, each workload's
    median, then their median) of the kernels beside matrix kernels covering at least 0.3
    of the SMs, split by whether they started first or after the others."""
    for label, keep in (
        ("started first", lambda r: r.after < 0.2),
        ("started after", lambda r: r.after > 0.8),
    ):
        medians = [
            statistics.median((r.ratio - 1) / min(1.0, r.matrix_cover) for r in chosen)
            for rows in by_workload.values()
            if (chosen := [r for r in rows if keep(r) and r.matrix_cover >= 0.3])
        ]
        kernels = sum(
            1 for rows in by_workload.values() for r in rows if keep(r) and r.matrix_cover >= 0.3
        )
        print(
            f"{label}: {kernels} kernels, {len(medians)} workloads, slowdown per unit of "
            f"cover {statistics.median(medians):.2f} "
            f"({np.percentile(medians, 25):.2f}-{np.percentile(medians, 75):.2f})"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", help="comma-separated folders under sample_traces/validation")
    ap.add_argument("--grid", action="store_true", help="also score a grid of constants")
    ap.add_argument(
        "--without-room",
        action="store_true",
        help="the kernels that started without room instead (the schedule has them wait)",
    )
    ap.add_argument("--min-us", type=float, default=0.0, help="only kernels this long alone")
    ap.add_argument(
        "--by-order",
        action="store_true",
        help="also the slowdown of kernels that started first against those that started after",
    )
    args = ap.parse_args()
    folders = validation_folders(args.sets.split(",") if args.sets else None)
    by_workload: dict[str, list[Ratio]] = defaultdict(list)
    for folder in folders:
        for r in ratios(folder, args.without_room, args.min_us * 1000):
            by_workload[r.workload].append(r)
    n = sum(len(v) for v in by_workload.values())
    print(f"{n} matrix kernels beside other streams' kernels, {len(by_workload)} workloads")
    print(f"{'workload':40s} {'kernels':>7s} {'ratio':>6s} {'C':>5s} {'L':>5s} {'charged':>7s}")
    for name, rows in sorted(by_workload.items()):
        charged = statistics.median(predicted(r, MATRIX_SLOWDOWN, MATRIX_LATENCY_NS) for r in rows)
        print(
            f"{name:40s} {len(rows):7d} {statistics.median(r.ratio for r in rows):6.2f}"
            f" {statistics.median(r.matrix_cover for r in rows):5.2f}"
            f" {statistics.median(r.light_cover for r in rows):5.2f} {charged:7.2f}"
        )
    for label, s, lat in (
        (
            f"schedule ({MATRIX_SLOWDOWN} past {MATRIX_LATENCY_NS / 1000:g} µs)",
            MATRIX_SLOWDOWN,
            MATRIX_LATENCY_NS,
        ),
        ("no slowdown", 0.0, 0.0),
    ):
        mean, median, bias = score(by_workload, s, lat)
        print(f"{label}: |log error| mean {mean:.3f}, median {median:.3f}; bias {bias:+.3f}")
    if args.by_order:
        by_order(by_workload)
    if args.grid:
        grid = sorted(
            (score(by_workload, s, lat), s, lat)
            for s in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.5)
            for lat in (0.0, 1000.0, 2000.0, 4000.0)
        )
        for (mean, median, bias), s, lat in grid[:8]:
            print(
                f"  {s:.1f} past {lat / 1000:g} µs: mean {mean:.3f}, median {median:.3f}, "
                f"bias {bias:+.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
