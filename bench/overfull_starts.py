"""Kernels that start in a CUDA graph's replay while the device, by the schedule's count of
resident-block slots, has no room for them: how often, and how much longer they run than alone.

The replay schedule (``traceinspect.analysis.estimate.schedule``) starts a kernel only where
the device shares of the kernels running add up to at most 1 with it, or packs a matrix kernel
of several blocks per SM onto the SMs left free; anything else waits. The profiled replays of
the H200 validation sets show what the device did instead. For every multi-stream workload
with an eager and a graphed trace, each kernel of the graphed trace that started while other
streams' kernels ran is *over-full* where their shares and its own add up to more than 1.
Its time alone is the median of the same kernel (name and grid) running with no other
stream's kernel beside it in either trace; its ratio is its duration over that. Kernels in
the last fifth of their run are not counted as holding room. Reported by
kind (light kernels; matrix kernels of one block per SM, which the schedule never packs; of
several) with the share of the device left free at its start (``1 - held``) against its
own share::

    python bench/overfull_starts.py [--sets holdout31,holdout32,...] [--pace] [--due]

``--pace`` asks what pace such a kernel keeps: for each over-full start of a kernel of at
least 1.5 µs alone, its duration is predicted from the other streams' kernels as they ran
beside it in the replay (their shares, and the slowdowns the schedule charges beside
matrix kernels), the kernel advancing at ``min(1, free / share) ** gamma`` of its pace while
``free`` of the device is left; per kind, the mean |log error| of each workload's median and
the median of those (its bias) for a few ``gamma``. ``gamma`` 0 ignores the room, 1 runs the
kernel on exactly the room left.

``--due`` asks whether such a kernel waited at all: per kind and the room left when it was
due (its stream predecessor's end; kernels whose cross-stream dependency held them count as
waiting), the share that started within 1.5 µs of it, and the wait's median and 75th
percentile.
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
sys.path.insert(0, str(ROOT / "bench"))

from matrix_contention import Kernels, validation_folders  # noqa: E402

from traceinspect.analysis.estimate.schedule import (  # noqa: E402
    LIGHT_SLOWDOWN,
    matrix_contention,
)

#: A kernel past this share of its run makes room in the schedule (Packing.releases: 0.8 for
#: a light kernel of one wave, 0.9 for a matrix one, (waves - 1) / waves for several waves).
TAIL = 0.8


def _kind(g: Kernels, i: int) -> str:
    """Kernel ``i``'s kind: light, matrix-1 (one block per SM) or matrix-k."""
    if not g.matrix[i]:
        return "light"
    return "matrix-1" if g.resident[i] <= 1 else "matrix-k"


@dataclass(frozen=True)
class Start:
    """A kernel of a replay that started over-full."""

    workload: str
    kind: str  # light, matrix-1 or matrix-k
    free: float  # share of the device left at its start
    share: float  # its own share
    ratio: float  # its duration over its time alone
    alone_ns: float
    #: The other streams' kernels beside it: (start, end) in ns from its start, share,
    #: whether a matrix kernel, the share of the SMs its blocks cover.
    beside: list[tuple[float, float, float, bool, float]]

    def paced_ratio(self, gamma: float) -> float:
        """Its duration over its time alone where it advances at ``min(1, free / share) **
        gamma`` of its pace, ``free`` the room the kernels beside it leave (each holding its
        share until :data:`TAIL` of its run), slowed beside matrix kernels as the schedule
        charges (:data:`LIGHT_SLOWDOWN`, :func:`matrix_contention`)."""
        edges = sorted({t for s, e, *_ in self.beside for t in (s, e, s + TAIL * (e - s)) if t > 0})
        contention = float(matrix_contention(np.array([self.alone_ns]))[0])
        work, now = self.alone_ns, 0.0
        for nxt in [*edges, float("inf")]:
            if nxt <= now:
                continue
            running = [b for b in self.beside if b[0] <= now < b[1]]
            held = sum(b[2] for b in running if now < b[0] + TAIL * (b[1] - b[0]))
            room = min(1.0, max(1.0 - held, 1e-3) / self.share) ** gamma
            if self.kind == "light":
                slow = 1.0 + LIGHT_SLOWDOWN * min(1.0, sum(b[2] for b in running if b[3]))
            else:
                slow = 1.0 + contention * min(1.0, sum(b[4] for b in running if b[3]))
            pace = room / slow
            if now + work / pace <= nxt:
                return (now + work / pace) / self.alone_ns
            work -= pace * (nxt - now)
            now = nxt
        return now / self.alone_ns


def starts(folder: Path) -> list[Start]:
    """The over-full starts in ``folder``'s replay."""
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
    for i in range(len(g.start)):
        if g.share[i] <= 0 or g.key[i] not in alone:
            continue
        # running at its start and not yet in the last fifth of their run, where the
        # schedule lets them make room (Packing.releases)
        progress = (g.start[i] - g.start) / np.maximum(g.end - g.start, 1.0)
        running = (
            (g.start < g.start[i])
            & (g.end > g.start[i])
            & (g.stream != g.stream[i])
            & (progress < TAIL)
        )
        held = float(g.share[running].sum())
        if not running.any() or held + g.share[i] <= 1.0:
            continue
        kind = _kind(g, i)
        solo = statistics.median(alone[g.key[i]])
        if solo <= 0:
            continue
        ratio = (g.end[i] - g.start[i]) / solo
        t0 = g.start[i]
        near = np.flatnonzero((g.end > t0) & (g.start < t0 + 20 * solo) & (g.stream != g.stream[i]))
        beside = [
            (
                float(g.start[j] - t0),
                float(g.end[j] - t0),
                float(g.share[j]),
                bool(g.matrix[j]),
                float(g.cover[j]),
            )
            for j in near
        ]
        out.append(
            Start(
                folder.name,
                kind,
                max(0.0, 1.0 - held),
                float(g.share[i]),
                float(ratio),
                float(solo),
                beside,
            )
        )
    return out


def pace_fit(rows: list[Start], gammas: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0)) -> None:
    """Print, per kind and ``gamma``, how well :meth:`Start.paced_ratio` reads the ratios
    of the over-full starts of at least 1.5 µs alone (at most 40 per workload and kind, the
    first in the replay)."""
    print(f"{'kind':9s} {'gamma':>5s} {'workloads':>9s} {'mean |log err|':>14s} {'bias':>6s}")
    for kind in ("light", "matrix-1", "matrix-k"):
        by: dict[str, list[Start]] = defaultdict(list)
        for r in rows:
            if r.kind == kind and r.alone_ns >= 1_500 and len(by[r.workload]) < 40:
                by[r.workload].append(r)
        for gamma in gammas:
            errors = [
                statistics.median(math.log(r.ratio / r.paced_ratio(gamma)) for r in v)
                for v in by.values()
            ]
            print(
                f"{kind:9s} {gamma:5.2f} {len(errors):9d} "
                f"{statistics.fmean(abs(e) for e in errors):14.3f} "
                f"{statistics.median(errors):+6.3f}"
            )


def due_waits(folder: Path) -> list[tuple[str, str, float]]:
    """(kind, room left when due, wait in ns) per kernel of ``folder``'s replay that has a
    predecessor on its stream in the same replay; the room is ``room`` where its share
    fits beside the kernels then running (outside the last :data:`TAIL` of their run),
    else the share of the device left."""
    graphed = sorted(folder.glob("*.graphed.json.gz"))
    if not graphed:
        return []
    g = Kernels.of(graphed[0])
    if len(np.unique(g.stream)) < 2:
        return []
    out = []
    predecessor_end: dict[int, float] = {}
    for i in np.argsort(g.start, kind="stable"):
        stream = int(g.stream[i])
        due = predecessor_end.get(stream)
        predecessor_end[stream] = max(predecessor_end.get(stream, 0.0), float(g.end[i]))
        if due is None or g.share[i] <= 0 or g.start[i] - due >= 20_000:
            continue  # the stream's first kernel, a copy, or the next replay
        running = (g.start <= due) & (g.end > due) & (g.stream != stream)
        progress = (due - g.start) / np.maximum(g.end - g.start, 1.0)
        held = float(g.share[running & (progress < TAIL)].sum())
        kind = _kind(g, i)
        room = "room" if held + g.share[i] <= 1.0 else f"{max(0.0, 1.0 - held):.3f}"
        out.append((kind, room, float(g.start[i] - due)))
    return out


def print_due(folders: list[Path]) -> None:
    """Print :func:`due_waits` over ``folders`` by kind and room when due."""
    rows = [r for f in folders for r in due_waits(f)]
    print(
        f"{'kind':9s} {'room when due':>13s} {'kernels':>7s} {'at once':>7s} "
        f"{'wait p50':>8s} {'p75':>6s}"
    )
    for kind in ("light", "matrix-1", "matrix-k"):
        for label, lo, hi in (
            ("fits", -1.0, -1.0),
            ("0.0-0.1", 0.0, 0.1),
            ("0.1-0.5", 0.1, 0.5),
            ("0.5-1.0", 0.5, 1.01),
        ):
            waits = np.array(
                [
                    w
                    for k, room, w in rows
                    if k == kind
                    and (room == "room" if lo < 0 else room != "room" and lo <= float(room) < hi)
                ]
            )
            if not len(waits):
                continue
            print(
                f"{kind:9s} {label:>13s} {len(waits):7d} {np.mean(waits < 1_500):7.1%} "
                f"{np.median(waits) / 1000:6.2f}µs {np.percentile(waits, 75) / 1000:4.2f}µs"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", help="comma-separated folders under sample_traces/validation")
    ap.add_argument("--pace", action="store_true", help="also fit the pace of over-full starts")
    ap.add_argument("--due", action="store_true", help="also how long kernels due over-full wait")
    args = ap.parse_args()
    folders = validation_folders(args.sets.split(",") if args.sets else None)
    rows = [r for folder in folders for r in starts(folder)]
    print(f"{len(rows)} over-full starts in {len({r.workload for r in rows})} workloads")
    print(
        f"{'kind':9s} {'free':>9s} {'starts':>6s} {'ratio p50':>9s} {'p25-p75':>11s} "
        f"{'share/free p50':>14s}"
    )
    for kind in ("light", "matrix-1", "matrix-k"):
        for lo, hi in ((0.0, 0.1), (0.1, 0.3), (0.3, 0.7), (0.7, 1.01)):
            sel = [r for r in rows if r.kind == kind and lo <= r.free < hi]
            if not sel:
                continue
            ratio = np.array([r.ratio for r in sel])
            room = np.array([r.share / max(r.free, 1e-3) for r in sel])
            print(
                f"{kind:9s} {lo:4.1f}-{min(hi, 1.0):3.1f} {len(sel):6d} {np.median(ratio):9.2f} "
                f"{np.percentile(ratio, 25):5.2f}-{np.percentile(ratio, 75):5.2f} "
                f"{np.median(room):14.2f}"
            )
    if args.pace:
        pace_fit(rows)
    if args.due:
        print_due(folders)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
