"""Shape buckets for graph replay: which graph serves a request, and which bucket set to keep.

Pure functions on measured numbers. A request of batch size ``n`` is served by the graph of
the smallest bucket ``b >= n`` (its input padded by ``b - n`` rows); a request larger than
every bucket falls back to eager execution at its own size.

The recommendation rule (:func:`recommend_buckets`): among the bucket sets whose expected
latency is known, take those within :data:`LATENCY_TIE_SHARE` of the lowest expected
latency; of these pick the one with the least graph memory, then the fewest graphs, then the
smallest buckets. Expected latency weighs each request size by its share of the mix.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

#: Expected latencies closer than this share to the best count as ties (2 %: below the
#: run-to-run spread of p50 step latency seen for launch-bound steps).
LATENCY_TIE_SHARE: Final = 0.02
#: Up to this many buckets every subset is evaluated (2**12 - 1 = 4095 sets, a few ms).
MAX_EXHAUSTIVE_BUCKETS: Final = 12

RequestMix = Mapping[int, float] | Sequence[int]


def normalize_mix(mix: RequestMix) -> dict[int, float]:
    """``{size: weight}`` from a mapping of weights or a list of observed request sizes.

    Weights are relative (counts or shares); sizes must be positive integers and weights
    positive finite numbers.
    """
    if isinstance(mix, Mapping):
        items: Iterable[tuple[Any, Any]] = mix.items()
    else:
        counts: dict[int, float] = {}
        for size in mix:
            _check_size(size)
            counts[size] = counts.get(size, 0.0) + 1.0
        items = counts.items()
    out: dict[int, float] = {}
    for size, weight in items:
        _check_size(size)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise TypeError(f"request mix weight for size {size} must be a number, not {weight!r}")
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"request mix weight for size {size} must be > 0, got {weight!r}")
        out[int(size)] = out.get(int(size), 0.0) + float(weight)
    if not out:
        raise ValueError("request mix is empty")
    return dict(sorted(out.items()))


def _check_size(size: object) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"request sizes must be positive integers, got {size!r}")


def serving_bucket(size: int, buckets: Sequence[int]) -> int | None:
    """The smallest bucket that holds ``size`` rows, or ``None`` (eager fallback)."""
    fitting = [b for b in buckets if b >= size]
    return min(fitting) if fitting else None


@dataclass(frozen=True)
class BucketSetEstimate:
    """What a set of graphs would give on a request mix.

    ``expected_latency_ns``: mean latency per request, weighted by the mix (``None`` when a
    latency it needs was not measured). ``fallback_share``: share of requests run eagerly.
    ``padding_share``: padded rows / rows computed by graphs (``None`` when no request is
    graphed). ``graph_memory_bytes``: sum of the graphs' private pools (``None`` if unknown).
    """

    buckets: tuple[int, ...]
    expected_latency_ns: float | None
    fallback_share: float
    padding_share: float | None
    graph_memory_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "buckets": list(self.buckets),
            "expected_latency_ns": (
                None if self.expected_latency_ns is None else round(self.expected_latency_ns)
            ),
            "fallback_share": self.fallback_share,
            "padding_share": self.padding_share,
            "graph_memory_bytes": self.graph_memory_bytes,
        }


def evaluate_bucket_set(
    buckets: Iterable[int],
    mix: Mapping[int, float],
    graphed_ns: Mapping[int, int | None],
    eager_ns: Mapping[int, int | None],
    pool_bytes: Mapping[int, int | None],
) -> BucketSetEstimate:
    """Expected latency, fallback share, padding share and graph memory of ``buckets``.

    ``graphed_ns[b]``: latency of one replay of bucket ``b``'s graph (input copy included);
    ``eager_ns[n]``: eager latency at size ``n``; ``pool_bytes[b]``: the graph's pool.
    """
    chosen = tuple(sorted(set(buckets)))
    total = sum(mix.values())
    latency_sum: float | None = 0.0
    fallback = 0.0
    padded_rows = 0.0
    graphed_rows = 0.0
    for size, weight in mix.items():
        bucket = serving_bucket(size, chosen)
        if bucket is None:
            fallback += weight
            latency = eager_ns.get(size)
        else:
            padded_rows += weight * (bucket - size)
            graphed_rows += weight * bucket
            latency = graphed_ns.get(bucket)
        if latency is None or latency_sum is None:
            latency_sum = None
        else:
            latency_sum += weight * latency
    pools = [pool_bytes.get(b) for b in chosen]
    memory = None if any(p is None for p in pools) else sum(p for p in pools if p is not None)
    return BucketSetEstimate(
        buckets=chosen,
        expected_latency_ns=None if latency_sum is None else latency_sum / total,
        fallback_share=fallback / total,
        padding_share=padded_rows / graphed_rows if graphed_rows else None,
        graph_memory_bytes=memory,
    )


@dataclass(frozen=True)
class BucketRecommendation:
    """The evaluated sets worth showing (``shown``), and the pick (``None``: no set has a
    known expected latency)."""

    chosen: BucketSetEstimate | None
    shown: tuple[BucketSetEstimate, ...]
    evaluated: int
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {
            "chosen": None if self.chosen is None else self.chosen.to_json(),
            "candidates": [s.to_json() for s in self.shown],
            "sets_evaluated": self.evaluated,
            "rule": self.rule,
        }


RULE: Final = (
    f"lowest expected latency per request; sets within {LATENCY_TIE_SHARE:.0%} of it tie, "
    "and the tie goes to the least graph memory, then the fewest graphs"
)


def recommend_buckets(
    mix: Mapping[int, float],
    graphed_ns: Mapping[int, int | None],
    eager_ns: Mapping[int, int | None],
    pool_bytes: Mapping[int, int | None],
) -> BucketRecommendation:
    """Evaluate bucket sets drawn from the captured buckets and pick one (module docstring).

    Only buckets with a measured graph latency take part. Shown: no graphs (all eager),
    all graphs, the best set of each size, and the pick.
    """
    usable = sorted(b for b, ns in graphed_ns.items() if ns is not None)

    def evaluate(buckets: Iterable[int]) -> BucketSetEstimate:
        return evaluate_bucket_set(buckets, mix, graphed_ns, eager_ns, pool_bytes)

    sets = [evaluate(c) for c in _candidate_sets(usable, evaluate)]
    known = [s for s in sets if s.expected_latency_ns is not None]
    chosen: BucketSetEstimate | None = None
    if known:
        best = min(s.expected_latency_ns for s in known if s.expected_latency_ns is not None)
        ties = [
            s
            for s in known
            if s.expected_latency_ns is not None
            and s.expected_latency_ns <= best * (1 + LATENCY_TIE_SHARE)
        ]
        chosen = min(ties, key=_tie_key)
    shown: dict[tuple[int, ...], BucketSetEstimate] = {}
    by_count: dict[int, list[BucketSetEstimate]] = {}
    for s in sets:
        by_count.setdefault(len(s.buckets), []).append(s)
    for count in sorted(by_count):
        pick = min(by_count[count], key=_rank_key)
        shown[pick.buckets] = pick
    if chosen is not None:
        shown[chosen.buckets] = chosen
    ordered = sorted(shown.values(), key=lambda s: (len(s.buckets), s.buckets))
    return BucketRecommendation(chosen, tuple(ordered), len(sets), RULE)


def _rank_key(s: BucketSetEstimate) -> tuple[float, float, int, tuple[int, ...]]:
    latency = math.inf if s.expected_latency_ns is None else s.expected_latency_ns
    memory = math.inf if s.graph_memory_bytes is None else s.graph_memory_bytes
    return (latency, memory, len(s.buckets), s.buckets)


def _tie_key(s: BucketSetEstimate) -> tuple[float, int, tuple[int, ...]]:
    memory = math.inf if s.graph_memory_bytes is None else s.graph_memory_bytes
    return (memory, len(s.buckets), s.buckets)


def _candidate_sets(
    usable: Sequence[int], evaluate: Callable[[Iterable[int]], BucketSetEstimate]
) -> list[tuple[int, ...]]:
    """Every subset (the empty one included) up to :data:`MAX_EXHAUSTIVE_BUCKETS` buckets;
    beyond that, the nested sets found by dropping, one at a time, the bucket whose removal
    ranks best."""
    if len(usable) <= MAX_EXHAUSTIVE_BUCKETS:
        return [
            combo for k in range(len(usable) + 1) for combo in itertools.combinations(usable, k)
        ]
    current = tuple(usable)
    sets = [current]
    while current:
        options = [tuple(b for b in current if b != drop) for drop in current]
        current = min(options, key=lambda c: _rank_key(evaluate(c)))
        sets.append(current)
    return sets
