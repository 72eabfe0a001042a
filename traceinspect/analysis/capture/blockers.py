"""Capture pre-flight findings: :class:`Blocker` and :class:`CaptureReport`, the fix named
for each kind, and the rules that turn a region's events into blockers (grouped by kind and
op) or find blockers across occurrences (kernel sequences, input shapes, collectives)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from traceinspect.analysis.capture.model import (
    CPU_WORK_GAP_NS,
    FIXES,
    Blocker,
    Event,
    Severity,
    assign_occurrences,
    short,
)
from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.regions import Region

if TYPE_CHECKING:
    from traceinspect.analysis.capture.lookups import TraceLookups


def group_events(lookups: TraceLookups, region: Region, events: list[Event]) -> list[Blocker]:
    groups: dict[tuple[str, str], list[Event]] = {}
    for event in events:
        groups.setdefault((event.kind, event.label), []).append(event)
    blockers = []
    for (kind, label), found in groups.items():
        first = found[0]
        occ_start = int(region.start_ns[first.occurrence])
        where = lookups.enclosing_region(
            int(region.pid[first.occurrence]), int(region.tid[first.occurrence]), first.time_ns
        )
        at_us = (first.time_ns - occ_start) / 1000
        example = {
            "op": label,
            "api": first.api,
            "occurrence": first.occurrence + 1,
            "at_us": round(at_us, 1),
            "region": where or region.name,
        }
        if first.detail:
            example["detail"] = first.detail
        occurrences = len({e.occurrence for e in found})
        api = f" ({first.api})" if first.api and first.api != label else ""
        extra = ""
        if kind == "cpu_work":
            largest = max(found, key=lambda e: float(e.detail.split()[0].replace(",", "")))
            extra = f" > {CPU_WORK_GAP_NS / 1000:g} µs, largest {largest.detail}"
        what = (
            f"{label}{api} ×{len(found)} in {occurrences}/{region.occurrences} occurrences"
            f"{extra}; first in occurrence {first.occurrence + 1} at +{at_us:,.1f} µs"
            f" in {where or region.name}"
        )
        blockers.append(
            Blocker(kind, first.severity, what, len(found), FIXES.get(kind, ""), example)
        )
    return blockers


def sequence_blockers(lookups: TraceLookups, region: Region) -> list[Blocker]:
    if region.occurrences < 2:
        return []
    blockers = []
    all_codes, uniques = lookups.kernel_codes()
    codes = [all_codes[_stream_order(lookups, r[lookups.arrays.is_kernel[r]])] for r in region.rows]
    change = _sequence_change([c.tobytes() for c in codes])
    if change is not None:
        occ, only_first = change
        ref = 1 if only_first else 0
        pos = _first_difference(codes[ref], codes[occ])
        if pos < len(codes[occ]):
            differs = f"differs at kernel {pos + 1}: {short(str(uniques[codes[occ][pos]]))}"
        else:
            differs = f"ends after {pos} kernels, where occurrence {ref + 1} goes on"
        severity: Severity = "note" if only_first else "breaks"
        kind = "warmup_kernel_sequence" if only_first else "kernel_sequence_changes"
        distinct = len({c.tobytes() for c in codes})
        what = (
            f"{distinct} different kernel sequences over {region.occurrences} occurrences; "
            f"occurrence {occ + 1} {differs}"
        )
        blockers.append(Blocker(kind, severity, what, distinct, FIXES[kind], {}))
    shapes = shape_blocker(lookups, region)
    if shapes is not None:
        blockers.append(shapes)
    return blockers


def _stream_order(lookups: TraceLookups, rows: IntArray) -> IntArray:
    """``rows`` (one occurrence's kernels, by start) stream by stream, the streams in the
    order they first ran, each's kernels by start: what a graph captures of the occurrence.
    Kernels of two streams running side by side start in either order from one occurrence to
    the next (a DDP step's all-reduces on NCCL's stream beside the backward's kernels), which
    is no change of the work."""
    arrays = lookups.arrays
    stream = arrays.stream[rows] + (arrays.device[rows] << 32)
    if len(rows) < 2 or (stream == stream[0]).all():
        return rows
    # Each row's stream, numbered in the order of the streams' first kernels.
    _, first, inverse = np.unique(stream, return_index=True, return_inverse=True)
    position = np.empty(len(first), np.int64)
    position[np.argsort(first, kind="stable")] = np.arange(len(first))
    out: IntArray = rows[np.lexsort((arrays.start[rows], position[inverse]))]
    return out


def shape_blocker(lookups: TraceLookups, region: Region) -> Blocker | None:
    recorded = lookups._shaped
    if len(recorded) == 0:
        return None
    occ = assign_occurrences(
        region, lookups.op_pid[recorded], lookups.op_tid[recorded], lookups.op_start[recorded]
    )
    mine = np.flatnonzero(occ >= 0)
    if len(mine) == 0:
        return None
    order = np.lexsort((lookups.op_start[recorded[mine]], occ[mine]))
    mine = mine[order]
    occ = occ[mine]
    codes = lookups._shape_codes[mine]
    counts = np.bincount(occ, minlength=region.occurrences)
    per_occ = np.split(codes.astype(np.int64), np.cumsum(counts)[:-1])
    change = _sequence_change([c.tobytes() for c in per_occ])
    if change is None:
        return None
    o, only_first = change
    if only_first:
        return None
    pos = _first_difference(per_occ[0], per_occ[o])
    differs = f"ends after {pos} ops with shapes, where occurrence 1 goes on"
    if pos < len(per_occ[o]):
        name, shapes = divmod(int(per_occ[o][pos]), max(len(lookups._shape_texts), 1))
        shown = f"{lookups._shape_names[name]} {lookups._shape_texts[shapes]}"
        differs = f"differs at op {pos + 1}: {short(shown)}"
    distinct = len({c.tobytes() for c in per_occ})
    what = (
        f"{distinct} different input-shape signatures over {region.occurrences} occurrences;"
        f" occurrence {o + 1} {differs}"
    )
    return Blocker("shapes_change", "change", what, distinct, FIXES["shapes_change"], {})


def collective_blockers(lookups: TraceLookups, rows: IntArray) -> list[Blocker]:
    kernels = rows[lookups.arrays.is_kernel[rows]]
    if len(kernels) == 0:
        return []
    codes, names = lookups.kernel_codes()
    mine = codes[kernels]
    nccl_codes = [
        int(c)
        for c in np.unique(mine)
        if "nccl" in str(names[c]).lower() or "rccl" in str(names[c]).lower()
    ]
    if not nccl_codes:
        return []
    nccl = [str(names[c]) for c in nccl_codes]
    count = int(np.isin(mine, nccl_codes).sum())
    what = f"{count} collective kernels, e.g. {short(nccl[0])}"
    return [Blocker("collective", "note", what, count, FIXES["collective"], {})]


def _sequence_change(signatures: list[bytes]) -> tuple[int, bool] | None:
    """The first occurrence whose signature differs from the steady state, and whether the
    first occurrence is the only one that differs (warm-up); ``None`` when all agree."""
    if len(set(signatures)) <= 1:
        return None
    rest = signatures[1:]
    if len(signatures) >= 3 and len(set(rest)) == 1:
        return 0, True
    reference = signatures[1] if len(signatures) >= 3 else signatures[0]
    start = 2 if len(signatures) >= 3 else 1
    for i in range(start, len(signatures)):
        if signatures[i] != reference:
            return i, False
    return 0, False


def _first_difference(a: IntArray, b: IntArray) -> int:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n
