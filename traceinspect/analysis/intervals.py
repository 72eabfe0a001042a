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
