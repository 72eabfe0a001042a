"""Replay of a graph whose nodes sit on several streams: who runs when, on a device that holds
only so many blocks at once.

A node is ready once its stream predecessor and the nodes it depends on have finished, plus
its own per-node overhead. It starts as soon as it is ready *and* the device has room for
it: the device shares (:func:`~traceinspect.analysis.estimate.columns.device_share`, the
share of the device's resident-block slots the node's grid fills) of the nodes running at
that moment must not exceed 1. Once started, a node runs for its whole duration (a block
scheduler does not take SMs back). A node alone on the device always starts.

Measured on the H200 (``sample_traces/validation/streams_fit`` and the hold-outs'
multi-stream workloads: 14 replays timed in a fresh process), this rigid schedule puts 10 of
14 within ±10 % (median |error| 7.5 %), where the longest path bounded by the SM-time of all
nodes put 5 (median 19.5 %): two GEMMs that each fill the device queue, whatever their
streams, and an elementwise kernel cannot slip in beside a GEMM that holds every SM's
registers; the SM-time bound let them overlap. Its misses: a big GEMM beside many tiny
kernels (the tiny ones fit in the slots the GEMM leaves, yet replayed mostly after it:
-33 %), two conv towers (+12 %), two GEMM branches joined by a fork (-10 to -12 %) and
memory-bound GEMMs on two streams (-8 to -16 %).

A profiled eager trace shows kernels of different streams overlapping too, and a kernel that
shared the device ran longer than it would alone: :func:`solo_durations` takes that back.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from traceinspect.analysis.estimate.columns import FloatArray, IntArray

#: Device shares of the nodes running at once may add up to this much.
CAPACITY: float = 1.0
#: Slack on the capacity test (shares are ratios of block counts).
_EPS = 1e-9


def scheduled_path_ns(
    stream_key: IntArray,
    duration: FloatArray,
    overhead: FloatArray,
    share: FloatArray,
    deps: Sequence[tuple[int, int]],
) -> float:
    """GPU time from the first node's start to the last node's end when the nodes (in start
    order) run as the module describes: ``duration`` and ``overhead`` per node (ns),
    ``share`` of the device each holds while it runs, ``deps`` as ``(src, dst)`` indices.

    Event-driven: a node's ready time is known once its stream predecessor and its sources
    have started (their ends are then fixed); ready nodes start in order of ready time (then
    index) as room allows, a smaller one passing a larger one that does not fit."""
    n = len(stream_key)
    if n == 0:
        return 0.0
    stream_of = np.unique(stream_key, return_inverse=True)[1].tolist()
    dur = np.asarray(duration, np.float64).tolist()
    cost = np.asarray(overhead, np.float64).tolist()
    need = np.clip(np.asarray(share, np.float64), 0.0, None).tolist()
    # What each node unblocks once it has started: the next node of its stream and the
    # nodes that depend on it; and how many such starts each node waits for.
    unblocks: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    last: dict[int, int] = {}
    for i, s in enumerate(stream_of):
        if s in last:
            unblocks[last[s]].append(i)
            waiting[i] += 1
        last[s] = i
    for src, dst in deps:
        if src != dst:
            unblocks[int(src)].append(int(dst))
            waiting[int(dst)] += 1
    earliest = [0.0] * n  # latest end among what a node waits for, once known
    ready = [(cost[i], i) for i in range(n) if waiting[i] == 0]  # (ready time, node)
    heapq.heapify(ready)
    due: list[tuple[float, int]] = []  # ready by now, waiting for room
    running: list[tuple[float, int]] = []  # (end, node)
    push, pop = heapq.heappush, heapq.heappop
    room = CAPACITY + _EPS
    used = now = end = 0.0
    started = 0
    while started < n:
        soon = now + _EPS
        while running and running[0][0] <= soon:
            used -= need[pop(running)[1]]
        if not running:
            used = 0.0
        while ready and ready[0][0] <= soon:
            push(due, pop(ready))
        blocked = []
        while due:
            item = pop(due)
            i = item[1]
            if running and used + need[i] > room:
                blocked.append(item)
                continue
            done = now + dur[i]
            push(running, (done, i))
            used += need[i]
            started += 1
            if done > end:
                end = done
            for j in unblocks[i]:
                if done > earliest[j]:
                    earliest[j] = done
                waiting[j] -= 1
                if not waiting[j]:
                    push(ready, (earliest[j] + cost[j], j))
        for item in blocked:
            push(due, item)
        if started == n:
            break
        if ready:
            upcoming = ready[0][0]
            if upcoming <= soon:
                continue  # a node just unblocked is ready already
            if running and running[0][0] < upcoming:
                upcoming = running[0][0]
        elif running:
            upcoming = running[0][0]
        else:  # a dependency cycle: nothing can ever start (never from a trace)
            break
        if upcoming > now:
            now = upcoming
    return end


def solo_durations(start: IntArray, end: IntArray, share: FloatArray) -> FloatArray:
    """Each activity's traced duration less the time it shared an over-full device.

    Where the device shares of the activities running at one moment add up to ``S > 1``,
    each advanced only ``1/S`` as fast as it would alone: it is charged ``1/S`` of that
    stretch. Activities with no device share (copies) keep their duration."""
    start = np.asarray(start, np.int64)
    end = np.asarray(end, np.int64)
    duration = (end - start).astype(np.float64)
    if len(start) < 2:
        return duration
    share = np.clip(np.asarray(share, np.float64), 0.0, None)
    times = np.unique(np.concatenate([start, end]))
    # Load on the device over each stretch [times[k], times[k+1]).
    load = np.zeros(len(times))
    np.add.at(load, np.searchsorted(times, start), share)
    np.add.at(load, np.searchsorted(times, end), -share)
    load = np.cumsum(load)[:-1]
    rate = np.where(load > 1.0 + _EPS, 1.0 / np.maximum(load, _EPS), 1.0)
    # Solo time accrued from the first timestamp to each timestamp.
    accrued = np.concatenate([[0.0], np.cumsum(rate * np.diff(times))])
    solo = accrued[np.searchsorted(times, end)] - accrued[np.searchsorted(times, start)]
    return np.where(share > 0, solo, duration)
