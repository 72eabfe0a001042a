"""Vectorised interval arithmetic on int64 nanosecond arrays."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def merge(starts: IntArray, ends: IntArray) -> tuple[IntArray, IntArray]:
    """Union of ``[start, end)`` intervals as sorted, disjoint (starts, ends) arrays."""
    if len(starts) == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.argsort(starts, kind="stable")
    s = np.asarray(starts, np.int64)[order]
    e = np.maximum.accumulate(np.asarray(ends, np.int64)[order])
    # A new block starts where an interval begins after everything before it has ended.
    new_block = np.empty(len(s), bool)
    new_block[0] = True
    new_block[1:] = s[1:] > e[:-1]
    block_starts = s[new_block]
    block_ends = np.append(e[np.flatnonzero(new_block)[1:] - 1], e[-1])
    return block_starts, block_ends


def union_ns(starts: IntArray, ends: IntArray) -> int:
    """Total length covered by the union of the intervals."""
    s, e = merge(starts, ends)
    return int((e - s).sum())


def gaps(starts: IntArray, ends: IntArray) -> tuple[IntArray, IntArray]:
    """Idle intervals between the union's blocks, as (gap_starts, gap_ends)."""
    s, e = merge(starts, ends)
    return e[:-1], s[1:]


def covered_ns(
    block_starts: IntArray, block_ends: IntArray, starts: IntArray, ends: IntArray
) -> IntArray:
    """How much of each query interval ``[starts[i], ends[i])`` the disjoint, sorted blocks
    ``[block_starts, block_ends)`` cover (as :func:`merge` returns them), vectorised."""
    starts = np.asarray(starts, np.int64)
    ends = np.asarray(ends, np.int64)
    if len(block_starts) == 0:
        return np.zeros(len(starts), np.int64)
    prefix = np.concatenate(([0], np.cumsum(block_ends - block_starts)))
    return _busy_before(block_starts, block_ends, prefix, ends) - _busy_before(
        block_starts, block_ends, prefix, starts
    )


def _busy_before(
    block_starts: IntArray, block_ends: IntArray, prefix: IntArray, t: IntArray
) -> IntArray:
    # Blocks starting at or before t are counted whole, minus the part of the last one after t.
    k = np.searchsorted(block_starts, t, side="right")
    total = prefix[k]
    last = np.maximum(k - 1, 0)
    overrun = np.where(k > 0, np.maximum(block_ends[last] - t, 0), 0)
    return np.asarray(total - overrun, np.int64)


def grouped_union(
    group: IntArray, starts: IntArray, ends: IntArray
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Per-group union of intervals, for many groups at once.

    ``group`` holds small non-negative integers. Returns ``(order, prev_end, busy, first)``:
    ``order`` sorts the inputs by (group, start); ``prev_end[i]`` is the latest end among the
    intervals before sorted position ``i`` in the same group (``-1`` for a group's first);
    ``busy`` is the union length of each group (indexed by group id, ``max(group) + 1`` long);
    ``first`` marks each group's first sorted position.
    """
    group = np.asarray(group, np.int64)
    n_groups = int(group.max()) + 1 if len(group) else 0
    order = np.lexsort((starts, group))
    g = group[order]
    s = np.asarray(starts, np.int64)[order]
    e = np.asarray(ends, np.int64)[order]
    first = np.ones(len(g), bool)
    first[1:] = g[1:] != g[:-1]
    running = _grouped_cummax(e, first)
    prev_end = np.empty(len(g), np.int64)
    prev_end[0:1] = -1
    prev_end[1:] = running[:-1]
    prev_end[first] = -1
    # Each interval adds what sticks out past everything before it in its group.
    floor = np.where(first, s, np.maximum(s, prev_end))
    added = np.maximum(e - floor, 0)
    busy = np.zeros(n_groups, np.int64)
    np.add.at(busy, g, added)
    return order, prev_end, busy, first


def _grouped_cummax(values: IntArray, first: npt.NDArray[np.bool_]) -> IntArray:
    """Running maximum that restarts where ``first`` is True (values sorted by group)."""
    if len(values) == 0:
        return np.empty(0, np.int64)
    # Shift each group so its values are non-negative and sit above every earlier group's:
    # then one global running maximum never carries across a group boundary.
    group_id = np.cumsum(first) - 1
    group_min = np.minimum.reduceat(values, np.flatnonzero(first))
    rel = values - group_min[group_id]
    span = int(rel.max()) + 1
    if span * (int(group_id[-1]) + 1) < 2**62:
        shifted = rel + group_id * span
        return np.asarray(np.maximum.accumulate(shifted) - group_id * span + group_min[group_id])
    out = np.empty_like(values)
    bounds = np.append(np.flatnonzero(first), len(values))
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):  # pragma: no cover - > 2**62 ns
        out[lo:hi] = np.maximum.accumulate(values[lo:hi])
    return out
