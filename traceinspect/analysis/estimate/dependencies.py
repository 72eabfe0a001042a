"""Cross-stream dependencies among a region occurrence's GPU activities (events and timing)."""

from __future__ import annotations

from typing import Final

import numpy as np

from traceinspect.analysis.estimate.columns import (
    IntArray,
    TimelineColumns,
    host_column,
    host_window,
    launch_times,
    stream_keys,
)
from traceinspect.model import Timeline

#: A node on another stream whose end precedes an activity's start by at most this much is
#: a dependency candidate, ns: a cross-stream event wait resolves on the GPU in ~1–3 µs.
DEPENDENCY_WINDOW_NS: Final = 4_000

#: Tolerance for the two timestamps of one GPU being compared across streams, ns.
CLOCK_SLACK_NS: Final = 500


def infer_dependencies(
    timeline: Timeline, rows: IntArray, *, columns: TimelineColumns | None = None
) -> list[tuple[int, int]]:
    """Cross-stream dependencies among the activities at ``rows`` (sorted by start), as
    ``(src, dst)`` index pairs into ``rows``.

    Two sources, combined:

    * **Events.** A ``cudaStreamWaitEvent`` call makes the next activity launched after it
      by the same thread (whose stream is the waiting stream) depend on the last activity,
      on another stream, launched before the preceding ``cudaEventRecord`` of that thread
      (before the wait call when no record precedes it); among several other streams, the
      most recently launched one — the stream that was recorded.
    * **Timing.** Activity ``j`` on stream B depends on activity ``i`` on stream A when
      ``i`` ended at most :data:`DEPENDENCY_WINDOW_NS` before ``j`` started, B was idle
      when ``i`` ended (B's previous activity ended before), and ``j`` had been launched
      (its launch call had returned) by the time ``i`` ended — ``j`` could have run but
      waited. The latest-ending such ``i`` is taken.
    """
    cols = columns or TimelineColumns(timeline)
    n = len(rows)
    if n < 2:
        return []
    keys = stream_keys(cols.gpu("device")[rows], cols.gpu("stream")[rows])
    if (keys == keys[0]).all():  # one stream: nothing to wait for across streams
        return []
    start = cols.gpu("start_ns")[rows]
    end = cols.gpu("end_ns")[rows]
    launched_at, launch_row = launch_times(cols, rows)
    submitted_by = host_column(cols, "end_ns", launch_row)

    deps = set(_event_dependencies(cols, keys, launch_row, launched_at, start, end))
    deps.update(_timing_dependencies(keys, start, end, submitted_by))
    return sorted(deps, key=lambda d: (d[1], d[0]))


def _timing_dependencies(
    keys: IntArray, start: IntArray, end: IntArray, submitted_by: IntArray
) -> list[tuple[int, int]]:
    """The timing rule of :func:`infer_dependencies`, for every activity at once.

    For each ``j``, the candidates are the activities ending in
    ``[start_j - DEPENDENCY_WINDOW_NS, start_j + CLOCK_SLACK_NS]`` on another stream and
    started before ``j``; the latest-ending one (last in stable end order) is ``j``'s
    dependency when ``j``'s stream was idle when it ended and ``j`` had been launched."""
    n = len(keys)
    by_end = np.argsort(end, kind="stable")
    sorted_end = end[by_end]
    lo = np.searchsorted(sorted_end, start - DEPENDENCY_WINDOW_NS, side="left")
    hi = np.searchsorted(sorted_end, start + CLOCK_SLACK_NS, side="right")
    counts = np.maximum(hi - lo, 0)
    # Every (j, candidate) pair, candidates of one j in increasing end order.
    j_of = np.repeat(np.arange(n), counts)
    first_pair = np.cumsum(counts) - counts
    i_of = by_end[np.arange(int(counts.sum())) - np.repeat(first_pair - lo, counts)]
    valid = (i_of != j_of) & (keys[i_of] != keys[j_of]) & (start[i_of] < start[j_of])
    j_of, i_of = j_of[valid], i_of[valid]
    latest = np.r_[j_of[1:] != j_of[:-1], True] if len(j_of) else np.zeros(0, bool)
    j_of, i_of = j_of[latest], i_of[latest]
    # B was busy until after i ended, or j was not yet launched when i ended: no dependency.
    held = end[i_of] > _stream_idle_since(keys, end)[j_of]
    launched = (submitted_by[j_of] < 0) | (submitted_by[j_of] <= end[i_of] + CLOCK_SLACK_NS)
    keep = held & launched
    return list(zip(i_of[keep].tolist(), j_of[keep].tolist(), strict=True))


def _stream_idle_since(keys: IntArray, end: IntArray) -> IntArray:
    """Per activity, the latest end of the activities before it (in index order) on its
    stream; the smallest int64 for a stream's first activity."""
    idle_since = np.full(len(keys), np.iinfo(np.int64).min, np.int64)
    for key in np.unique(keys):
        on = np.flatnonzero(keys == key)
        idle_since[on[1:]] = np.maximum.accumulate(end[on])[:-1]
    return idle_since


def _event_dependencies(
    cols: TimelineColumns,
    keys: IntArray,
    launch_row: IntArray,
    launched_at: IntArray,
    start: IntArray,
    end: IntArray,
) -> list[tuple[int, int]]:
    """The event rule of :func:`infer_dependencies`, vectorized over the wait calls."""
    known = np.flatnonzero(launch_row >= 0)
    if not len(known):
        return []
    first, last = int(launched_at[known].min()), int(launched_at[known].max())
    lo, hi = host_window(cols, first, last)
    waits = np.flatnonzero(cols.host_flag("wait")[lo:hi])
    if not len(waits):
        return []
    is_record = cols.host_flag("record")[lo:hi]
    pid = cols.host("pid")[lo:hi]
    tid = cols.host("tid")[lo:hi]
    call_start = cols.host("start_ns")[lo:hi]
    launch_pid = cols.host("pid")[launch_row[known]]
    launch_tid = cols.host("tid")[launch_row[known]]
    by_launch = known[np.argsort(launched_at[known], kind="stable")]
    launch_times = launched_at[by_launch]

    # The waits of threads that launched the occurrence's work, and the activity each
    # holds back: the next one launched after the call.
    cut_at = waits.copy()
    launching = np.zeros(len(waits), bool)
    for p, t in set(zip(pid[waits].tolist(), tid[waits].tolist(), strict=True)):
        if not ((launch_pid == p) & (launch_tid == t)).any():
            continue
        mine = np.flatnonzero((pid[waits] == p) & (tid[waits] == t))
        launching[mine] = True
        records = np.flatnonzero(is_record & (pid == p) & (tid == t))
        # The thread's last record before the wait; the wait itself when none precedes it.
        previous = np.searchsorted(records, waits[mine], side="left") - 1
        has_record = previous >= 0
        cut_at[mine[has_record]] = records[previous[has_record]]
    after = np.searchsorted(launch_times, call_start[waits], side="right")
    used = launching & (after < len(by_launch))
    cutoff = call_start[cut_at]
    dst = by_launch[after[used]]
    before = np.searchsorted(launch_times, cutoff[used], side="left")

    # Per other stream, its last activity launched before the cutoff; one still running
    # when dst started cannot be what dst waited for.
    deps: list[tuple[int, int]] = []
    launch_keys = keys[by_launch]
    for key in np.unique(launch_keys):
        on_stream = np.flatnonzero(launch_keys == key)
        last_pos = np.searchsorted(on_stream, before, side="left") - 1
        has = last_pos >= 0
        src = by_launch[on_stream[np.maximum(last_pos, 0)]]
        keep = has & (keys[dst] != key) & (end[src] <= start[dst] + CLOCK_SLACK_NS) & (src < dst)
        deps.extend(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))
    return deps
