"""Per-trace lookups the capture pre-flight reuses for every region: host calls by kind,
the operator that issued a call, the outermost operator running on a thread at a time, the
enclosing region, kernel names and operator input shapes as integer codes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from traceinspect.analysis.arrays import TimelineArrays
from traceinspect.analysis.capture.model import DATA_DEPENDENT_OPS, HOST_SYNC_OPS
from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.regions import Region


class TraceLookups:
    """Host calls, operator nesting and name codes of one trace, built once."""

    def __init__(self, arrays: TimelineArrays, regions: Sequence[Region]) -> None:
        self.arrays = arrays
        self.regions = regions
        timeline = arrays.timeline
        host = timeline.host
        self.host_kind = host["kind"].to_numpy()
        self.host_name = host["name"].to_numpy()
        self.host_pid = host["pid"].to_numpy(np.int64)
        self.host_tid = host["tid"].to_numpy(np.int64)
        self.host_ext = host["external_id"].to_numpy(np.int64)
        interesting = host["kind"].isin(("sync", "malloc", "free")).to_numpy()
        self.special_rows = np.flatnonzero(interesting)
        ops = timeline.cpu_ops
        self.op_name = ops["name"].to_numpy()
        self.op_pid = ops["pid"].to_numpy(np.int64)
        self.op_tid = ops["tid"].to_numpy(np.int64)
        self.op_start = ops["start_ns"].to_numpy(np.int64)
        self.op_end = ops["end_ns"].to_numpy(np.int64)
        self.op_depth = ops["depth"].to_numpy(np.int64)
        self.op_shapes = ops["input_shapes"].to_numpy()
        ext = ops["external_id"].to_numpy(np.int64)
        has_ext = ext >= 0
        self._op_by_ext = pd.Series(np.flatnonzero(has_ext), index=ext[has_ext])
        self._op_by_ext = self._op_by_ext[~self._op_by_ext.index.duplicated()]
        top = np.flatnonzero(self.op_depth == 0)
        order = np.lexsort((self.op_start[top], self.op_tid[top], self.op_pid[top]))
        top = top[order]
        # Outermost operators per thread, as (starts, ends, names) sorted by start.
        self._top_by_thread = {
            key: (self.op_start[top[a:b]], self.op_end[top[a:b]], self.op_name[top[a:b]])
            for key, (a, b) in _runs(self.op_pid[top], self.op_tid[top]).items()
        }
        self._kernel_codes: IntArray | None = None
        self._kernel_names: Any = None
        self._shaped = np.flatnonzero(
            (self.op_depth == 0) & (self.op_shapes != "") & (self.op_shapes != "[]")
        )
        # (name, shapes) pairs as one integer code each: hashing, no string building.
        name_codes, self._shape_names = pd.factorize(ops["name"].iloc[self._shaped])
        shape_codes, self._shape_texts = pd.factorize(ops["input_shapes"].iloc[self._shaped])
        self._shape_codes = np.asarray(name_codes, np.int64) * max(
            len(self._shape_texts), 1
        ) + np.asarray(shape_codes, np.int64)
        special_ops = ops["name"].isin(HOST_SYNC_OPS | DATA_DEPENDENT_OPS).to_numpy()
        self.special_ops = np.flatnonzero(special_ops)

    def outer_op(self, pid: int, tid: int, t: int) -> str:
        """The outermost operator running on the thread at time ``t`` (``""`` if none)."""
        ops = self._top_by_thread.get((pid, tid))
        if ops is None:
            return ""
        starts, ends, names = ops
        i = int(np.searchsorted(starts, t, side="right")) - 1
        if i >= 0 and ends[i] > t:
            return str(names[i])
        return ""

    def kernel_codes(self) -> tuple[IntArray, Any]:
        """Every GPU activity's name as an integer code, and the names (computed once)."""
        if self._kernel_codes is None:
            codes, names = pd.factorize(self.arrays.timeline.gpu["name"])
            self._kernel_codes, self._kernel_names = np.asarray(codes, np.int64), names
        return self._kernel_codes, self._kernel_names

    def issuing_op(self, host_row: int) -> str:
        ext = int(self.host_ext[host_row])
        if ext < 0 or ext not in self._op_by_ext.index:
            return ""
        return str(self.op_name[int(self._op_by_ext[ext])])

    def enclosing_region(self, pid: int, tid: int, t: int) -> str:
        """The deepest region with an occurrence on the thread containing ``t``."""
        best, depth = "", -1
        for region in self.regions:
            if region.depth <= depth or region.source == "whole_trace":
                continue
            hit = (region.pid == pid) & (region.tid == tid)
            hit &= (region.start_ns <= t) & (region.end_ns > t)
            if hit.any():
                best, depth = region.name, region.depth
        return best


def _runs(pid: IntArray, tid: IntArray) -> dict[tuple[int, int], tuple[int, int]]:
    if len(pid) == 0:
        return {}
    change = np.ones(len(pid), bool)
    change[1:] = (pid[1:] != pid[:-1]) | (tid[1:] != tid[:-1])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], len(pid))
    return {(int(pid[a]), int(tid[a])): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}
