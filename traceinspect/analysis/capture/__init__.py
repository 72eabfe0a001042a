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

import numpy as np

from traceinspect.analysis.capture.blockers import (
    collective_blockers,
    group_events,
    sequence_blockers,
)
from traceinspect.analysis.capture.events import (
    copy_events,
    cpu_work_events,
    host_call_events,
    op_events,
)
from traceinspect.analysis.capture.lookups import TraceLookups
from traceinspect.analysis.capture.model import (
    CPU_WORK_GAP_NS,
    DATA_DEPENDENT_OPS,
    FIXES,
    HOST_SYNC_OPS,
    SEVERITY_ORDER,
    Blocker,
    CaptureReport,
    CaptureVerdict,
    Event,
    Severity,
    assign_occurrences,
)
from traceinspect.analysis.regions import Region

__all__ = [
    "CPU_WORK_GAP_NS",
    "DATA_DEPENDENT_OPS",
    "FIXES",
    "HOST_SYNC_OPS",
    "SEVERITY_ORDER",
    "Blocker",
    "CaptureChecker",
    "CaptureReport",
    "CaptureVerdict",
    "Severity",
    "TraceLookups",
    "assign_occurrences",
]


class CaptureChecker(TraceLookups):
    """The pre-flight of each region of one trace (:meth:`check`), over lookups built once."""

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

        events: list[Event] = []
        events += host_call_events(self, region, last_launch)
        events += op_events(self, region, last_launch)
        events += copy_events(self, region, occ, rows, last_launch)
        events += cpu_work_events(self, region, occ, rows)
        blockers = group_events(self, region, events)
        blockers += sequence_blockers(self, region)
        blockers += collective_blockers(self, rows)
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
