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

    python bench/overfull_starts.py [--sets holdout31,holdout32,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from matrix_contention import VALIDATION, Kernels  # noqa: E402

from traceinspect.analysis.estimate import TimelineColumns  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402

#: A kernel past this share of its run makes room in the schedule (Packing.releases: 0.8 for
#: a light kernel of one wave, 0.9 for a matrix one, (waves - 1) / waves for several waves).
TAIL = 0.8


def _resident(trace: Path) -> np.ndarray:
    cols = TimelineColumns(load_trace(trace))
    rows = np.flatnonzero(cols.gpu("kind") == "kernel")
    return cols.occupancy[1][rows]


def starts(folder: Path) -> list[tuple[str, str, float, float, float]]:
    """(workload, kind, free share at start, own share, duration over time alone) per
    over-full start in ``folder``'s replay; kind is light, matrix-1 or matrix-k."""
    eager = sorted(folder.glob("*.eager.json.gz"))
    graphed = sorted(folder.glob("*.graphed.json.gz"))
    if not eager or not graphed:
        return []
    g, e = Kernels.of(graphed[0]), Kernels.of(eager[0])
    if len(np.unique(g.stream)) < 2:
        return []
    resident = _resident(graphed[0])
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
        kind = "light" if not g.matrix[i] else ("matrix-1" if resident[i] <= 1 else "matrix-k")
        solo = statistics.median(alone[g.key[i]])
        if solo <= 0:
            continue
        ratio = (g.end[i] - g.start[i]) / solo
        out.append((folder.name, kind, max(0.0, 1.0 - held), float(g.share[i]), ratio))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", help="comma-separated folders under sample_traces/validation")
    args = ap.parse_args()
    sets = args.sets.split(",") if args.sets else None
    rows = []
    for s in sorted(p.name for p in VALIDATION.iterdir() if p.is_dir()):
        if s.endswith("_workloads") or (sets is not None and s not in sets):
            continue
        for folder in sorted((VALIDATION / s).iterdir()):
            if folder.is_dir():
                rows += starts(folder)
    print(f"{len(rows)} over-full starts in {len({r[0] for r in rows})} workloads")
    print(
        f"{'kind':9s} {'free':>9s} {'starts':>6s} {'ratio p50':>9s} {'p25-p75':>11s} "
        f"{'share/free p50':>14s}"
    )
    for kind in ("light", "matrix-1", "matrix-k"):
        for lo, hi in ((0.0, 0.1), (0.1, 0.3), (0.3, 0.7), (0.7, 1.01)):
            sel = [r for r in rows if r[1] == kind and lo <= r[2] < hi]
            if not sel:
                continue
            ratio = np.array([r[4] for r in sel])
            room = np.array([r[3] / max(r[2], 1e-3) for r in sel])
            print(
                f"{kind:9s} {lo:4.1f}-{min(hi, 1.0):3.1f} {len(sel):6d} {np.median(ratio):9.2f} "
                f"{np.percentile(ratio, 25):5.2f}-{np.percentile(ratio, 75):5.2f} "
                f"{np.median(room):14.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
