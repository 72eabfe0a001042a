"""Steps found without annotations: the repeating unit of work in a trace.

Most traces people bring carry no ``ProfilerStep`` and no NVTX, yet a training or decoding
loop issues the same launch sequence every iteration. :func:`detect_steps` finds that
sequence and cuts the trace into its repeats, so the diagnosis has a per-step region
(``step (detected)``) and a ``startup`` region (weight upload, allocations, autotuning,
compilation, a first iteration that differs) that no longer blocks the step.

How, all vectorised over the launch calls (no per-launch Python):

1. **Sequence.** The process with the most GPU time; its launch calls of every thread,
   in host order (kernel and graph launches, copies, memsets, synchronizations), each turned
   into one integer token (API name x name of the first activity it launched).
2. **Period.** Candidate periods are the distances between consecutive occurrences of a
   token (a token issued once per step recurs at the step's length), ranked by distance x
   count. For each candidate ``p`` the lag match ``token[i] == token[i + p]`` averaged over
   a sliding window of ``p`` gives the stretch where the sequence repeats with that period;
   a period is valid when the stretch holds at least :data:`MIN_REPEATS` repeats matching at
   least :data:`MIN_MATCH`. Exact multiples of a valid period are dropped; of the rest, the
   *longest* period whose stretch carries a fair share of the kernel time is the step (the
   outermost repeat: a step of 24 layers also repeats with the layer's period).
3. **Boundaries.** The step starts at the phase of the period where the host paused
   longest before launching (the loop's own Python, the data, a read-back), median over the
   repeats; each repeat is found again by the hash of the launch signature at that phase
   (prefix sums of a polynomial hash, so any signature length costs one pass), which keeps
   the boundaries right past an occasional extra or missing launch.
4. **Warm-up.** A first repeat that allocates when the others do not, or takes more than
   :data:`WARMUP_SLOWDOWN` times the median, moves into ``startup``.

The confidence combines how many repeats launch exactly the most common sequence, how
many repeats there are, and how regular their durations are. Where the trace holds Python
stacks (``python_function`` events, ``with_stack=True``), :func:`loop_source` names the
function that runs the loop and the function whose one call is the step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.analysis.arrays import TimelineArrays
from traceinspect.analysis.intervals import IntArray
from traceinspect.analysis.step_source import LoopSource, anchors_from_calls, loop_source
from traceinspect.model import Timeline

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
UintArray = npt.NDArray[np.uint64]

#: Host call kinds that make the launch sequence (what the host asked of the GPU, in order).
ITEM_KINDS: Final = ("launch", "graph_launch", "memcpy", "memset", "sync")
#: Fewer repeats than this is no evidence of a loop.
MIN_REPEATS: Final = 3
#: A period is valid when the lag match over its stretch is at least this share.
MIN_MATCH: Final = 0.9
#: A stretch is where the lag match over a sliding window of one period stays at least this
#: share (one extra kernel in a repeat breaks at most one period's worth of comparisons).
WINDOW_MATCH: Final = 0.75
#: A longer period is preferred while its stretch carries at least this share of the kernel
#: time the best-covering period carries (the outermost repeat that covers the GPU time).
OUTER_SHARE: Final = 0.3
#: Candidate periods ranked by distance x count that are measured in full.
MAX_CANDIDATES: Final = 48
#: Repeats whose anchor is off by more than this share of the period break a run of steps.
PERIOD_SLACK: Final = 0.25
#: The phase after a synchronizing call starts the step when the host paused there at least
#: this share of the longest pause in the period.
SYNC_PAUSE_SHARE: Final = 0.5
#: At most this many consecutive repeats without their signature are bridged.
MAX_MISSED_ANCHORS: Final = 2
#: A first repeat this many times slower than the median is warm-up.
WARMUP_SLOWDOWN: Final = 2.0
#: Steps that carry less than this share of the process's kernel time are not the work
#: that matters (a few repeated bookkeeping calls around one big launch).
MIN_GPU_SHARE: Final = 0.25
#: A step is at least this many calls: one call repeated is a kernel, not a loop.
MIN_STEP_CALLS: Final = 2
#: Seed of the per-token random weights of the signature hash (fixed: results are stable).
_HASH_SEED: Final = 0x5EED
_HASH_BASE: Final = 0x9E3779B97F4A7C15  # odd, so invertible modulo 2**64


@dataclass(frozen=True)
class StepDetection:
    """The steps found in a trace, and the startup before them."""

    pid: int
    tid: int  # the thread that issues most of the step's launches
    #: Host calls (launches, copies, syncs) in the most common step.
    launches_per_step: int
    start_ns: IntArray  # per step: host time of its first call
    end_ns: IntArray  # per step: the next step's first call (the last: its end + usual tail)
    #: Positions in ``timeline.gpu`` of the activities each step launched (sorted).
    rows: list[IntArray]
    startup_start_ns: int
    startup_end_ns: int
    startup_rows: IntArray
    #: Steps whose launch sequence equals the most common one.
    identical: int
    #: Spread of the step durations: scaled median absolute deviation / median.
    duration_cv: float
    #: Share of the process's kernel time inside the steps.
    gpu_share: float
    confidence: float
    #: Repeats moved into ``startup`` because they warmed up (allocations, slow first step).
    warmup_steps: int = 0
    source: LoopSource | None = None

    @property
    def occurrences(self) -> int:
        return len(self.start_ns)

    def describe(self) -> str:
        """One line for the terminal and HTML: what was found and how sure it is."""
        cv = f"{self.duration_cv * 100:.0f} %"
        text = (
            f"detected without annotations: {self.occurrences} repeats of a "
            f"{self.launches_per_step}-call launch sequence ({self.identical} identical, "
            f"step time varies {cv}), {self.gpu_share * 100:.0f} % of the kernel time; "
            f"confidence {self.confidence * 100:.0f} %"
        )
        if self.warmup_steps:
            text += f"; {self.warmup_steps} warm-up repeat(s) before them counted in startup"
        if self.source is not None:
            text += f"; {self.source.describe()}"
        return text


@dataclass(frozen=True)
class _Items:
    """The launch sequence of one process."""

    pid: int
    tokens: IntArray
    start: IntArray
    end: IntArray
    tid: IntArray
    weight: FloatArray  # kernel ns each item launched
    is_malloc_before: IntArray  # cumulative count of allocation calls before each item
    is_sync: BoolArray  # the call blocks the host until the GPU is done
    #: Per GPU activity of the process: its row and the item that launched it.
    gpu_rows: IntArray
    gpu_item: IntArray


def gpu_processes(arrays: TimelineArrays) -> list[int]:
    """The processes whose GPU work the trace holds, busiest (summed activity time) first."""
    if len(arrays.pid) == 0:
        return []
    pids, inverse = np.unique(arrays.pid, return_inverse=True)
    busy = np.bincount(inverse, weights=(arrays.end - arrays.start).astype(np.float64))
    order = np.argsort(-busy, kind="stable")
    return [int(pids[i]) for i in order]


def detect_steps(
    timeline: Timeline, arrays: TimelineArrays, pid: int | None = None
) -> StepDetection | None:
    """The repeating unit of work of process ``pid`` (by default the one with the most GPU
    time) and its repeats, or ``None`` when its launch sequence does not repeat at least
    :data:`MIN_REPEATS` times."""
    items = _items(timeline, arrays, pid)
    if items is None:
        return None
    found = _find_period(items.tokens, items.weight)
    if found is None:
        return None
    period, span_start, span_end = found
    anchors, last_end = _boundaries(items, period, span_start, span_end)
    if len(anchors) < MIN_REPEATS:
        return None
    python = loop_source(timeline, items, anchors, last_end, period_slack=PERIOD_SLACK)
    source, spans = None, None
    if python is not None:
        source, body_calls = python
        from_calls = (
            anchors_from_calls(items, body_calls)
            if body_calls is not None and len(body_calls) >= MIN_REPEATS
            else None
        )
        if from_calls is not None and len(from_calls[0]) >= MIN_REPEATS:
            # The script says where each step is: one call of the loop's body.
            anchors, last_end, spans = from_calls
    anchors, last_end = _drop_partial_last(items.tokens, anchors, last_end)
    anchors, warmup = _drop_warmup(timeline, items, anchors, last_end)
    if len(anchors) < MIN_REPEATS:
        return None
    if spans is not None:  # the same calls: less the warm-up ones and a partial last one
        spans = spans[warmup : warmup + len(anchors)]
    found_steps = _result(timeline, arrays, items, anchors, last_end, warmup, source, spans)
    if found_steps.gpu_share < MIN_GPU_SHARE or found_steps.launches_per_step < MIN_STEP_CALLS:
        return None
    return found_steps


# -- the sequence --------------------------------------------------------------------------


def _string_codes(values: npt.NDArray[np.object_]) -> tuple[IntArray, npt.NDArray[np.object_]]:
    """Dense integer codes of a string column, and the distinct strings.

    Readers hand out one string object per distinct name, so the objects' identities are
    factorized first (integers: fast) and only the distinct objects are compared as text.
    """
    if len(values) == 0:
        return np.empty(0, np.int64), np.empty(0, object)
    ids = np.fromiter(map(id, values), dtype=np.int64, count=len(values))
    id_codes, distinct_ids = pd.factorize(ids)
    first = np.empty(len(distinct_ids), np.int64)
    first[id_codes[::-1]] = np.arange(len(values) - 1, -1, -1)  # first position of each
    text_codes, texts = pd.factorize(values[first])
    return np.asarray(text_codes, np.int64)[id_codes], np.asarray(texts, dtype=object)


def _one_of(codes: IntArray, texts: npt.NDArray[np.object_], wanted: tuple[str, ...]) -> BoolArray:
    """Where the coded strings are one of ``wanted``."""
    hit = np.array([str(t) in wanted for t in texts], dtype=bool)
    return hit[codes] if len(codes) else np.zeros(0, bool)


def _items(timeline: Timeline, arrays: TimelineArrays, pid: int | None) -> _Items | None:
    gpu, host = timeline.gpu, timeline.host
    if len(gpu) == 0:
        return None
    computes = arrays.is_kernel | arrays.is_graph  # kernels and whole-graph records
    kernel_ns = np.where(computes, arrays.end - arrays.start, 0).astype(np.float64)
    if pid is None:
        pid = gpu_processes(arrays)[0]
    mine = np.flatnonzero(arrays.pid == pid)
    if len(mine) == 0:
        return None
    launched = arrays.launch_row[mine] >= 0
    name_codes = _string_codes(gpu["name"].to_numpy())[0]
    kind_codes, kinds = _string_codes(host["kind"].to_numpy())
    host_pid = host["pid"].to_numpy(np.int64)
    host_malloc = _one_of(kind_codes, kinds, ("malloc",)) & (host_pid == pid)
    if len(host) and launched.mean() >= 0.5:
        rows = np.flatnonzero(_one_of(kind_codes, kinds, ITEM_KINDS) & (host_pid == pid))
        if len(rows) == 0:
            return None
        # The name of the first activity each call launched (gpu rows are in start order).
        lr = mine[launched]
        calls, first = np.unique(arrays.launch_row[lr], return_index=True)
        first_gpu = np.full(len(host), -1, np.int64)
        first_gpu[calls] = name_codes[lr[first]]
        host_names = _string_codes(host["name"].to_numpy())[0]
        raw = host_names[rows] * (int(name_codes.max(initial=0)) + 2) + first_gpu[rows] + 1
        tokens = np.asarray(pd.factorize(raw)[0], np.int64)
        weight = np.bincount(arrays.launch_row[lr], weights=kernel_ns[lr], minlength=len(host))[
            rows
        ]
        item_of_host = np.full(len(host), -1, np.int64)
        item_of_host[rows] = np.arange(len(rows))
        gpu_rows = mine[launched]
        gpu_item = item_of_host[arrays.launch_row[gpu_rows]]
        keep = gpu_item >= 0
        malloc_before = np.cumsum(host_malloc)[rows] - host_malloc[rows]
        return _Items(
            pid=pid,
            tokens=tokens,
            start=arrays.host_start[rows],
            end=arrays.host_end[rows],
            tid=host["tid"].to_numpy(np.int64)[rows],
            weight=np.asarray(weight, np.float64),
            is_malloc_before=malloc_before.astype(np.int64),
            is_sync=_one_of(kind_codes[rows], kinds, ("sync",)),
            gpu_rows=gpu_rows[keep],
            gpu_item=gpu_item[keep],
        )
    # No host records for most activities: the GPU's own order is the sequence.
    tokens = np.asarray(pd.factorize(name_codes[mine])[0], np.int64)
    return _Items(
        pid=pid,
        tokens=tokens,
        start=arrays.start[mine],
        end=arrays.end[mine],
        tid=np.full(len(mine), -1, np.int64),
        weight=kernel_ns[mine],
        is_malloc_before=np.zeros(len(mine), np.int64),
        is_sync=np.zeros(len(mine), bool),
        gpu_rows=mine,
        gpu_item=np.arange(len(mine), dtype=np.int64),
    )


# -- the period ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    period: int
    start: int  # first item of the repeating stretch
    end: int  # one past its last item
    match: float
    weight: float

    @property
    def repeats(self) -> int:
        return (self.end - self.start) // self.period


def _find_period(tokens: IntArray, weight: FloatArray) -> tuple[int, int, int] | None:
    """(period, first item, one past the last item) of the outermost repeat."""
    n = len(tokens)
    if n < MIN_REPEATS:
        return None
    order = np.argsort(tokens, kind="stable")
    same = tokens[order][1:] == tokens[order][:-1]
    distances = (order[1:] - order[:-1])[same]
    distances = distances[distances <= n // MIN_REPEATS]
    if len(distances) == 0:
        return None
    counts = np.bincount(distances)
    score = counts * np.arange(len(counts))
    ranked = np.argsort(-score, kind="stable")[:MAX_CANDIDATES]
    ranked = ranked[score[ranked] > 0]
    cumulative_weight = np.concatenate(([0.0], np.cumsum(weight + 1.0)))
    valid = []
    for period in sorted(int(p) for p in ranked if p >= MIN_STEP_CALLS):  # each one O(n)
        candidate = _measure(tokens, cumulative_weight, period)
        if candidate is not None:
            valid.append(candidate)
    if not valid:
        return None
    # Exact multiples of a period that matches as well over as much are that period
    # repeated.
    fundamental = [
        c
        for c in valid
        if not any(
            d.period < c.period
            and c.period % d.period == 0
            and d.match >= c.match - 0.02
            and d.weight >= 0.9 * c.weight
            for d in valid
        )
    ]
    # The period whose repeats carry the most kernel time, then the longest period that
    # repeats over the same stretch (nested repetition: the outermost).
    best = max(fundamental, key=lambda c: c.weight)
    nested = [
        c
        for c in fundamental
        if c.weight >= OUTER_SHARE * best.weight
        and min(c.end, best.end) - max(c.start, best.start)
        >= 0.5 * min(c.end - c.start, best.end - best.start)
    ]
    outer = max(nested, key=lambda c: c.period)
    return outer.period, outer.start, outer.end


def _measure(tokens: IntArray, cumulative_weight: FloatArray, period: int) -> _Candidate | None:
    n = len(tokens)
    if n < 2 * period:
        return None
    good = tokens[:-period] == tokens[period:]
    hits = np.concatenate(([0], np.cumsum(good, dtype=np.int64)))
    window = (hits[period:] - hits[:-period]) / period  # window starting at i: good[i:i+p]
    ok = window >= WINDOW_MATCH
    if not ok.any():
        return None
    edges = np.diff(np.concatenate(([0], ok.astype(np.int8), [0])))
    run_start = np.flatnonzero(edges == 1)
    run_end = np.flatnonzero(edges == -1)
    # Items that repeat: from the run's first window to one period past its last window's
    # comparisons (good[i] compares item i with item i + p).
    span_end = np.minimum(run_end - 1 + 2 * period, n)
    weights = cumulative_weight[span_end] - cumulative_weight[run_start]
    k = int(np.argmax(weights))
    # Trim the stretch to its first and last matching comparison (a window that is mostly
    # good can start or end in the mismatches around an extra call).
    first, last = int(run_start[k]), min(int(run_end[k]) - 1 + period, len(good)) - 1
    start = first + int(np.argmax(good[first : last + 1]))
    end = min(last - int(np.argmax(good[first : last + 1][::-1])) + period + 1, n)
    if (end - start) // period < MIN_REPEATS:
        return None
    compared = hits[end - period] - hits[start]
    match = float(compared) / max(end - period - start, 1)
    if match < MIN_MATCH:
        return None
    return _Candidate(period, start, end, match, float(weights[k]))


# -- boundaries ----------------------------------------------------------------------------


class _Signatures:
    """Hash of any window ``tokens[i:i+m]`` in O(1) after one O(n) pass: prefix sums of
    ``w[token] * B**j`` modulo 2**64, rescaled by ``B**-i``."""

    def __init__(self, tokens: IntArray) -> None:
        n = len(tokens)
        rng = np.random.default_rng(_HASH_SEED)
        weights = rng.integers(1, 2**63, size=int(tokens.max(initial=0)) + 1, dtype=np.uint64)
        base = np.uint64(_HASH_BASE)
        inverse = np.uint64(pow(_HASH_BASE, -1, 2**64))
        with np.errstate(over="ignore"):
            powers = np.concatenate(([np.uint64(1)], np.cumprod(np.full(n, base, np.uint64))))
            self._inverse = np.concatenate(
                ([np.uint64(1)], np.cumprod(np.full(n, inverse, np.uint64)))
            )
            terms = weights[tokens] * powers[:n]
            self._prefix = np.concatenate(([np.uint64(0)], np.cumsum(terms, dtype=np.uint64)))

    def of(self, starts: IntArray, ends: IntArray) -> UintArray:
        """Hashes of ``tokens[starts[k]:ends[k]]``."""
        with np.errstate(over="ignore"):
            return (self._prefix[ends] - self._prefix[starts]) * self._inverse[starts]


def _boundaries(items: _Items, period: int, span_start: int, span_end: int) -> tuple[IntArray, int]:
    """First item of each repeat, and one past the last repeat's last item."""
    n = len(items.tokens)
    prev_end = np.concatenate(([items.start[0]], np.maximum.accumulate(items.end)[:-1]))
    pause = np.maximum(items.start - prev_end, 0)
    repeats = (span_end - span_start) // period
    window = slice(span_start, span_start + repeats * period)
    typical_pause = np.median(pause[window].reshape(repeats, period), axis=0)
    phase = int(np.argmax(typical_pause))
    # A step often ends by waiting for the GPU (a synchronize, a read-back): prefer the
    # phase right after a call that synchronizes in most repeats, when the host paused
    # there about as long as anywhere.
    after_sync = np.roll(np.mean(items.is_sync[window].reshape(repeats, period), axis=0), 1)
    preferred = np.flatnonzero(after_sync >= 0.5)
    if len(preferred):
        best_after_sync = int(preferred[np.argmax(typical_pause[preferred])])
        if typical_pause[best_after_sync] >= SYNC_PAUSE_SHARE * typical_pause[phase]:
            phase = best_after_sync
    first = span_start + phase
    if first + period > span_end and first - period >= 0:
        first -= period
    signatures = _Signatures(items.tokens)
    length = min(8, period)
    while True:
        starts = np.arange(0, n - length + 1, dtype=np.int64)
        hashes = signatures.of(starts, starts + length)
        anchors = np.flatnonzero(hashes == hashes[first]).astype(np.int64)
        inside = anchors[(anchors >= span_start - period) & (anchors < span_end)]
        if length >= period or not (np.diff(inside) < (1 - PERIOD_SLACK) * period).any():
            break
        length = min(2 * length, period)
    runs = _runs_of_steps(anchors, period)
    weight = np.concatenate(([0.0], np.cumsum(items.weight + 1.0)))
    chosen = max(runs, key=lambda r: weight[min(r[-1] + period, n)] - weight[r[0]])
    lengths = np.diff(chosen)
    usual = int(np.median(lengths)) if len(lengths) else period
    # Repeats whose anchor signature broke (the calls just after the last step are not the
    # next step's) but whose calls match their neighbour's extend the run.
    tokens = items.tokens
    while chosen[0] >= usual and _alike(tokens, chosen[0] - usual, chosen[0], usual):
        chosen.insert(0, chosen[0] - usual)
    while chosen[-1] + 2 * usual <= n and _alike(tokens, chosen[-1] + usual, chosen[-1], usual):
        chosen.append(chosen[-1] + usual)
    best = np.asarray(chosen, np.int64)
    last = int(best[-1])
    last_end = min(last + usual, n)
    if len(best) > 1:
        # The last repeat ends where it stops launching what the one before launched (the
        # script's own epilogue after the loop is not part of it).
        previous = int(best[-2])
        length = min(last_end - last, usual)
        differs = np.flatnonzero(
            tokens[last : last + length] != tokens[previous : previous + length]
        )
        if len(differs):
            last_end = last + int(differs[0])
    if last_end - last < usual:
        # The trace (or the loop) stopped inside the last repeat: a part of a step is not one.
        last_end, best = last, best[:-1]
    return best, last_end


def _drop_partial_last(tokens: IntArray, anchors: IntArray, last_end: int) -> tuple[IntArray, int]:
    """Without the last repeat when it launches less than, or other than, the one before
    (a trace cut inside it)."""
    if len(anchors) < 2:
        return anchors, last_end
    last, previous = int(anchors[-1]), int(anchors[-2])
    length = last_end - last
    if length >= last - previous and _alike(tokens, last, previous, last - previous):
        return anchors, last_end
    return anchors[:-1], last


def _alike(tokens: IntArray, a: int, b: int, length: int) -> bool:
    """Whether the ``length`` calls from ``a`` match those from ``b`` nearly one for one."""
    return bool(np.mean(tokens[a : a + length] == tokens[b : b + length]) >= MIN_MATCH)


def _runs_of_steps(anchors: IntArray, period: int) -> list[list[int]]:
    """Split the anchors into runs whose neighbours lie about one period apart."""
    if len(anchors) == 0:
        return [[]]
    low, high = (1 - PERIOD_SLACK) * period, (1 + PERIOD_SLACK) * period
    runs: list[list[int]] = []
    current = [int(anchors[0])]
    for a in anchors[1:].tolist():  # one per repeat (or spurious hit): cheap
        gap = a - current[-1]
        if gap < low:
            continue  # a signature hit inside a repeat
        missed = round(gap / period) - 1
        if gap <= high:
            current.append(a)
        elif 1 <= missed <= MAX_MISSED_ANCHORS and abs(gap - (missed + 1) * period) <= (
            high - period
        ):
            # Repeats whose signature broke (an extra call near their start): the run goes
            # on through them, each starting where the one before ended.
            current += [current[-1] + k * period for k in range(1, missed + 1)]
            current.append(a)
        else:
            runs.append(current)
            current = [a]
    runs.append(current)
    return runs


def _drop_warmup(
    timeline: Timeline, items: _Items, anchors: IntArray, last_end: int
) -> tuple[IntArray, int]:
    """Move first repeats that warm up (allocations the others do not make, or much slower)
    out of the steps."""
    dropped = 0
    while len(anchors) > MIN_REPEATS and dropped < 2:
        bounds = np.append(anchors, last_end)
        first_item = bounds[:-1]
        last_item = np.maximum(bounds[1:] - 1, first_item)
        allocs = items.is_malloc_before[last_item] - items.is_malloc_before[first_item]
        duration = items.end[last_item] - items.start[first_item]
        rest = duration[1:]
        slow = duration[0] > WARMUP_SLOWDOWN * float(np.median(rest))
        allocates = allocs[0] > 0 and float(np.mean(allocs[1:] > 0)) <= 0.1
        if not (slow or allocates):
            break
        anchors = anchors[1:]
        dropped += 1
    return anchors, dropped


# -- the result ----------------------------------------------------------------------------


def _result(
    timeline: Timeline,
    arrays: TimelineArrays,
    items: _Items,
    anchors: IntArray,
    last_end: int,
    warmup: int,
    source: LoopSource | None,
    spans: IntArray | None = None,
) -> StepDetection:
    bounds = np.append(anchors, last_end)
    first_item, stop_item = bounds[:-1], bounds[1:]
    n_steps = len(first_item)
    # The step's thread issues most of its calls.
    step_tids = items.tid[first_item[0] : last_end]
    tids, counts = np.unique(step_tids, return_counts=True)
    tid = int(tids[int(np.argmax(counts))])
    last_call_end = np.maximum.reduceat(items.end[:last_end], first_item)[:n_steps]
    previous_end = np.empty(n_steps, np.int64)
    previous_end[1:] = last_call_end[:-1]
    previous_end[0] = items.end[first_item[0] - 1] if first_item[0] > 0 else -1
    start_ns = _first_op_start(timeline, items.pid, tid, items.start[first_item], previous_end)
    end_ns = np.empty(n_steps, np.int64)
    end_ns[:-1] = start_ns[1:]
    end_ns[-1] = _last_step_end(timeline, items.pid, tid, start_ns, last_call_end)
    if last_end < len(items.start):
        end_ns[-1] = min(end_ns[-1], int(items.start[last_end]))
    end_ns[-1] = max(end_ns[-1], int(last_call_end[-1]))
    if spans is not None and len(spans) == n_steps:
        # Each step is one call of the loop's body: what the loop does around it (a
        # read-back every tenth step) is not.
        start_ns, end_ns = spans[:, 0].copy(), spans[:, 1].copy()
        stop_item = np.searchsorted(items.start, end_ns, side="right")
        stop_item = np.clip(stop_item, first_item + 1, bounds[1:])

    step_of = np.searchsorted(bounds, items.gpu_item, side="right") - 1
    inside = (step_of >= 0) & (step_of < n_steps)
    inside[inside] &= items.gpu_item[inside] < stop_item[step_of[inside]]
    order = np.lexsort((items.gpu_rows[inside], step_of[inside]))
    grouped_rows = items.gpu_rows[inside][order]
    per_step = np.bincount(step_of[inside], minlength=n_steps)
    rows = np.split(grouped_rows.astype(np.int64), np.cumsum(per_step)[:-1])
    startup_rows = np.sort(items.gpu_rows[items.gpu_item < first_item[0]]).astype(np.int64)

    signatures = _Signatures(items.tokens)
    sequence_hash = signatures.of(first_item, stop_item) ^ (stop_item - first_item).astype(
        np.uint64
    )
    _, hash_counts = np.unique(sequence_hash, return_counts=True)
    identical = int(hash_counts.max())
    launches_per_step = int(np.median(stop_item - first_item))
    duration = (end_ns - start_ns).astype(np.float64)
    # Robust spread (scaled median absolute deviation over the median): one step that
    # waited for the GPU at the end of the run does not make the others irregular.
    median = float(np.median(duration))
    spread = 1.4826 * float(np.median(np.abs(duration - median)))
    cv = spread / median if median > 0 else 0.0
    total = float(items.weight.sum())
    inside_weight = float(items.weight[first_item[0] : last_end].sum())
    confidence = (identical / n_steps) * (1 - 0.5 ** (n_steps - 1)) * (1 - min(cv, 1.0) / 2)
    detection = StepDetection(
        pid=items.pid,
        tid=tid,
        launches_per_step=launches_per_step,
        start_ns=start_ns,
        end_ns=end_ns,
        rows=rows,
        startup_start_ns=_process_start(timeline, items.pid),
        startup_end_ns=int(start_ns[0]),
        startup_rows=startup_rows,
        identical=identical,
        duration_cv=cv,
        gpu_share=inside_weight / total if total > 0 else 0.0,
        confidence=round(float(confidence), 3),
        warmup_steps=warmup,
    )
    return detection if source is None else replace(detection, source=source)


def _first_op_start(
    timeline: Timeline, pid: int, tid: int, t: IntArray, previous_end: IntArray
) -> IntArray:
    """Where each step starts on the host: at the first outermost operator of the thread
    that starts after the previous step's last call ended (ops that prepare the step's
    inputs belong to it), or at the operator running at its first call ``t``."""
    ops = timeline.cpu_ops
    out = np.asarray(t, np.int64).copy()
    if len(ops) == 0:
        return out
    mine = (
        (ops["pid"].to_numpy(np.int64) == pid)
        & (ops["tid"].to_numpy(np.int64) == tid)
        & (ops["depth"].to_numpy(np.int64) == 0)
    )
    if not mine.any():
        return out
    starts = ops["start_ns"].to_numpy(np.int64)[mine]  # sorted: tables are in start order
    ends = ops["end_ns"].to_numpy(np.int64)[mine]
    # The operator running at t.
    i = np.searchsorted(starts, out, side="right") - 1
    safe = np.maximum(i, 0)
    running = (i >= 0) & (ends[safe] > out)
    out[running] = starts[safe[running]]
    # The first operator after the previous step's last call.
    j = np.searchsorted(starts, previous_end, side="right")
    safe = np.minimum(j, len(starts) - 1)
    earlier = (j < len(starts)) & (starts[safe] < out)
    out[earlier] = starts[safe[earlier]]
    return np.maximum(out, previous_end)


def _last_step_end(
    timeline: Timeline, pid: int, tid: int, start_ns: IntArray, last_call_end: IntArray
) -> int:
    """Where the last step ends on the host: after as many outermost operators past its last
    call as the other steps run past theirs (``loss.detach()`` after the optimizer), so the
    script's epilogue after the loop (a read-back, a print) stays out of it."""
    tail = start_ns[1:] - last_call_end[:-1]
    fallback = int(last_call_end[-1]) + max(int(np.median(tail)) if len(tail) else 0, 0)
    ops = timeline.cpu_ops
    if len(ops) == 0:
        return fallback
    mine = (
        (ops["pid"].to_numpy(np.int64) == pid)
        & (ops["tid"].to_numpy(np.int64) == tid)
        & (ops["depth"].to_numpy(np.int64) == 0)
    )
    starts = ops["start_ns"].to_numpy(np.int64)[mine]
    ends = ops["end_ns"].to_numpy(np.int64)[mine]
    if len(starts) == 0 or len(start_ns) < 2:
        return fallback
    after_last = np.searchsorted(starts, last_call_end, side="left")
    before_next = np.searchsorted(starts, start_ns[1:], side="left")
    usual = int(np.median(before_next - after_last[:-1]))
    if usual <= 0:
        return int(last_call_end[-1])
    k = int(after_last[-1]) + usual - 1
    return int(ends[k]) if k < len(ends) else fallback


def _process_start(timeline: Timeline, pid: int) -> int:
    starts = []
    for table in (timeline.host, timeline.cpu_ops, timeline.gpu):
        mine = table["pid"].to_numpy(np.int64) == pid
        if mine.any():
            starts.append(int(table["start_ns"].to_numpy(np.int64)[mine].min()))
    return min(starts) if starts else 0


# -- the source line -----------------------------------------------------------------------
