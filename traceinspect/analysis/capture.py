"""Capture-safety pre-flight: what would break or complicate ``torch.cuda.graph`` capture
of a region, read from what its occurrences did in eager mode.

Each finding is a :class:`Blocker` with a severity:

- ``breaks`` — the region cannot be captured as one graph: a host synchronization or a
  device-to-host copy *before* the region's last kernel launch (the host needs a GPU
  result to go on: ``.item()``, ``.cpu()``, ``.tolist()``, ``nonzero``, ``torch.cuda.
  synchronize()``), ops whose output shape depends on data (``nonzero``,
  ``masked_select``, ``unique``), or a kernel sequence that changes between occurrences
  (data-dependent control flow);
- ``change`` — capturable after a change, which the blocker names: allocations
  (``cudaMalloc``/``cudaFree``) in steady state, pageable host-to-device copies, input
  shapes that change between occurrences, a sync or device-to-host copy after the last
  launch (move it after the replay);
- ``note`` — capturable, but worth knowing: NCCL collectives, host-to-device copies from
  pinned memory (the graph re-reads the same host buffer), CPU work between launches (it
  will not run on replay), allocations in the first occurrence only (warm-up).

The verdict is ``not capturable`` with any ``breaks``, else ``capturable after changes``
with any ``change``, else ``capturable as-is``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pandas as pd

from traceinspect.analysis.arrays import TimelineArrays
from traceinspect.analysis.intervals import IntArray, covered_ns
from traceinspect.analysis.regions import Region

Severity = Literal["breaks", "change", "note"]
CaptureVerdict = Literal[
    "capturable as-is",
    "capturable after changes",
    "not capturable",
    "already graphed",
    "no GPU work",
]

#: Operators that copy a GPU value to the host and wait for it.
HOST_SYNC_OPS: Final = frozenset(
    {"aten::item", "aten::_local_scalar_dense", "aten::is_nonzero", "aten::equal"}
)
#: Operators whose output shape depends on the data (they synchronize to size the output).
DATA_DEPENDENT_OPS: Final = frozenset(
    {
        "aten::nonzero",
        "aten::nonzero_static",
        "aten::masked_select",
        "aten::unique",
        "aten::_unique2",
        "aten::unique_consecutive",
        "aten::unique_dim",
        "aten::repeat_interleave",
        "aten::bincount",
    }
)
#: Host time between two launches of one occurrence above which the host did work of its
#: own there (µs of Python / CPU compute), which a replayed graph would not repeat.
CPU_WORK_GAP_NS: Final = 100_000

SEVERITY_ORDER: Final = {"breaks": 0, "change": 1, "note": 2}


@dataclass(frozen=True)
class Blocker:
    kind: str
    severity: Severity
    #: One line: the op or API, how often, and where (occurrence, offset, region).
    what: str
    count: int
    fix: str = ""
    example: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CaptureReport:
    verdict: CaptureVerdict
    blockers: list[Blocker]

    @property
    def capturable(self) -> bool:
        return self.verdict not in ("not capturable", "no GPU work")


@dataclass(frozen=True)
class _Event:
    """One finding in one occurrence, before grouping."""

    kind: str
    severity: Severity
    label: str  # grouping key: the op or API that did it
    occurrence: int
    time_ns: int
    api: str = ""
    detail: str = ""


class CaptureChecker:
    """Reusable per-trace lookups for :meth:`check` (host calls, operator nesting)."""

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

    # -- lookups ---------------------------------------------------------------------------

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

    # -- the check -------------------------------------------------------------------------

    def check(self, region: Region, *, graphed: bool) -> CaptureReport:
        n_rows = sum(len(r) for r in region.rows)
        if n_rows == 0:
            return CaptureReport("no GPU work", [])
        if graphed:
            return CaptureReport("already graphed", [])
        arrays = self.arrays
        occ = np.repeat(np.arange(region.occurrences), [len(r) for r in region.rows])
        rows = np.concatenate(region.rows)
        # Last kernel launch of each occurrence: syncs after it are trailing, not blocking.
        launches = (arrays.launch_row[rows] >= 0) & (arrays.is_kernel[rows] | arrays.is_graph[rows])
        last_launch = np.full(region.occurrences, -1, np.int64)
        np.maximum.at(last_launch, occ[launches], arrays.launch_start[rows[launches]])

        events: list[_Event] = []
        events += self._host_call_events(region, last_launch)
        events += self._op_events(region, last_launch)
        events += self._copy_events(region, occ, rows, last_launch)
        events += self._cpu_work_events(region, occ, rows)
        blockers = self._group(region, events)
        blockers += self._sequence_blockers(region)
        blockers += self._collective_blockers(rows)
        blockers.sort(key=lambda b: (SEVERITY_ORDER[b.severity], -b.count, b.kind))
        severities = {b.severity for b in blockers}
        verdict: CaptureVerdict = (
            "not capturable"
            if "breaks" in severities
            else "capturable after changes"
            if "change" in severities
            else "capturable as-is"
        )
        return CaptureReport(verdict, blockers)

    def _assign(self, region: Region, pid: IntArray, tid: IntArray, t: IntArray) -> IntArray:
        return assign_occurrences(region, pid, tid, t)

    def _host_call_events(self, region: Region, last_launch: IntArray) -> list[_Event]:
        arrays = self.arrays
        rows = self.special_rows
        if len(rows) == 0:
            return []
        t = arrays.host_start[rows]
        occ = self._assign(region, self.host_pid[rows], self.host_tid[rows], t)
        events = []
        first_allocs: list[int] = []
        for h, o, when in zip(rows[occ >= 0], occ[occ >= 0], t[occ >= 0], strict=True):
            kind = str(self.host_kind[h])
            api = str(self.host_name[h])
            pid, tid = int(self.host_pid[h]), int(self.host_tid[h])
            op = self.outer_op(pid, tid, int(when)) or self.issuing_op(int(h)) or api
            if kind == "sync" and op in HOST_SYNC_OPS | DATA_DEPENDENT_OPS:
                continue  # reported once, as the operator
            if kind == "sync":
                before = int(when) < int(last_launch[o])
                events.append(
                    _Event(
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
                events.append(_Event("allocation", "change", api, int(o), int(when), api))
        # Allocations only in the first occurrence are the caching allocator warming up.
        if first_allocs and max(first_allocs) == 0 and region.occurrences > 1:
            events = [
                _Event("warmup_allocation", "note", e.label, e.occurrence, e.time_ns, e.api)
                if e.kind == "allocation"
                else e
                for e in events
            ]
        return events

    def _op_events(self, region: Region, last_launch: IntArray) -> list[_Event]:
        rows = self.special_ops
        if len(rows) == 0:
            return []
        t = self.op_start[rows]
        occ = self._assign(region, self.op_pid[rows], self.op_tid[rows], t)
        events = []
        for r, o, when in zip(rows[occ >= 0], occ[occ >= 0], t[occ >= 0], strict=True):
            name = str(self.op_name[r])
            pid, tid = int(self.op_pid[r]), int(self.op_tid[r])
            outer = self.outer_op(pid, tid, int(when)) or name
            if name in DATA_DEPENDENT_OPS:
                events.append(
                    _Event("data_dependent_shape", "breaks", name, int(o), int(when), "", outer)
                )
            elif self.op_depth[r] == 0 or outer == name:
                # Count each .item()-like call once, at its outermost op.
                before = int(when) < int(last_launch[o])
                events.append(
                    _Event(
                        "host_sync" if before else "trailing_sync",
                        "breaks" if before else "change",
                        name,
                        int(o),
                        int(when),
                    )
                )
        return events

    def _copy_events(
        self, region: Region, occ: IntArray, rows: IntArray, last_launch: IntArray
    ) -> list[_Event]:
        arrays = self.arrays
        gpu = arrays.timeline.gpu
        copies = np.flatnonzero(arrays.is_copy[rows])
        events: list[_Event] = []
        if len(copies) == 0:
            return events
        copy_kind = gpu["copy_kind"].to_numpy()
        host_memory = gpu["host_memory"].to_numpy()
        for i in copies:
            r, o = int(rows[i]), int(occ[i])
            t = int(arrays.launch_start[r]) if arrays.launch_row[r] >= 0 else int(arrays.start[r])
            pid, tid = int(arrays.pid[r]), int(arrays.tid[r])
            op = self.outer_op(pid, tid, t) or (
                self.issuing_op(int(arrays.launch_row[r])) if arrays.launch_row[r] >= 0 else ""
            )
            api = str(self.host_name[arrays.launch_row[r]]) if arrays.launch_row[r] >= 0 else ""
            if copy_kind[r] == "DtoH":
                if op in HOST_SYNC_OPS | DATA_DEPENDENT_OPS:
                    continue  # already reported as the op's host sync
                before = t < int(last_launch[o])
                events.append(
                    _Event(
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
                    _Event("pageable_copy", "change", op or "Memcpy HtoD (Pageable)", o, t, api)
                )
            else:
                events.append(_Event("host_to_device_copy", "note", op or "Memcpy HtoD", o, t, api))
        return events

    def _cpu_work_events(self, region: Region, occ: IntArray, rows: IntArray) -> list[_Event]:
        arrays = self.arrays
        has = arrays.launch_row[rows] >= 0
        if not has.any():
            return []
        # Unique launch calls per occurrence (a graph launch or memcpy may own many rows).
        frame = pd.DataFrame(
            {"occ": occ[has], "row": arrays.launch_row[rows[has]]}
        ).drop_duplicates()
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
        pids = self.host_pid[host_rows]
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
                pid, tid = int(self.host_pid[h]), int(self.host_tid[h])
                op = self.outer_op(pid, tid, int(start[i])) or str(self.host_name[h])
            events.append(
                _Event(
                    "cpu_work",
                    "note",
                    "host work between launches",
                    int(o[i]),
                    int(prev_end[i]),
                    detail=f"{gap[i] / 1000:,.0f} µs" + (f" before {op}" if op else ""),
                )
            )
        return events

    def _group(self, region: Region, events: list[_Event]) -> list[Blocker]:
        groups: dict[tuple[str, str], list[_Event]] = {}
        for event in events:
            groups.setdefault((event.kind, event.label), []).append(event)
        blockers = []
        for (kind, label), found in groups.items():
            first = found[0]
            occ_start = int(region.start_ns[first.occurrence])
            where = self.enclosing_region(
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

    def _sequence_blockers(self, region: Region) -> list[Blocker]:
        if region.occurrences < 2:
            return []
        blockers = []
        all_codes, uniques = self.kernel_codes()
        codes = [all_codes[r[self.arrays.is_kernel[r]]] for r in region.rows]
        change = _sequence_change([c.tobytes() for c in codes])
        if change is not None:
            occ, only_first = change
            ref = 1 if only_first else 0
            pos = _first_difference(codes[ref], codes[occ])
            other = str(uniques[codes[occ][pos]]) if pos < len(codes[occ]) else "(end)"
            severity: Severity = "note" if only_first else "breaks"
            kind = "warmup_kernel_sequence" if only_first else "kernel_sequence_changes"
            distinct = len({c.tobytes() for c in codes})
            what = (
                f"{distinct} different kernel sequences over {region.occurrences} occurrences; "
                f"occurrence {occ + 1} differs at kernel {pos + 1}: {_short(other)}"
            )
            blockers.append(Blocker(kind, severity, what, distinct, FIXES[kind], {}))
        shape_blocker = self._shape_blocker(region)
        if shape_blocker is not None:
            blockers.append(shape_blocker)
        return blockers

    def _shape_blocker(self, region: Region) -> Blocker | None:
        recorded = self._shaped
        if len(recorded) == 0:
            return None
        occ = self._assign(
            region, self.op_pid[recorded], self.op_tid[recorded], self.op_start[recorded]
        )
        mine = np.flatnonzero(occ >= 0)
        if len(mine) == 0:
            return None
        order = np.lexsort((self.op_start[recorded[mine]], occ[mine]))
        mine = mine[order]
        occ = occ[mine]
        codes = self._shape_codes[mine]
        counts = np.bincount(occ, minlength=region.occurrences)
        per_occ = np.split(codes.astype(np.int64), np.cumsum(counts)[:-1])
        change = _sequence_change([c.tobytes() for c in per_occ])
        if change is None:
            return None
        o, only_first = change
        if only_first:
            return None
        pos = _first_difference(per_occ[0], per_occ[o])
        shown = "(end)"
        if pos < len(per_occ[o]):
            name, shapes = divmod(int(per_occ[o][pos]), max(len(self._shape_texts), 1))
            shown = f"{self._shape_names[name]} {self._shape_texts[shapes]}"
        distinct = len({c.tobytes() for c in per_occ})
        what = (
            f"{distinct} different input-shape signatures over {region.occurrences} occurrences;"
            f" occurrence {o + 1} differs at op {pos + 1}: {_short(shown)}"
        )
        return Blocker("shapes_change", "change", what, distinct, FIXES["shapes_change"], {})

    def _collective_blockers(self, rows: IntArray) -> list[Blocker]:
        kernels = rows[self.arrays.is_kernel[rows]]
        if len(kernels) == 0:
            return []
        codes, names = self.kernel_codes()
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
        what = f"{count} collective kernels, e.g. {_short(nccl[0])}"
        return [Blocker("collective", "note", what, count, FIXES["collective"], {})]


FIXES: Final = {
    "host_sync": "the host waits for a GPU value mid-region: keep the value on the GPU "
    "(torch.where instead of if/.item()), or split the region at the sync",
    "trailing_sync": "capture stops before it: synchronize (or read the value) after replay()",
    "device_to_host_copy": "keep the tensor on the GPU, or split the region at the copy",
    "trailing_device_to_host_copy": "copy results to the host after replay()",
    "data_dependent_shape": "use fixed-size variants (nonzero_static, masks) or split the region",
    "allocation": "warm up before capture so the caching allocator holds the memory; avoid "
    "empty_cache() in the loop",
    "warmup_allocation": "run the warm-up iterations before capturing",
    "pageable_copy": "copy inputs into static device buffers before replay(), from pinned memory",
    "host_to_device_copy": "a captured copy re-reads the same host buffer on every replay: "
    "refresh that buffer, or copy before replay()",
    "cpu_work": "this host work will not run on replay: move it out of the captured region",
    "kernel_sequence_changes": "data-dependent control flow: capture one graph per branch "
    "or make the branch a GPU select",
    "warmup_kernel_sequence": "run the warm-up iterations before capturing",
    "shapes_change": "capture one graph per shape, or pad inputs to a few fixed shapes",
    "collective": "NCCL collectives capture (NCCL ≥ 2.9.6): warm the communicator up eagerly "
    "before capture, capture the same collectives in the same order on every rank, replay on "
    "all ranks together, and keep host waits (work.wait(), barrier()) out of the graph",
}


def assign_occurrences(region: Region, pid: IntArray, tid: IntArray, t: IntArray) -> IntArray:
    """Index of the occurrence of ``region`` whose interval holds time ``t`` on the thread
    ``(pid, tid)``, or -1. Occurrences on one thread never overlap."""
    out = np.full(len(t), -1, np.int64)
    if region.source == "whole_trace":
        inside = (t >= region.start_ns[0]) & (t <= region.end_ns[0])
        out[inside] = 0
        return out
    thread = region.pid * (1 << 32) + region.tid
    key = pid * (1 << 32) + tid
    for k in np.unique(thread):
        occ = np.flatnonzero(thread == k)  # sorted by start
        mine = np.flatnonzero(key == k)
        if len(mine) == 0:
            continue
        i = np.searchsorted(region.start_ns[occ], t[mine], side="right") - 1
        ok = i >= 0
        safe = np.where(ok, i, 0)
        ok &= t[mine] < region.end_ns[occ[safe]]
        out[mine[ok]] = occ[safe[ok]]
    return out


def _runs(pid: IntArray, tid: IntArray) -> dict[tuple[int, int], tuple[int, int]]:
    if len(pid) == 0:
        return {}
    change = np.ones(len(pid), bool)
    change[1:] = (pid[1:] != pid[:-1]) | (tid[1:] != tid[:-1])
    starts = np.flatnonzero(change)
    ends = np.append(starts[1:], len(pid))
    return {(int(pid[a]), int(tid[a])): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}


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


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
