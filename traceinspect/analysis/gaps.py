"""Idle time on the GPU, and why: every gap between a region's activities gets one cause.

For each group of GPU activities (one region occurrence, or one occurrence on one stream)
the activities' union is walked from the first start to the last end; every idle interval
between them is attributed to the activity that ends it (the *next* activity) by these
rules, in order:

1. The host had not issued the next activity when the GPU went idle (its launch call ended
   after the gap began) — or its launch record is missing:

   - ``sync``: the launching process was blocked on the GPU while it drained: a
     synchronizing call (``cudaDeviceSynchronize``, ``cudaStreamSynchronize``,
     ``cudaEventSynchronize``, ...) or a device-side sync record overlaps the gap, or a
     copy call was in progress when the GPU went idle, for a transfer other than the next
     activity (a blocking copy: ``cudaMemcpy``, a pageable device-to-host copy);
   - ``copy``: the next activity is a host↔device transfer: the GPU waited for the host to
     stage and issue it;
   - ``host_launch``: the host was still busy issuing the next launch (Python, the
     framework's dispatcher, the launch call itself); such gaps longer than
     ``LONG_HOST_GAP_NS`` (one threshold with the simulated unprofiled run of
     :mod:`traceinspect.analysis.estimate.eager`) are the host's own work;
   - ``other`` (``no_launch_record``) when the launch call is unknown.

2. The host had issued it already (the launch call ended before the gap began) and still
   the GPU waited:

   - ``dependency``: it is the first activity on its stream after a stream-wait-event
     (``cudaStreamWaitEvent``): the stream waited on another stream or an event;
   - ``other`` otherwise, with a detail: ``dispatch`` (shorter than
     :data:`DISPATCH_GAP_NS`, the GPU's own switch between queued kernels),
     ``outside_work`` (the device was busy with activities outside the group for at
     least half the gap — another region, thread, process or stream), or ``queued``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from traceinspect.analysis.arrays import Blocks, BoolArray, TimelineArrays
from traceinspect.analysis.estimate.eager import LONG_HOST_GAP_NS
from traceinspect.analysis.intervals import IntArray, covered_ns, grouped_union

#: Gap causes, in the order their codes (0..4) index them.
CAUSES: Final = ("host_launch", "sync", "copy", "dependency", "other")
HOST_LAUNCH, SYNC, COPY, DEPENDENCY, OTHER = range(5)

#: What an ``other`` gap was, where it can be told (codes 0..3).
OTHER_DETAILS: Final = ("queued", "dispatch", "outside_work", "no_launch_record")
QUEUED, DISPATCH, OUTSIDE_WORK, NO_LAUNCH_RECORD = range(4)

#: Idle shorter than this between activities already queued is the GPU's own switch from one
#: kernel to the next (about 1 µs on A100/H100/H200), not a stall anyone can remove.
DISPATCH_GAP_NS: Final = 2_000

#: A gap counts as ``outside_work`` when other activity on the device covers at least this
#: share of it: the GPU was busy, just not with this group's work.
OUTSIDE_WORK_SHARE: Final = 0.5


@dataclass(frozen=True)
class GroupGaps:
    """Busy time, window and idle-by-cause for each of ``n`` groups of activities.

    Arrays are indexed by group id; times are ns. ``first_start``/``last_end`` are -1 for a
    group without activities.
    """

    n: int
    busy: IntArray
    first_start: IntArray
    last_end: IntArray
    #: ``idle[g, c]``: idle ns of group g attributed to cause ``CAUSES[c]``.
    idle: IntArray
    #: ``other_detail[g, d]``: the ``other`` idle of group g split by ``OTHER_DETAILS[d]``.
    other_detail: IntArray
    #: ``host_launch`` idle of each group in gaps longer than :data:`LONG_HOST_GAP_NS`.
    long_host: IntArray
    #: Every gap: its group, interval, the activity that ended it, cause and detail.
    gap_group: IntArray
    gap_start: IntArray
    gap_end: IntArray
    gap_next_row: IntArray
    gap_cause: npt.NDArray[np.int8]
    gap_detail: npt.NDArray[np.int8]

    @property
    def span(self) -> IntArray:
        """First activity start to last activity end, per group (0 when empty)."""
        return np.where(self.first_start >= 0, self.last_end - self.first_start, 0)


def group_gaps(arrays: TimelineArrays, group: IntArray, rows: IntArray, n: int) -> GroupGaps:
    """Gaps of ``n`` groups: ``rows[i]`` (a gpu row position) belongs to group ``group[i]``.

    A row may appear in several groups (nested regions); within a group rows are unique.
    """
    group = np.asarray(group, np.int64)
    rows = np.asarray(rows, np.int64)
    starts, ends = arrays.start[rows], arrays.end[rows]
    order, prev_end, busy_part, first = grouped_union(group, starts, ends)
    busy = np.zeros(n, np.int64)
    busy[: len(busy_part)] = busy_part
    g, r, s = group[order], rows[order], starts[order]
    first_start = np.full(n, -1, np.int64)
    last_end = np.full(n, -1, np.int64)
    first_start[g[first]] = s[first]
    np.maximum.at(last_end, g, ends[order])

    is_gap = ~first & (s > prev_end)
    gap_group, gap_next_row = g[is_gap], r[is_gap]
    gap_start, gap_end = prev_end[is_gap], s[is_gap]
    cause, detail = classify_gaps(arrays, gap_start, gap_end, gap_next_row)
    length = gap_end - gap_start
    idle = np.zeros((n, len(CAUSES)), np.int64)
    np.add.at(idle, (gap_group, cause), length)
    other_detail = np.zeros((n, len(OTHER_DETAILS)), np.int64)
    long_host = np.zeros(n, np.int64)
    is_long = (cause == HOST_LAUNCH) & (length > LONG_HOST_GAP_NS)
    np.add.at(long_host, gap_group[is_long], length[is_long])
    is_other = cause == OTHER
    np.add.at(other_detail, (gap_group[is_other], detail[is_other]), length[is_other])
    return GroupGaps(
        n=n,
        busy=busy,
        first_start=first_start,
        last_end=last_end,
        idle=idle,
        other_detail=other_detail,
        long_host=long_host,
        gap_group=gap_group,
        gap_start=gap_start,
        gap_end=gap_end,
        gap_next_row=gap_next_row,
        gap_cause=cause,
        gap_detail=detail,
    )


def classify_gaps(
    arrays: TimelineArrays,
    gap_start: IntArray,
    gap_end: IntArray,
    next_row: IntArray,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Cause code and ``other`` detail code for each gap (see the module docstring)."""
    n = len(gap_start)
    cause = np.full(n, OTHER, np.int8)
    detail = np.full(n, QUEUED, np.int8)
    if n == 0:
        return cause, detail
    has_launch = arrays.launch_row[next_row] >= 0
    ahead = has_launch & (arrays.launch_end[next_row] <= gap_start)
    pid = arrays.pid[next_row]
    device = arrays.device[next_row]

    host_blocked = _overlaps(arrays.sync_calls, pid, gap_start, gap_end) | _overlaps(
        arrays.sync_records, device, gap_start, gap_end
    )
    next_is_copy = arrays.is_copy[next_row]
    # A copy call already in progress when the GPU went idle, for a transfer other than the
    # pending one, is waiting on the GPU: a blocking copy. (An async copy call issued during
    # the gap is launch work, like any other launch call.)
    copy_call = _overlaps(arrays.copy_calls, pid, gap_start, gap_start + 1)
    host_blocked |= copy_call & ~next_is_copy

    late = ~ahead
    cause[late & has_launch] = HOST_LAUNCH
    cause[late & ~has_launch] = OTHER
    detail[late & ~has_launch] = NO_LAUNCH_RECORD
    cause[late & next_is_copy] = COPY
    cause[late & host_blocked] = SYNC

    cause[ahead & arrays.after_wait[next_row]] = DEPENDENCY
    other_ahead = ahead & (cause == OTHER)
    detail[other_ahead & (gap_end - gap_start < DISPATCH_GAP_NS)] = DISPATCH
    outside = other_ahead & (detail == QUEUED)
    if outside.any():
        covered = _covered(
            arrays.device_busy, device[outside], gap_start[outside], gap_end[outside]
        )
        length = gap_end[outside] - gap_start[outside]
        idx = np.flatnonzero(outside)
        detail[idx[covered >= OUTSIDE_WORK_SHARE * length]] = OUTSIDE_WORK
    return cause, detail


def _overlaps(blocks: Blocks, key: IntArray, starts: IntArray, ends: IntArray) -> BoolArray:
    return _covered(blocks, key, starts, ends) > 0


def _covered(blocks: Blocks, key: IntArray, starts: IntArray, ends: IntArray) -> IntArray:
    out = np.zeros(len(starts), np.int64)
    for k in np.unique(key):
        block_starts, block_ends = blocks.get(int(k))
        if len(block_starts) == 0:
            continue
        mine = key == k
        out[mine] = covered_ns(block_starts, block_ends, starts[mine], ends[mine])
    return out
