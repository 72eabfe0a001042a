"""One word per region — what limits it — and the numbers that justify the word.

The rule reads the region's GPU *window* (first activity start to last activity end, per
occurrence) and shares of it, each the median over occurrences, so one slow warm-up
occurrence cannot swing it. Shares of the window rather than of the profiled wall time:
the profiler slows the host (about 2× on launch-bound steps), not the GPU. First match wins:

1. ``idle`` — the region launched no GPU work.
2. ``already-graphed`` — at least :data:`GRAPHED_SHARE` of its activities come from CUDA
   graph launches: replay is already in use.
3. ``sync-bound`` — gaps where the host was blocked in a synchronization (or a blocking
   copy) fill at least :data:`SYNC_IDLE_SHARE` of the window and outweigh launch gaps; or
   the host spent at least :data:`HOST_SYNC_SHARE` of the region's wall time blocked in
   synchronizing calls and that wait is longer than the GPU work the region launched itself
   (a region that mostly waits, like an ``.item()`` check — not a step that merely ends in
   a synchronize while its own kernels run).
4. ``compute-bound`` — the GPU is busy for at least :data:`COMPUTE_BUSY_SHARE` of the window
   and each launch buys at least :data:`LAUNCH_COST_NS` of GPU time on average (busy time /
   activities: longer than the host needs to issue the next one, so the queue stays full —
   an average, not a median, so a few long GEMMs among many tiny kernels count).
5. ``launch-bound`` — gaps waiting on the host's next launch fill at least
   :data:`LAUNCH_IDLE_SHARE` of the window, or the GPU is busy for less than
   :data:`SHORT_BUSY_SHARE` of it while each launch buys less GPU time than
   :data:`LAUNCH_COST_NS` and the host is not running ahead (median queue depth at launch
   below :data:`QUEUED_AHEAD_DEPTH`) — unless at least :data:`LONG_GAP_SHARE` of those host gaps are
   longer than ``LONG_HOST_GAP_NS`` (200 µs): then the host was busy with work of its own
   (Python logic, data loading), which replay does not remove.
6. ``idle`` — the GPU is busy for less than :data:`IDLE_BUSY_SHARE` of the window for
   reasons other than launches (host work, dependencies, other work).
7. ``mixed`` — anything else: some launch gaps, some long kernels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from traceinspect.analysis.gaps import LONG_HOST_GAP_NS

Verdict = Literal["launch-bound", "compute-bound", "sync-bound", "mixed", "idle", "already-graphed"]

#: Share of a region's activities coming from graph launches above which it is graphed.
GRAPHED_SHARE: Final = 0.5
#: Share of the GPU window spent waiting on host synchronizations that makes a region
#: sync-bound: a fifth of the time is worth removing the sync for.
SYNC_IDLE_SHARE: Final = 0.2
#: Share of a region's wall time spent blocked in synchronizing calls that makes it
#: sync-bound even when its own GPU window is short (a region that mostly waits).
HOST_SYNC_SHARE: Final = 0.5
#: GPU busy share of the window above which the GPU, not the host, sets the pace.
COMPUTE_BUSY_SHARE: Final = 0.9
#: Share of the window spent waiting on the next launch that makes a region launch-bound.
LAUNCH_IDLE_SHARE: Final = 0.3
#: With activities shorter than the launch cost, a GPU busy for less than this share of the
#: window is starved by launches even where each gap is too short to attribute cleanly.
SHORT_BUSY_SHARE: Final = 0.6
#: Median activities in flight at each launch from which the host counts as running ahead
#: of the GPU (the queue holds work for several launch costs).
QUEUED_AHEAD_DEPTH: Final = 4
#: Unprofiled host cost of one eager PyTorch op launch (dispatcher + cudaLaunchKernel),
#: ns: activities shorter than this finish before the host can issue the next one.
LAUNCH_COST_NS: Final = 10_000
#: Share of the host-launch idle in long host gaps (:data:`~traceinspect.analysis.gaps.
#: LONG_HOST_GAP_NS`) above which the host was busy with its own work rather than launching.
LONG_GAP_SHARE: Final = 0.5
#: GPU busy share of the window below which the GPU is mostly idle.
IDLE_BUSY_SHARE: Final = 0.1


@dataclass(frozen=True)
class RegionShape:
    """What the verdict reads: medians over a region's occurrences (ns, shares 0..1)."""

    occurrences: int
    activities: float  # GPU activities launched per occurrence
    window_ns: float  # first activity start -> last activity end
    busy_share: float  # GPU busy / window
    idle_share: Mapping[str, float]  # idle by cause / window
    median_activity_ns: float  # over every activity of every occurrence
    #: GPU busy time per activity launched (busy / activities): what each launch buys.
    gpu_per_activity_ns: float
    graph_share: float  # activities from graph launches / all activities
    #: Share of the occurrence's wall time the host spent blocked in synchronizing calls.
    host_sync_share: float = 0.0
    #: Share of the window in ``host_launch`` gaps too long to be launch overhead.
    long_host_share: float = 0.0
    median_launch_call_ns: float | None = None  # host duration of the launch calls
    median_queue_depth: float | None = None  # activities in flight at each launch
    #: Median host wall time of an occurrence (0 when unknown).
    wall_ns: float = 0.0


def decide(
    shape: RegionShape, *, launch_cost_ns: float = LAUNCH_COST_NS
) -> tuple[Verdict, list[str]]:
    """The verdict and its evidence (short strings with the numbers).

    ``launch_cost_ns`` replaces :data:`LAUNCH_COST_NS` when a calibration measured it.
    """
    if shape.activities == 0:
        return "idle", ["launches no GPU work"]
    evidence = [
        f"GPU busy {shape.busy_share:.0%} of its {_us(shape.window_ns)} window",
        f"{_us(shape.gpu_per_activity_ns)} of GPU time per launch vs {_us(launch_cost_ns)}"
        " unprofiled launch cost",
        f"median activity {_us(shape.median_activity_ns)}"
        + (
            f", median launch call {_us(shape.median_launch_call_ns)} (profiled)"
            if shape.median_launch_call_ns is not None
            else ""
        ),
    ]
    idle = shape.idle_share
    evidence += [
        f"{cause} gaps {idle[cause]:.0%} of window"
        for cause in ("host_launch", "sync", "copy", "dependency", "other")
        if idle.get(cause, 0.0) >= 0.05
    ]
    if shape.median_queue_depth is not None:
        evidence.append(f"median queue depth at launch {shape.median_queue_depth:g}")
    if shape.graph_share >= GRAPHED_SHARE:
        return "already-graphed", [
            f"{shape.graph_share:.0%} of activities come from graph launches",
            *evidence,
        ]
    launch_idle = idle.get("host_launch", 0.0)
    sync_idle = idle.get("sync", 0.0)
    if shape.host_sync_share >= 0.05:
        evidence.append(f"host blocked in syncs {shape.host_sync_share:.0%} of wall")
    # Waiting in a sync only limits a region when the wait outweighs the GPU work the region
    # itself launched: a step that ends in a synchronize while its own kernels run is not
    # sync-bound; an `.item()` check that waits on earlier work is.
    waits_more_than_it_works = (
        shape.host_sync_share * shape.wall_ns > shape.busy_share * shape.window_ns
    )
    if (sync_idle >= SYNC_IDLE_SHARE and sync_idle >= launch_idle) or (
        shape.host_sync_share >= HOST_SYNC_SHARE and waits_more_than_it_works
    ):
        return "sync-bound", evidence
    short = shape.gpu_per_activity_ns < launch_cost_ns
    if shape.busy_share >= COMPUTE_BUSY_SHARE and not short:
        return "compute-bound", evidence
    host_work = shape.long_host_share >= LONG_GAP_SHARE * launch_idle and launch_idle > 0
    if host_work:
        evidence.append(
            f"{shape.long_host_share:.0%} of window in host gaps > {LONG_HOST_GAP_NS / 1000:g} µs"
            " (host work, not launch cost)"
        )
    # With many launches already queued, the host was ahead: short kernels are not waiting on it.
    ahead = (shape.median_queue_depth or 0.0) >= QUEUED_AHEAD_DEPTH
    if not host_work and (
        launch_idle >= LAUNCH_IDLE_SHARE
        or (shape.busy_share < SHORT_BUSY_SHARE and short and not ahead)
    ):
        return "launch-bound", evidence
    if shape.busy_share < IDLE_BUSY_SHARE:
        return "idle", evidence
    return "mixed", evidence


def _us(ns: float | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1000:,.1f} µs" if ns < 10_000_000 else f"{ns / 1e6:,.1f} ms"
