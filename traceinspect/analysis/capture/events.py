"""What each occurrence of a region did that capture would trip on, one :class:`Event` per
finding before grouping: host synchronizations and allocations, synchronizing or
data-dependent operators, device-to-host and pageable copies, CPU work between launches."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from traceinspect.analysis.capture.model import (
    CPU_WORK_GAP_NS,
    DATA_DEPENDENT_OPS,
    HOST_SYNC_OPS,
    Event,
    assign_occurrences,
)
from traceinspect.analysis.intervals import IntArray, covered_ns
from traceinspect.analysis.regions import Region

if TYPE_CHECKING:
    from traceinspect.analysis.capture.lookups import TraceLookups


def host_call_events(lookups: TraceLookups, region: Region, last_launch: IntArray) -> list[Event]:
    arrays = lookups.arrays
    rows = lookups.special_rows
    if len(rows) == 0:
        return []
    t = arrays.host_start[rows]
    occ = assign_occurrences(region, lookups.host_pid[rows], lookups.host_tid[rows], t)
    events = []
    first_allocs: list[int] = []
    for h, o, when in zip(rows[occ >= 0], occ[occ >= 0], t[occ >= 0], strict=True):
        kind = str(lookups.host_kind[h])
        api = str(lookups.host_name[h])
        pid, tid = int(lookups.host_pid[h]), int(lookups.host_tid[h])
        op = lookups.outer_op(pid, tid, int(when)) or lookups.issuing_op(int(h)) or api
        if kind == "sync" and op in HOST_SYNC_OPS | DATA_DEPENDENT_OPS:
            continue  # reported once, as the operator
        if kind == "sync":
            before = int(when) < int(last_launch[o])
            events.append(
                Event(
                    "host_sync" if before else "trailing_sync",
                    "breaks" if before else "change",
                    op,
                    int(o),
                    int(when),
                    api,
                )
            )
        else:
            first_allocs.append(int(o))
            events.append(Event("allocation", "change", api, int(o), int(when), api))
    # Allocations only in the first occurrence are the caching allocator warming up.
    if first_allocs and max(first_allocs) == 0 and region.occurrences > 1:
        events = [
            Event("warmup_allocation", "note", e.label, e.occurrence, e.time_ns, e.api)
            if e.kind == "allocation"
            else e
            for e in events
        ]
    return events


def op_events(lookups: TraceLookups, region: Region, last_launch: IntArray) -> list[Event]:
    rows = lookups.special_ops
    if len(rows) == 0:
        return []
    t = lookups.op_start[rows]
    occ = assign_occurrences(region, lookups.op_pid[rows], lookups.op_tid[rows], t)
    events = []
    for r, o, when in zip(rows[occ >= 0], occ[occ >= 0], t[occ >= 0], strict=True):
        name = str(lookups.op_name[r])
        pid, tid = int(lookups.op_pid[r]), int(lookups.op_tid[r])
        outer = lookups.outer_op(pid, tid, int(when)) or name
        if name in DATA_DEPENDENT_OPS:
            events.append(
                Event("data_dependent_shape", "breaks", name, int(o), int(when), "", outer)
            )
        elif lookups.op_depth[r] == 0 or outer == name:
            # Count each .item()-like call once, at its outermost op.
            before = int(when) < int(last_launch[o])
            events.append(
                Event(
                    "host_sync" if before else "trailing_sync",
                    "breaks" if before else "change",
                    name,
                    int(o),
                    int(when),
                )
            )
    return events


def copy_events(
    lookups: TraceLookups, region: Region, occ: IntArray, rows: IntArray, last_launch: IntArray
) -> list[Event]:
    arrays = lookups.arrays
    gpu = arrays.timeline.gpu
    copies = np.flatnonzero(arrays.is_copy[rows])
    events: list[Event] = []
    if len(copies) == 0:
        return events
    copy_kind = gpu["copy_kind"].to_numpy()
    host_memory = gpu["host_memory"].to_numpy()
    for i in copies:
        r, o = int(rows[i]), int(occ[i])
        t = int(arrays.launch_start[r]) if arrays.launch_row[r] >= 0 else int(arrays.start[r])
        pid, tid = int(arrays.pid[r]), int(arrays.tid[r])
        op = lookups.outer_op(pid, tid, t) or (
            lookups.issuing_op(int(arrays.launch_row[r])) if arrays.launch_row[r] >= 0 else ""
        )
        api = str(lookups.host_name[arrays.launch_row[r]]) if arrays.launch_row[r] >= 0 else ""
        if copy_kind[r] == "DtoH":
            if op in HOST_SYNC_OPS | DATA_DEPENDENT_OPS:
                continue  # already reported as the op's host sync
            before = t < int(last_launch[o])
            events.append(
                Event(
                    "device_to_host_copy" if before else "trailing_device_to_host_copy",
                    "breaks" if before else "change",
                    op or "Memcpy DtoH",
                    o,
                    t,
                    api,
                )
            )
        elif host_memory[r] == "pageable":
            events.append(
                Event("pageable_copy", "change", op or "Memcpy HtoD (Pageable)", o, t, api)
            )
        else:
            events.append(Event("host_to_device_copy", "note", op or "Memcpy HtoD", o, t, api))
    return events


def cpu_work_events(
    lookups: TraceLookups, region: Region, occ: IntArray, rows: IntArray
) -> list[Event]:
    arrays = lookups.arrays
    has = arrays.launch_row[rows] >= 0
    if not has.any():
        return []
    # Unique launch calls per occurrence (a graph launch or memcpy may own many rows).
    frame = pd.DataFrame({"occ": occ[has], "row": arrays.launch_row[rows[has]]}).drop_duplicates()
    frame["start"] = arrays.host_start[frame["row"].to_numpy()]
    frame["end"] = arrays.host_end[frame["row"].to_numpy()]
    frame = frame.sort_values(["occ", "start"], kind="stable")
    o = frame["occ"].to_numpy(np.int64)
    start = frame["start"].to_numpy(np.int64)
    end = frame["end"].to_numpy(np.int64)
    prev_end = np.concatenate(([0], np.maximum.accumulate(end)[:-1]))
    same = np.concatenate(([False], o[1:] == o[:-1]))
    gap = np.where(same, start - prev_end, 0)
    big = np.flatnonzero(gap > CPU_WORK_GAP_NS)
    if len(big) == 0:
        return []
    host_rows = frame["row"].to_numpy(np.int64)[big]
    pids = lookups.host_pid[host_rows]
    # Gaps spent blocked in a sync are reported as syncs, not as CPU work.
    blocked = np.zeros(len(big), bool)
    for p in np.unique(pids):
        s, e = arrays.sync_calls.get(int(p))
        mine = pids == p
        blocked[mine] = covered_ns(s, e, prev_end[big][mine], start[big][mine]) > 0
    big, host_rows = big[~blocked], host_rows[~blocked]
    if len(big) == 0:
        return []
    # One event per gap; the operator after the gap is looked up for the first and the
    # largest only (the blocker's example and its "largest").
    named = {int(big[0]), int(big[np.argmax(gap[big])])}
    events = []
    for i, h in zip(big.tolist(), host_rows.tolist(), strict=True):
        op = ""
        if i in named:
            pid, tid = int(lookups.host_pid[h]), int(lookups.host_tid[h])
            op = lookups.outer_op(pid, tid, int(start[i])) or str(lookups.host_name[h])
        events.append(
            Event(
                "cpu_work",
                "note",
                "host work between launches",
                int(o[i]),
                int(prev_end[i]),
                detail=f"{gap[i] / 1000:,.0f} µs" + (f" before {op}" if op else ""),
            )
        )
    return events
