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
   a synchronize while its own kernels run), which kept the GPU busy for less than
   :data:`COMPUTE_BUSY_SHARE` of the wall time.
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

``communication-bound`` comes before ``compute-bound``: at least :data:`COLLECTIVE_SHARE`
of the GPU busy time is collective kernels (NCCL/RCCL), which mostly wait for other ranks,
unless gaps waiting on the host fill :data:`COLLECTIVE_HOST_IDLE_SHARE` of the window.

The profiled timeline is not the run users see: the profiler inflates every launch, so a
step that keeps the GPU fed without it can look launch-bound under it. When the replay
estimate ran, the busy and host-launch shares come from its simulation of the unprofiled
eager run (:mod:`traceinspect.analysis.estimate.eager`) and the profiled ones are kept as
evidence — the long host gaps of rule 5 too: the profiler stretches every host gap (Python
stacks most), so they are weighed against the launch gaps in the same simulated timeline;
and the verdict must agree with the predicted saving (:func:`agree`): never
``launch-bound`` below :data:`LAUNCH_BOUND_MIN_SAVING`, never ``compute-bound`` above
:data:`COMPUTE_BOUND_MAX_SAVING`, never ``mixed`` from :data:`MIXED_MAX_SAVING`. An ``idle``
region on the host's own work stays ``idle``: its evidence gives the saving with that work
skipped (the prediction) and kept (:func:`host_work_kept_saving`), and its range reaches the
latter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from traceinspect.analysis.estimate.eager import LONG_HOST_GAP_NS

Verdict = Literal[
    "launch-bound",
    "compute-bound",
    "communication-bound",
    "sync-bound",
    "mixed",
    "idle",
    "already-graphed",
]

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
#: The same threshold read on the simulated unprofiled run: without the profiler's inflation
#: the gaps are shorter, and a fifth of the window waiting on launches is what replay
#: removes (the H200 `mixed` step: 22 % simulated, replay measured 24 % faster).
UNPROFILED_LAUNCH_IDLE_SHARE: Final = 0.2
#: With activities shorter than the launch cost, a GPU busy for less than this share of the
#: window is starved by launches even where each gap is too short to attribute cleanly.
SHORT_BUSY_SHARE: Final = 0.6
#: Median activities in flight at each launch from which the host counts as running ahead
#: of the GPU (the queue holds work for several launch costs).
QUEUED_AHEAD_DEPTH: Final = 4
#: Unprofiled host cost of one eager PyTorch op launch (dispatcher + cudaLaunchKernel),
#: ns: activities shorter than this finish before the host can issue the next one.
LAUNCH_COST_NS: Final = 10_000
#: Share of the host-launch idle in long host gaps (:data:`~traceinspect.analysis.estimate.
#: eager.LONG_HOST_GAP_NS`) above which the host was busy with its own work rather than
#: launching; read in the simulated unprofiled run when there is one.
LONG_GAP_SHARE: Final = 0.5
#: Shares of the window below this are left out of the evidence (noise, not a cause).
MENTIONED_SHARE: Final = 0.05
#: GPU busy share of the window below which the GPU is mostly idle.
IDLE_BUSY_SHARE: Final = 0.1
#: Share of the region's GPU busy time in collective (NCCL/RCCL) kernels from which it is
#: communication-bound: a collective kernel's time is mostly waiting for the other ranks.
COLLECTIVE_SHARE: Final = 0.5
#: ... unless gaps waiting on the host's launches fill at least this share of the window
#: (simulated where the estimate ran): then the host sets its pace, not the other ranks.
#: TorchRec's sparse-data distribution (HTA's trace) read communication-bound with its GPU
#: busy 6 % of a simulated 153.6 ms window, host gaps filling the other 94 %, and a
#: predicted saving of 94 %. A region whose GPU waits on another stream's collective
#: (dependency gaps) stays communication-bound.
COLLECTIVE_HOST_IDLE_SHARE: Final = 0.5
#: A ``launch-bound`` region must be predicted to save at least this share of its eager
#: time by replay; below, the verdict is ``mixed`` and the evidence says why.
LAUNCH_BOUND_MIN_SAVING: Final = 0.10
#: A ``compute-bound`` region cannot be predicted to save more than this share; above, the
#: host set the pace after all: ``launch-bound``.
COMPUTE_BOUND_MAX_SAVING: Final = 0.25
#: A ``mixed`` region (neither the host's gaps nor the GPU's work dominate its window)
#: predicted to save at least this share reads ``launch-bound``: the saving replay must bring
#: for the validation to call a step launch-bound (``tests/conftest.py``). holdout10's EMA
#: update beside GEMMs on a side stream reads mixed at 24-26 % predicted; replay saved 37 %.
MIXED_MAX_SAVING: Final = 0.20


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
    #: Share of the GPU busy time in collective (NCCL/RCCL) kernels.
    collective_share: float = 0.0
    #: Share of the window in ``other`` gaps while the device ran work outside the region
    #: (another region, thread, process or stream: ``outside_work``).
    outside_work_share: float = 0.0


class Unprofiled(Protocol):
    """The simulated unprofiled eager run the verdict reads
    (:class:`traceinspect.analysis.estimate.UnprofiledShape`)."""

    @property
    def window_ns(self) -> int: ...
    @property
    def busy_share(self) -> float: ...
    @property
    def idle_share(self) -> Mapping[str, float]: ...
    @property
    def long_host_share(self) -> float: ...


class Saving(Protocol):
    """What the verdict checks itself against (:class:`traceinspect.analysis.estimate.
    RegionEstimate`)."""

    @property
    def saving_frac(self) -> float: ...
    @property
    def eager_ns(self) -> int: ...
    @property
    def graphed_ns(self) -> int: ...
    @property
    def eager_source(self) -> str: ...
    @property
    def parts(self) -> Mapping[str, int]: ...


def decide(
    shape: RegionShape,
    *,
    launch_cost_ns: float = LAUNCH_COST_NS,
    unprofiled: Unprofiled | None = None,
    saving: Saving | None = None,
) -> tuple[Verdict, list[str]]:
    """The verdict and its evidence (short strings with the numbers).

    ``launch_cost_ns`` replaces :data:`LAUNCH_COST_NS` when a calibration measured it.
    ``unprofiled``, the simulated run without the profiler, replaces the profiled
    timeline's busy and host-launch shares (the profiled ones stay in the evidence);
    ``saving``, the replay estimate, must agree with the verdict (:func:`agree`).
    """
    verdict, evidence = _rules(shape, launch_cost_ns, unprofiled)
    if saving is None:
        return verdict, evidence
    return agree(verdict, evidence, shape, unprofiled, saving)


def _rules(
    shape: RegionShape, launch_cost_ns: float, unprofiled: Unprofiled | None
) -> tuple[Verdict, list[str]]:
    if shape.activities == 0:
        return "idle", ["launches no GPU work"]
    prefix = "profiled trace: " if unprofiled is not None else ""
    evidence = [
        f"{prefix}GPU busy {shape.busy_share:.0%} of its {_us(shape.window_ns)} window",
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
        f"{prefix}{cause} gaps {idle[cause]:.0%} of window"
        + (_outside_work(shape) if cause == "other" else "")
        for cause in ("host_launch", "sync", "copy", "dependency", "other")
        if idle.get(cause, 0.0) >= MENTIONED_SHARE
    ]
    if shape.median_queue_depth is not None:
        evidence.append(f"median queue depth at launch {shape.median_queue_depth:g}")
    if shape.graph_share >= GRAPHED_SHARE:
        return "already-graphed", [
            f"{shape.graph_share:.0%} of activities come from graph launches",
            *evidence,
        ]
    busy_share = shape.busy_share
    sync_idle = idle.get("sync", 0.0)
    launch_idle = idle.get("host_launch", 0.0)
    launch_idle_share = LAUNCH_IDLE_SHARE
    if unprofiled is not None:
        launch_idle_share = UNPROFILED_LAUNCH_IDLE_SHARE
        busy_share = unprofiled.busy_share
        launch_idle = unprofiled.idle_share.get("host_launch", 0.0)
        unprofiled_sync = unprofiled.idle_share.get("sync", 0.0)
        evidence.insert(
            0,
            f"without the profiler (simulated): GPU busy {busy_share:.0%} of its"
            f" {_us(unprofiled.window_ns)} window, host_launch gaps {launch_idle:.0%}"
            + (f", sync gaps {unprofiled_sync:.0%}" if unprofiled_sync >= MENTIONED_SHARE else ""),
        )
    if shape.host_sync_share >= MENTIONED_SHARE:
        evidence.append(f"host blocked in syncs {shape.host_sync_share:.0%} of wall")
    if shape.collective_share >= MENTIONED_SHARE:
        evidence.append(f"collective kernels {shape.collective_share:.0%} of GPU busy time")
    # Waiting in a sync only limits a region when the wait outweighs the GPU work the region
    # itself launched: a step that ends in a synchronize while its own kernels run is not
    # sync-bound; an `.item()` check that waits on earlier work is. Nor is a region whose
    # own kernels kept the GPU busy for nearly all of its wall time, whatever the host
    # waited for: the GPU set its pace (an FSDP step whose host ran ahead and then waited
    # 100 % of the step's 29.3 ms, its GPU busy 99 % of it, read sync-bound).
    own_work_ns = shape.busy_share * shape.window_ns
    waits_more_than_it_works = (
        shape.host_sync_share * shape.wall_ns > own_work_ns
        and own_work_ns < COMPUTE_BUSY_SHARE * shape.wall_ns
    )
    # A sync is a real wait with or without the profiler: the profiled shares decide it.
    profiled_launch_idle = idle.get("host_launch", 0.0)
    if (sync_idle >= SYNC_IDLE_SHARE and sync_idle >= profiled_launch_idle) or (
        shape.host_sync_share >= HOST_SYNC_SHARE and waits_more_than_it_works
    ):
        return "sync-bound", evidence
    if shape.collective_share >= COLLECTIVE_SHARE and launch_idle < COLLECTIVE_HOST_IDLE_SHARE:
        return "communication-bound", evidence
    short = shape.gpu_per_activity_ns < launch_cost_ns
    if busy_share >= COMPUTE_BUSY_SHARE and not short:
        return "compute-bound", evidence
    # Long host gaps are read in the same timeline as the launch gaps they are weighed
    # against: the profiler stretches every host gap (with_stack most), so a profiled gap
    # of 400 µs can be a 150 µs stretch of launches without it.
    long_host = shape.long_host_share if unprofiled is None else unprofiled.long_host_share
    host_work = _host_work_dominates(long_host, launch_idle)
    evidence += _long_gap_evidence(shape, unprofiled, host_work)
    # With many launches already queued, the host was ahead: short kernels are not waiting on it.
    ahead = (shape.median_queue_depth or 0.0) >= QUEUED_AHEAD_DEPTH
    if not host_work and (
        launch_idle >= launch_idle_share or (busy_share < SHORT_BUSY_SHARE and short and not ahead)
    ):
        return "launch-bound", evidence
    if busy_share < IDLE_BUSY_SHARE:
        return "idle", evidence
    return "mixed", evidence


def _host_work_dominates(long_host: float, launch_idle: float) -> bool:
    """Whether the host's gaps longer than 200 µs are at least :data:`LONG_GAP_SHARE` of
    its launch gaps: the host busy with work of its own, not with launching (rule 5)."""
    return long_host >= LONG_GAP_SHARE * launch_idle and launch_idle > 0


def host_work_kept_saving(saving: Saving, unprofiled: Unprofiled | None) -> float | None:
    """What replay saves if the host's own work between launches stays in the step: the
    simulated run's host gaps over 200 µs, where they outweigh its launch gaps (rule 5), run
    before or after the replay, not beside it; None where they do not. The prediction itself
    has replay skip them, as it skips the Python that drives the kernels (an AdamW step
    over many small tensors: 40 % of its simulated window in such gaps, predicted 92 %
    saved, measured 89 %); work whose results the step needs (data loading, CPU math)
    would stay."""
    if unprofiled is None or saving.eager_ns <= 0:
        return None
    launch_idle = unprofiled.idle_share.get("host_launch", 0.0)
    if not _host_work_dominates(unprofiled.long_host_share, launch_idle):
        return None
    kept = unprofiled.long_host_share * unprofiled.window_ns
    return 1.0 - (saving.graphed_ns + kept) / saving.eager_ns


def _outside_work(shape: RegionShape) -> str:
    """What the ``other`` gaps were, where the device was busy with other work in them."""
    if shape.outside_work_share < MENTIONED_SHARE:
        return ""
    return (
        f" (the device busy with work outside the region {shape.outside_work_share:.0%}:"
        " another region, thread, process or stream)"
    )


def _long_gap_evidence(
    shape: RegionShape, unprofiled: Unprofiled | None, host_work: bool
) -> list[str]:
    """What the long host gaps say: the profiled share, and the simulated one beside it."""
    long_gap = f"host gaps > {LONG_HOST_GAP_NS / 1000:g} µs"
    why = " (host work, not launch cost)" if host_work else ""
    profiled = shape.long_host_share
    if unprofiled is None:
        return [f"{profiled:.0%} of window in {long_gap}{why}"] if host_work else []
    simulated = unprofiled.long_host_share
    if profiled >= MENTIONED_SHARE:
        return [
            f"profiled trace: {profiled:.0%} of window in {long_gap},"
            f" {simulated:.0%} without the profiler (simulated){why}"
        ]
    if simulated >= MENTIONED_SHARE or host_work:
        return [f"without the profiler (simulated): {simulated:.0%} of window in {long_gap}{why}"]
    return []


def agree(
    verdict: Verdict,
    evidence: list[str],
    shape: RegionShape,
    unprofiled: Unprofiled | None,
    saving: Saving,
) -> tuple[Verdict, list[str]]:
    """The verdict made to agree with the saving replay is predicted to bring: a region
    predicted to save less than :data:`LAUNCH_BOUND_MIN_SAVING` is not ``launch-bound``
    (``mixed``), a ``compute-bound`` one predicted to save more than
    :data:`COMPUTE_BOUND_MAX_SAVING` and a ``mixed`` one predicted to save at least
    :data:`MIXED_MAX_SAVING` are ``launch-bound``; the evidence says why the views differ."""
    frac = saving.saving_frac
    parts = saving.parts
    graphed = (
        f"replay predicted at {_us(saving.graphed_ns)} (GPU work {_us(parts.get('gpu_work'))},"
        f" node overhead {_us(parts.get('node_overhead'))}) against eager"
        f" {_us(saving.eager_ns)} ({saving.eager_source})"
    )
    launch_idle = shape.idle_share.get("host_launch", 0.0)
    if verdict == "launch-bound" and frac < LAUNCH_BOUND_MIN_SAVING:
        why = (
            "without the profiler's inflation the host keeps ahead of the GPU"
            if unprofiled is not None and unprofiled.idle_share.get("host_launch", 0.0) < 0.1
            else "what replay removes (launch gaps) is paid back in per-node and launch costs"
        )
        return "mixed", [
            f"looks launch-bound (host_launch gaps {launch_idle:.0%} of the profiled window),"
            f" yet replay would save only {frac:.0%}: {why}; {graphed}",
            *evidence,
        ]
    if (verdict == "compute-bound" and frac > COMPUTE_BOUND_MAX_SAVING) or (
        verdict == "mixed" and frac >= MIXED_MAX_SAVING
    ):
        looks = (
            f"the GPU looks busy ({shape.busy_share:.0%} of the profiled window), yet replay"
            if verdict == "compute-bound"
            else "neither the host's gaps nor the GPU's work dominate the window, yet replay"
        )
        return "launch-bound", [
            f"{looks} would save {frac:.0%}: the eager run is longer than its GPU work, the"
            f" host sets the pace; {graphed}",
            *evidence,
        ]
    kept = host_work_kept_saving(saving, unprofiled) if verdict == "idle" else None
    if kept is not None and unprofiled is not None and frac >= MIXED_MAX_SAVING:
        return "idle", [
            f"the GPU idles on the host's own work ({unprofiled.long_host_share:.0%} of the"
            f" simulated window in host gaps over {LONG_HOST_GAP_NS / 1000:g} µs), yet replay"
            f" would save {frac:.0%}: so much if replay may skip that work (code that only"
            f" drives these kernels), about {kept:.0%} if the step needs what it"
            f" computes (data loading, CPU math), which then stays; {graphed}",
            *evidence,
        ]
    return verdict, evidence


def _us(ns: float | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1000:,.1f} µs" if ns < 10_000_000 else f"{ns / 1e6:,.1f} ms"
