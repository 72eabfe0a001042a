"""The decision the whole exercise is for: enable CUDA graphs here, or not, and why.

For a region of a trace (:func:`decide_region`) and for a graph candidate measured by
``traceinspect profile`` (:func:`decide_candidate`), one :class:`GraphDecision`: the verdict
and the figures behind it — the saving per step or request, the capture cost and how many
requests repay it, the graph memory of the bucket set, the share of requests that fall
back to eager — each marked ``measured``, ``estimated`` or ``unknown``. A trace tells the
saving (estimated by the replay model) and whether capture would work; it cannot tell what
capture costs or how much memory the graphs hold, so those stay unknown until ``profile``
measures them. Nothing here prints, reads files or looks at the environment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from traceinspect.analysis.estimate import RegionEstimate

if TYPE_CHECKING:
    from traceinspect.analysis.job import JobEstimate

#: A saving below this share of the step is not worth graphs: it is within the run-to-run
#: spread of eager step latency (bucket picking treats 2 % as a tie; eager p50 drifted by
#: more than 5 % between rounds of one run on the H200 validation workloads).
MIN_SAVING_FRAC: Final = 0.05
#: A region whose replay saves less than this per occurrence is not worth a graph of its own,
#: unless its occurrences add up to MIN_SAVING_FRAC of the step it sits in: it is less than
#: one graph launch takes, cudaGraphLaunch to the graph's first node on the GPU (9.3 µs on
#: the H200: ``graph_launch_latency_ns`` of calibration/nvidia-h200.json), the size of the
#: replay model's own per-graph terms (launch, completion) and of their error, while the
#: capture is paid all the same (1.7-17 ms and 2 MiB of graph pool or more for each sample
#: workload's step: sample_traces/latencies.json).
MIN_SAVING_NS: Final = 9_266

Source = Literal["measured", "estimated", "unknown"]
Choice = Literal[
    "enable",
    "enable after changes",
    "keep graphs",
    "do not enable",
    "undecided",
]

_MIB: Final = 2**20
_PROFILE_HINT: Final = "`traceinspect profile` measures it"
#: Why an ``idle`` region that launched GPU work gets no estimate: what keeps its GPU idle
#: (host work of its own between launches, another thread's or stream's work) is not launch
#: cost, and would not go away with replay.
_IDLE_REASON: Final = (
    "its GPU idles most of the window on what replay does not remove (host work between "
    "launches, or work outside the region; see its evidence): no saving estimated"
)


@dataclass(frozen=True)
class Figure:
    """A number with where it came from; ``value`` is None when ``source`` is unknown."""

    value: float | None
    source: Source
    low: float | None = None
    high: float | None = None

    @staticmethod
    def unknown() -> Figure:
        return Figure(None, "unknown")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": _round(self.value), "source": self.source}
        if self.low is not None or self.high is not None:
            out.update(low=_round(self.low), high=_round(self.high))
        return out


@dataclass(frozen=True)
class GraphDecision:
    """Enable graphs for ``subject`` or not, with the reasons and the figures behind them.

    ``saving_us``/``saving_frac`` are per step for a region, per request for a candidate;
    ``repay_requests`` is the capture cost over the saving per request (steps for a region).
    """

    subject: str
    scope: Literal["region", "candidate"]
    choice: Choice
    reasons: tuple[str, ...]
    saving_us: Figure = field(default_factory=Figure.unknown)
    saving_frac: Figure = field(default_factory=Figure.unknown)
    capture_ms: Figure = field(default_factory=Figure.unknown)
    repay_requests: Figure = field(default_factory=Figure.unknown)
    graph_memory_mib: Figure = field(default_factory=Figure.unknown)
    fallback_share: Figure = field(default_factory=Figure.unknown)
    padding_share: Figure = field(default_factory=Figure.unknown)
    buckets: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "scope": self.scope,
            "choice": self.choice,
            "reasons": list(self.reasons),
            "saving_us": self.saving_us.to_json(),
            "saving_frac": self.saving_frac.to_json(),
            "capture_ms": self.capture_ms.to_json(),
            "repay_requests": self.repay_requests.to_json(),
            "graph_memory_mib": self.graph_memory_mib.to_json(),
            "fallback_share": self.fallback_share.to_json(),
            "padding_share": self.padding_share.to_json(),
            "buckets": list(self.buckets),
        }


# ----------------------------------------------------------------------------------- regions


@dataclass(frozen=True)
class EnclosingStep:
    """The step a region sits in (for the step itself: itself): its name, its eager time
    per occurrence and how many of the region's occurrences one step holds (those of the
    trace inside a step occurrence, over the step's occurrences)."""

    name: str
    eager_ns: float
    occurrences_per_step: float

    def share(self, saving_ns: float) -> float:
        """What a saving of ``saving_ns`` per region occurrence is of one step."""
        return self.occurrences_per_step * saving_ns / self.eager_ns if self.eager_ns > 0 else 0.0


def decide_region(
    name: str,
    *,
    verdict: str,
    capture_verdict: str,
    blockers: Sequence[tuple[str, str]] = (),
    estimate: RegionEstimate | None,
    step: EnclosingStep | None = None,
    job: JobEstimate | None = None,
) -> GraphDecision:
    """The decision for one region of a trace.

    ``blockers`` are the capture pre-flight's ``(severity, kind)`` pairs. The saving is the
    replay estimate's (its eager side measured when ``--eager-us`` was given); capture cost,
    graph memory and fallback share are unknown from a trace. ``step``, where known, is the
    step the region sits in: a saving per occurrence under :data:`MIN_SAVING_NS` is still
    worth a graph when the region's occurrences add up to :data:`MIN_SAVING_FRAC` of it.
    ``job``, where the region is its process's step in a trace whose processes' steps are
    joined by collectives, is the job replayed together
    (:func:`~traceinspect.analysis.job.job_estimate`): said beside the region's own saving,
    which keeps its collectives' waits as traced.
    """
    unknowns = (
        f"capture cost and graph memory: unknown from a trace ({_PROFILE_HINT}); "
        "fallback share: unknown (a trace holds no request mix)"
    )
    if verdict == "already-graphed" or capture_verdict == "already graphed":
        return GraphDecision(
            name, "region", "keep graphs", ("its GPU work already runs from CUDA graphs",)
        )
    if estimate is None:
        if capture_verdict == "no GPU work":
            return GraphDecision(name, "region", "do not enable", ("no GPU work to replay",))
        if verdict == "idle":
            return GraphDecision(name, "region", "do not enable", (_IDLE_REASON,))
        return GraphDecision(name, "region", "undecided", ("no replay estimate", unknowns))
    saving_us = Figure(
        estimate.saving_ns / 1000,
        "estimated",
        low=estimate.saving_low_frac * estimate.eager_ns / 1000,
        high=estimate.saving_high_frac * estimate.eager_ns / 1000,
    )
    saving_frac = Figure(
        estimate.saving_frac,
        "estimated",
        low=estimate.saving_low_frac,
        high=estimate.saving_high_frac,
    )
    eager_said = {
        "measured": "eager time measured (--eager-us)",
        # Nsight Systems: its own cost stays in the host's time (0.99-2.14x the unprofiled
        # step on the bundled exports, never under: README, what the model gets wrong).
        "trace": "eager time as traced, the tracer's own cost kept: the saving may read high",
    }.get(estimate.eager_source, "eager time estimated from the profiled trace")
    low, high, mid = estimate.saving_low_frac, estimate.saving_high_frac, estimate.saving_frac
    saving_said = (
        f"replay would save {_us(estimate.saving_ns / 1000)} per occurrence ({mid:.0%}, "
        f"range {low:.0%} to {high:.0%}; {eager_said})"
    )
    reasons = [saving_said]
    undecided = ""  # why, where most occurrences save too little, each against its own run
    step_share = step.share(estimate.saving_ns) if step is not None else None
    if mid < MIN_SAVING_FRAC:
        reasons[0] += f": below {MIN_SAVING_FRAC:.0%}"
        choice: Choice = "do not enable"
    elif estimate.saving_ns < MIN_SAVING_NS and (
        step_share is None or step_share < MIN_SAVING_FRAC
    ):
        reasons.insert(0, _not_worth_a_graph(estimate.saving_ns, step, step_share))
        choice = "do not enable"
    else:
        if estimate.saving_ns < MIN_SAVING_NS and step is not None and step_share is not None:
            reasons.append(
                f"under one graph launch ({_us(MIN_SAVING_NS / 1000)}) per occurrence, but "
                f"{_per_step(step, estimate.saving_ns, step_share)}"
            )
        if verdict == "idle":
            reasons.append(
                "its GPU idles on the host's own work between launches: the saving holds if "
                "replay may skip that work (see the evidence); confirm by measuring both "
                "modes (`traceinspect profile`, or pass --eager-us)"
            )
        elif low < MIN_SAVING_FRAC:
            reasons.append(
                f"the range reaches {low:.0%}: confirm by measuring both modes "
                "(`traceinspect profile`, or pass --eager-us)"
            )
            if low < -1.0:
                # A loss larger than the whole eager time is no one occurrence's: the
                # occurrences differ (a collective that waits on other ranks).
                waits = (
                    " (its collectives wait on other ranks)"
                    if verdict == "communication-bound"
                    else ""
                )
                reasons.append(
                    f"the range is that wide because its occurrences differ{waits}: replay "
                    f"predicted at {_us(estimate.graphed_ns / 1000)} for the median one, up to "
                    f"{_us(estimate.high_ns / 1000)}, against an eager time of "
                    f"{_us(estimate.eager_ns / 1000)}"
                )
                mixed = _occurrences_said(estimate)
                if mixed is not None:
                    said, short = mixed
                    reasons.append(said)
                    if 2 * short > len(estimate.occurrence_saving_fracs):
                        undecided = (
                            f"undecided: most of its occurrences ({short} of "
                            f"{len(estimate.occurrence_saving_fracs)}) would save less than "
                            f"{MIN_SAVING_FRAC:.0%} each; measure both modes before enabling "
                            "(`traceinspect profile`, or pass --eager-us)"
                        )
        if estimate.streams > 1 and estimate.dependencies > 0:
            reasons.append(
                f"its graph runs kernels of {_streams_said(estimate)} side by side, which "
                "the estimate models least well (in validation, about one in eight of such "
                "steps replayed more than 10 % off the prediction, against 3 in 100 of the "
                "others)"
            )
        breaks = sorted({kind for severity, kind in blockers if severity == "breaks"})
        changes = sorted({kind for severity, kind in blockers if severity == "change"})
        if capture_verdict == "not capturable":
            split = (
                f"the estimate is for the {estimate.graphs} graphs it splits into at its syncs"
                if estimate.graphs > 1
                else "capture needs the code changed first"
            )
            reasons.append(
                f"not capturable as one graph ({', '.join(breaks) or 'see the pre-flight'}); "
                + split
            )
            choice = "enable after changes"
        elif capture_verdict == "capturable after changes":
            reasons.append(f"capture needs changes first: {', '.join(changes)}")
            choice = "enable after changes"
        else:
            reasons.append("capturable as-is")
            choice = "enable"
        if undecided:
            reasons.append(undecided)
            choice = "undecided"
    if job is not None:
        reasons.append(
            f"replayed together with the other processes' steps (each collective at its "
            f"wait-free time), the job's step takes {_us(job.graphed_ns / 1000)} against "
            f"{_us(job.eager_ns / 1000)} eager, {job.saving_frac:.0%} saved; this process's "
            "own estimate keeps its collectives' waits on the others as traced"
        )
    reasons.append(unknowns)
    return GraphDecision(
        name, "region", choice, tuple(reasons), saving_us=saving_us, saving_frac=saving_frac
    )


def _occurrences_said(estimate: RegionEstimate) -> tuple[str, int] | None:
    """What each occurrence would save against its own simulated eager run, and how many
    save less than :data:`MIN_SAVING_FRAC`; None with fewer than two occurrences."""
    spread = estimate.occurrence_saving_spread()
    if spread is None:
        return None
    p10, _, p90 = spread
    count = len(estimate.occurrence_saving_fracs)
    saving = estimate.occurrences_saving(MIN_SAVING_FRAC)
    said = (
        f"each occurrence against its own eager run: replay saves {p10:.0%} to {p90:.0%} "
        f"(10th to 90th percentile), at least {MIN_SAVING_FRAC:.0%} on {saving} of {count}"
    )
    return said, count - saving


def _streams_said(estimate: RegionEstimate) -> str:
    """How many streams the graph spans, and how many of them a library's operator forked
    for itself (the program did not ask for those)."""
    said = f"{estimate.streams} streams"
    forked = estimate.forked_streams
    if forked <= 0:
        return said
    inside = " and ".join(estimate.forking_operators) or "one operator"
    which = "all of them" if forked >= estimate.streams else f"{forked} of them"
    return f"{said} ({which} forked inside {inside})"


def _not_worth_a_graph(
    saving_ns: float, step: EnclosingStep | None, step_share: float | None
) -> str:
    said = (
        f"not worth a graph: saves {_us(saving_ns / 1000)} per occurrence, less than one "
        f"graph launch's latency ({_us(MIN_SAVING_NS / 1000)})"
    )
    if step is None or step_share is None:
        return said + "; the step it sits in is unknown"
    return said + f"; {_per_step(step, saving_ns, step_share)}"


def _per_step(step: EnclosingStep, saving_ns: float, share: float) -> str:
    count = step.occurrences_per_step
    occurrences = f"{count:.3g} occurrence" + ("s a step save" if count != 1 else " a step saves")
    return (
        f"its {occurrences} {_us(count * saving_ns / 1000)}, {share:.1%} of the step "
        f"({step.name}, {_us(step.eager_ns / 1000)})"
    )


# -------------------------------------------------------------------------------- candidates


def decide_candidate(
    candidate: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> GraphDecision:
    """The decision for one graph candidate of ``profile``'s results.

    ``candidate`` is its entry in ``results["candidates"]``, ``rows`` its rows (any order).
    Every figure here is measured without the profiler, except the fallback and padding
    shares, which follow from the request mix and the buckets (``estimated``).
    """
    name = str(candidate.get("name", "?"))
    ours = [r for r in rows if r.get("callable") == name and r.get("in_bucket_set", True)]
    graphed = [r for r in ours if r.get("mode") == "graphed"]
    eager = {r.get("bucket"): r for r in ours if r.get("mode") == "eager"}
    if candidate.get("status") == "cuda_unavailable" or not graphed:
        return GraphDecision(
            name, "candidate", "undecided", ("not measured: CUDA was not available",)
        )
    # Captured and replayed: ``incorrect`` rows too (their outputs differ from eager).
    captured = [r for r in graphed if r.get("status") in ("ok", "incorrect")]
    if not captured:
        kinds = sorted({str((r.get("failure") or {}).get("kind", "?")) for r in graphed})
        return GraphDecision(
            name,
            "candidate",
            "do not enable",
            (f"capture failed in every bucket ({', '.join(kinds)}): fix that first",),
        )
    wrong = [r for r in captured if r.get("correct") is False or r.get("status") == "incorrect"]
    if wrong:
        listed = ", ".join(
            f"{r.get('bucket')}"
            + (f", max |error| {r['max_abs_error']:.3g}" if r.get("max_abs_error") else "")
            for r in wrong
        )
        return GraphDecision(
            name,
            "candidate",
            "do not enable",
            (
                f"replayed outputs differ from eager (bucket {listed}): the graph baked in "
                "a value, misses an input copy, or draws random numbers (a replay draws "
                "others than the eager step it is compared with)",
            ),
        )
    recommendation = candidate.get("recommendation") or {}
    chosen = recommendation.get("chosen")
    eager_set = next(
        (s for s in recommendation.get("candidates", []) if not s.get("buckets")), None
    )
    pairs = [
        (int(eager[r["bucket"]]["host_p50_ns"]), int(r["host_p50_ns"]))
        for r in captured
        if r.get("host_p50_ns") is not None
        and eager.get(r.get("bucket")) is not None
        and eager[r["bucket"]].get("host_p50_ns") is not None
    ]
    reasons: list[str] = []
    if (
        chosen
        and eager_set
        and chosen.get("expected_latency_ns")
        and eager_set.get("expected_latency_ns")
    ):
        eager_ns = float(eager_set["expected_latency_ns"])
        saving_ns = eager_ns - float(chosen["expected_latency_ns"])
        buckets: tuple[int, ...] = tuple(int(b) for b in chosen.get("buckets", []))
        basis = f"per request of the mix, with buckets {', '.join(map(str, buckets))}"
    elif pairs:
        eager_ns, graphed_ns = _median([e for e, _ in pairs]), _median([g for _, g in pairs])
        saving_ns = eager_ns - graphed_ns
        buckets = tuple(int(r["bucket"]) for r in captured if r.get("bucket") is not None)
        basis = "per step (median over the captured buckets)"
    else:
        return GraphDecision(
            name, "candidate", "undecided", ("no eager/graphed latency pair was measured",)
        )
    frac = saving_ns / eager_ns if eager_ns > 0 else 0.0
    spread = _round_spread(captured, eager, buckets)
    saving_us = Figure(saving_ns / 1000, "measured")
    # (a request mix's saving weighs the buckets; the range stays around it)
    saving_frac = (
        Figure(frac, "measured")
        if spread is None
        else Figure(frac, "measured", low=min(spread.low, frac), high=max(spread.high, frac))
    )
    pools = [
        r.get("graph_pool_bytes") for r in captured if not buckets or r.get("bucket") in buckets
    ]
    captures = [r.get("capture_ns") for r in captured if not buckets or r.get("bucket") in buckets]
    memory = (
        Figure(float(chosen["graph_memory_bytes"]) / _MIB, "measured")
        if chosen and chosen.get("graph_memory_bytes") is not None
        else Figure(sum(p for p in pools if p is not None) / _MIB, "measured")
        if pools and all(p is not None for p in pools)
        else Figure.unknown()
    )
    capture_ms = (
        Figure(sum(c for c in captures if c is not None) / 1e6, "measured")
        if captures and all(c is not None for c in captures)
        else Figure.unknown()
    )
    repay = (
        Figure(math.ceil(capture_ms.value * 1e6 / saving_ns), "measured")
        if capture_ms.value is not None and saving_ns > 0
        else Figure.unknown()
    )
    fallback = Figure(float(chosen["fallback_share"]), "estimated") if chosen else Figure.unknown()
    padding = (
        Figure(float(chosen["padding_share"]), "estimated")
        if chosen and chosen.get("padding_share") is not None
        else Figure.unknown()
    )
    reasons.append(
        f"replay saves {_us(saving_ns / 1000)} ({frac:.0%}) {basis} (measured, unprofiled)"
    )
    if capture_ms.value is not None:
        repaid = f"; repaid after {int(repay.value):,} requests" if repay.value is not None else ""
        reasons.append(f"capture costs {capture_ms.value:,.1f} ms once{repaid}")
    if memory.value is not None:
        reasons.append(f"graph memory {memory.value:,.1f} MiB for the bucket set")
    if fallback.value is not None:
        reasons.append(
            f"{fallback.value:.0%} of requests fall back to eager"
            + (f", {padding.value:.0%} of graphed rows are padding" if padding.value else "")
        )
    choice: Choice = "enable"
    if frac < MIN_SAVING_FRAC:
        reasons.insert(0, f"the saving is below {MIN_SAVING_FRAC:.0%}")
        choice = "do not enable"
    if spread is not None and spread.high - spread.low > UNSTEADY_SAVING_POINTS:
        reasons.append(spread.reason(frac))
    unchecked = [
        e
        for b, e in eager.items()
        if e.get("repeatable") is False and (not buckets or b in buckets)
    ]
    if unchecked:
        worst = max(float(e.get("repeat_max_abs_error") or 0.0) for e in unchecked)
        reasons.append(
            f"outputs not checked: two eager calls on the same inputs differ (max |error| "
            f"{worst:.3g}), so the step changes its own state (parameters, buffers, optimizer "
            "moments) or runs nondeterministic kernels; compare the replay with eager yourself"
        )
    failed = [r for r in graphed if r.get("status") != "ok"]
    if failed and choice == "enable":
        reasons.append(
            "capture failed for bucket "
            + ", ".join(str(r.get("bucket")) for r in failed)
            + ": those sizes run eagerly"
        )
    return GraphDecision(
        name,
        "candidate",
        choice,
        tuple(reasons),
        saving_us=saving_us,
        saving_frac=saving_frac,
        capture_ms=capture_ms,
        repay_requests=repay,
        graph_memory_mib=memory,
        fallback_share=fallback,
        padding_share=padding,
        buckets=buckets,
    )


@dataclass(frozen=True)
class RoundSpread:
    """The measured saving's range over the timing rounds: the slowest graphed round against
    the fastest eager round (``low``) and the reverse (``high``), with the eager rounds'
    extent in each process that timed them (ns)."""

    low: float
    high: float
    eager_ns: tuple[int, int]
    eager_profiled_ns: tuple[int, int] | None

    def reason(self, frac: float) -> str:
        where = f"its rounds ran {_ms(self.eager_ns)}"
        if self.eager_profiled_ns is not None:
            where += f", {_ms(self.eager_profiled_ns)} in the process that profiled it"
        low_end = (
            f", below {MIN_SAVING_FRAC:.0%} at its low end"
            if self.low < MIN_SAVING_FRAC <= frac
            else ""
        )
        return (
            f"eager time is not steady ({where}): the saving lies between "
            f"{_share(self.low)} and {_share(self.high)}{low_end}; time the step again "
            "before relying on its p50"
        )


def _round_spread(
    captured: Sequence[Mapping[str, Any]],
    eager: Mapping[Any, Mapping[str, Any]],
    buckets: Sequence[int],
) -> RoundSpread | None:
    """The saving's range over the rounds of the buckets in ``buckets`` (all where empty)
    that have both rows' round extents; the widest over those buckets; None without any.

    Eager rounds of the process that profiled the step (kept as ``in_profiled_process``
    where a fresh process timed the rows) count too: the same step's eager p50 moves between
    processes far more than its graphed p50 (on one H100, ALBERT's eager rounds ran 5.0-7.3
    ms in the fresh process and 4.25-4.78 ms in the profiled one, its replay 4.0 ms in both).
    """
    lows: list[float] = []
    highs: list[float] = []
    eager_all: list[int] = []
    profiled_all: list[int] = []
    for row in captured:
        bucket = row.get("bucket")
        e = eager.get(bucket)
        if e is None or (buckets and bucket not in buckets):
            continue
        g_lo, g_hi = row.get("round_host_p50_min_ns"), row.get("round_host_p50_max_ns")
        e_lo, e_hi = e.get("round_host_p50_min_ns"), e.get("round_host_p50_max_ns")
        if not (g_lo and g_hi and e_lo and e_hi):
            continue
        extent = [int(e_lo), int(e_hi)]
        eager_all += extent
        profiled = e.get("in_profiled_process") or {}
        p_lo, p_hi = profiled.get("round_host_p50_min_ns"), profiled.get("round_host_p50_max_ns")
        if p_lo and p_hi:
            profiled_all += [int(p_lo), int(p_hi)]
            extent += [int(p_lo), int(p_hi)]
        lows.append(1.0 - int(g_hi) / min(extent))
        highs.append(1.0 - int(g_lo) / max(extent))
    if not lows:
        return None
    return RoundSpread(
        min(lows),
        max(highs),
        (min(eager_all), max(eager_all)),
        (min(profiled_all), max(profiled_all)) if profiled_all else None,
    )


#: Where the measured saving's range over the timing rounds is wider than this (a share of
#: the step), the decision says so: the eager p50 it rests on is not steady. Over the 393
#: validation workloads recorded twice, the two recordings' savings lay more than 15 points
#: apart on 31 of the 105 whose range was wider on either recording, on 9 of the 288 others
#: (at 10 points: 37 of 242 against 3 of 151, but half of all candidates said so).
UNSTEADY_SAVING_POINTS: Final = 0.20


def decide_candidates(results: Mapping[str, Any]) -> list[GraphDecision]:
    """A decision per candidate of ``profile``'s ``results.json`` document."""
    rows = list(results.get("rows") or [])
    return [decide_candidate(c, rows) for c in results.get("candidates") or []]


def _median(values: Sequence[int]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[middle])
    return (ordered[middle - 1] + ordered[middle]) / 2


def _ms(extent: tuple[int, int]) -> str:
    lo, hi = extent
    return (
        f"{lo / 1e6:.2f}-{hi / 1e6:.2f} ms"
        if hi >= 1_000_000
        else f"{lo / 1e3:,.0f}-{hi / 1e3:,.0f} µs"
    )


def _share(frac: float) -> str:
    return f"{frac:.1%}" if abs(frac) < 0.10 else f"{frac:.0%}"


def _us(us: float) -> str:
    return f"{us:,.0f} µs" if abs(us) >= 100 else f"{us:,.1f} µs"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
