"""Nesting depth of time intervals per thread, computed with numpy (no per-interval Python).

Readers use it for ``cpu_ops.depth`` and ``annotations.depth``: the depth of an interval is
the number of intervals of the same ``(pid, tid)`` that opened before it and are still open
when it starts. For properly nested ranges (a call stack, push/pop ranges) that is the
stack depth (0 = outermost). Ranges that overlap without nesting still get a well-defined
depth: how many earlier ranges were open at their start.

Order among intervals of one thread: by start ascending, then end descending (a range that
starts together with a longer one sits inside it), then input order. An interval that ends
exactly when another starts does not contain it. Negative durations count as zero.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def nesting_depth(
    pid: ArrayLike, tid: ArrayLike, start_ns: ArrayLike, end_ns: ArrayLike
) -> NDArray[np.int64]:
    """Depth of each interval among the intervals of its ``(pid, tid)``.

    All four arguments are equally long integer arrays in any order; the result is aligned
    with them. O(n log n), one numpy pass per thread.

    >>> nesting_depth([1, 1, 1, 1], [7, 7, 7, 7], [0, 10, 12, 30], [100, 20, 15, 40]).tolist()
    [0, 1, 2, 1]
    """
    pids = np.asarray(pid, dtype=np.int64)
    tids = np.asarray(tid, dtype=np.int64)
    starts = np.asarray(start_ns, dtype=np.int64)
    ends = np.maximum(np.asarray(end_ns, dtype=np.int64), starts)
    n = len(starts)
    if not (len(pids) == len(tids) == len(ends) == n):
        raise ValueError("nesting_depth: arrays of different lengths")
    depth = np.zeros(n, dtype=np.int64)
    if n == 0:
        return depth
    # lexsort: last key is primary. Stable, so equal keys keep input order.
    order = np.lexsort((-ends, starts, tids, pids))
    p_sorted, t_sorted = pids[order], tids[order]
    s_sorted, e_sorted = starts[order], ends[order]
    new_group = (p_sorted[1:] != p_sorted[:-1]) | (t_sorted[1:] != t_sorted[:-1])
    bounds = np.concatenate(([0], np.flatnonzero(new_group) + 1, [n]))
    depth_sorted = np.empty(n, dtype=np.int64)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        depth_sorted[lo:hi] = _group_depth(s_sorted[lo:hi], e_sorted[lo:hi])
    depth[order] = depth_sorted
    return depth


def _group_depth(starts: NDArray[np.int64], ends: NDArray[np.int64]) -> NDArray[np.int64]:
    """Depths of one thread's intervals, already in nesting order (start asc, end desc).

    depth(i) = i - #{j before i that ended by start(i)}. ``searchsorted`` over all ends
    counts every j with end(j) <= start(i); the only such j *after* i are zero-length
    intervals starting exactly at start(i), which are subtracted (as is i itself when it
    has zero length).
    """
    m = len(starts)
    position = np.arange(m, dtype=np.int64)
    ended_by_start = np.searchsorted(np.sort(ends), starts, side="right").astype(np.int64)
    zero_length = (ends <= starts).astype(np.int64)
    zero_upto = np.cumsum(zero_length)  # zero-length intervals at positions <= k
    last_same_start = np.searchsorted(starts, starts, side="right") - 1
    zero_after = zero_upto[last_same_start] - zero_upto
    closed_before = ended_by_start - zero_after - zero_length
    depth: NDArray[np.int64] = np.maximum(position - closed_before, 0)
    return depth
