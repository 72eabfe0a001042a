"""The capture pre-flight's vocabulary: severities and verdicts, :class:`Blocker` and
:class:`CaptureReport` (what analysis results carry), :class:`Event` (one finding in one
occurrence, before grouping), the operators that synchronize or size their output from data,
the fix named for each blocker kind, and which occurrence a host time falls in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np

from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.regions import Region

Severity = Literal["breaks", "change", "note"]
CaptureVerdict = Literal[
    "capturable as-is",
    "capturable after changes",
    "not capturable",
    "already graphed",
    "no GPU work",
]

SEVERITY_ORDER: Final = {"breaks": 0, "change": 1, "note": 2}

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
class Event:
    """One finding in one occurrence, before grouping."""

    kind: str
    severity: Severity
    label: str  # grouping key: the op or API that did it
    occurrence: int
    time_ns: int
    api: str = ""
    detail: str = ""


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


def short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
