"""Measure graph candidates: eager calls against captured-and-replayed CUDA graphs, per bucket.

The replay contract followed for each bucket:

1. eager: warm up, then time ``fn(*inputs)`` step by step, synchronized after each step;
2. capture: static copies of the inputs, warm-up calls on a side stream, then
   ``torch.cuda.graph`` with a private memory pool (the capture time includes instantiation);
3. replay: each step copies new inputs into the static buffers and replays the graph;
4. correctness: the replayed outputs against eager outputs for the same new inputs, both
   drawing from one seed (:data:`CHECK_SEED`), so a step with dropout or sampling compares
   the same random numbers;
5. profiled traces: a few eager and a few graphed steps, each under its own profiler —
   after every bucket's timing rounds: a profiler session can leave launches slower for the
   rest of the process (on the H200, launch-bound steps' eager p50 rose 20-40 %, once 5x,
   in the rounds that followed the traces; in ``sample_traces/validation/clock_drift.json``
   an embedding-bag step went from 295 to 388 µs eager and 102 to 122 µs replayed after one
   session, with the SM clock at 1,980 MHz throughout), so no timing round follows one of
   the candidate's own traces.

Timings run with no profiler on. Each (bucket, mode) row reports the host wall clock per
step (``perf_counter_ns`` around the step and a device synchronize) and, in a separate pass,
the GPU time between CUDA events recorded before and after the step. Anything not measured
stays ``None``.

With ``repeats`` > 1 the timing is done in rounds, interleaved in the same process: eager
round 1, capture, graphed round 1, then eager round 2, graphed round 2, and so on. Eager
latency drifts between runs far more than graphed latency does; the rounds show how much
within one run. A row's ``host_p50_ns``/``gpu_p50_ns``/``iterations`` are then over all
rounds' steps pooled, and ``round_host_p50_ns`` (one p50 per round, in order) with its
``round_host_p50_min_ns``/``round_host_p50_max_ns`` give the spread.

The new inputs are the example inputs rotated by one row along the batch dimension, so a
graph that baked in the captured values shows up as incorrect (with a batch of 1 the rotation
changes nothing and the check only compares replay with eager). The eager step is called
twice for its reference: a step whose two calls differ beyond tolerance changes its own state
and its replay is left unchecked (``repeatable: false``); one whose calls differ within
tolerance may still drift past it over the steps between the reference and the replay, so a
replay that misses the reference is checked again against an eager call made right after it,
within tolerance or within twice what that call and the next one differ by (one step of the
step's own drift; ``checked_against: "eager_after_replay"``). A replay that misses the
reference of a step whose two calls were identical sends eager back for
:data:`RECHECK_CALLS` more calls: if one of them misses the reference too, the step runs
nondeterministic kernels whose first two calls agreed by chance, and it is read as
unrepeatable (its replay unchecked) instead of incorrect.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import math
import os
import random
import re
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from traceinspect.collect.buckets import (
    BucketRecommendation,
    evaluate_bucket_set,
    recommend_buckets,
    serving_bucket,
)
from traceinspect.collect.candidates import GraphCandidate
from traceinspect.collect.failures import classify_exception, first_error
from traceinspect.collect.tensors import (
    batch_major,
    batch_size,
    clone_tensors,
    compare_outputs,
    resize,
    rotate,
)

#: The seed the correctness check's eager call and replay both draw from. A captured graph's
#: random kernels read the generator's seed and offset when it is replayed, and offset by what
#: each kernel drew before them as the eager calls do, so a replay right after seeding draws
#: what an eager call right after the same seed draws: a step that samples (dropout, a random
#: mask) is then compared like any other. The caller's generator states are restored after.
CHECK_SEED: Final = 1_729


@contextlib.contextmanager
def _same_draws(torch: Any) -> Iterator[None]:
    """Run the body with the CPU and CUDA generators seeded with :data:`CHECK_SEED`; the
    states they had are put back after."""
    cpu = torch.get_rng_state()
    get_all = getattr(torch.cuda, "get_rng_state_all", None)
    cuda = get_all() if get_all is not None else None
    torch.manual_seed(CHECK_SEED)
    try:
        yield
    finally:
        torch.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)


#: Eager calls made again when a replay of a step whose first two eager calls agreed misses
#: the reference: if any of them misses it too, the step is nondeterministic and its replay
#: unchecked. On the H100, a LightGCN step (``index_add_`` in float32, then ``topk``) gave the
#: same item ids on its two reference calls in one process of two, and its replay was read
#: incorrect there.
RECHECK_CALLS: Final = 4

#: Columns of a results row, in order. Every row has all of them; ``None`` = not measured.
ROW_FIELDS: Final = (
    "callable",
    "bucket",
    "mode",
    "in_bucket_set",
    "status",
    "capture_ns",
    "first_replay_ns",
    "iterations",
    "host_p50_ns",
    "host_p95_ns",
    "gpu_p50_ns",
    "gpu_p95_ns",
    "allocated_before_bytes",
    "peak_allocated_bytes",
    "peak_reserved_bytes",
    "graph_pool_bytes",
    "input_copy_bytes",
    "correct",
    "max_abs_error",
    "tolerance",
    "checked_against",
    "repeatable",
    "repeat_max_abs_error",
    "failure",
    "trace",
    "predicted_ns",
    "predicted_low_ns",
    "predicted_high_ns",
    "prediction_error",
    "rounds",
    "round_host_p50_ns",
    "round_host_p50_min_ns",
    "round_host_p50_max_ns",
    "round_gpu_p50_ns",
)

#: The fields of a row a timing pass fills (``_fill_timing``, ``_fill_rounds``): what a
#: fresh-process timing replaces (``profile --fresh-timing``).
TIMING_FIELDS: Final = (
    "host_p50_ns",
    "host_p95_ns",
    "gpu_p50_ns",
    "gpu_p95_ns",
    "iterations",
    "rounds",
    "round_host_p50_ns",
    "round_host_p50_min_ns",
    "round_host_p50_max_ns",
    "round_gpu_p50_ns",
)


#: Distinct request sizes of a mix that are timed eagerly, most frequent first (bounds the
#: run time; sizes beyond it have no eager latency and the estimates needing them are null).
MAX_MIX_SIZES: Final = 64

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class MeasureOptions:
    """How hard to measure. Defaults keep one bucket under a second for millisecond steps."""

    iters: int = 100  # timed steps per (bucket, mode) and per pass
    warmup: int = 3  # eager warm-up calls, and side-stream calls before a capture
    profile_steps: int = 5  # steps recorded in each per-bucket trace
    mix_requests: int = 200  # requests replayed from a request mix
    traces: bool = True  # record the per-bucket eager/graphed traces
    repeats: int = 1  # interleaved eager/graphed timing rounds per bucket
    #: Record the profiled steps as NVTX sections of the Nsight Systems report this process
    #: runs under (``profile --nsys``) instead of torch-profiler trace files.
    nvtx_sections: bool = False


@dataclass
class CandidateResult:
    """One candidate's rows and summaries, ready for the results JSON."""

    name: str
    status: str  # measured | cuda_unavailable | error
    buckets: list[int | None]
    rows: list[dict[str, Any]] = field(default_factory=list)
    request_mix: dict[str, Any] | None = None
    recommendation: BucketRecommendation | None = None
    error: str | None = None
    priming_capture: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "buckets": self.buckets,
            "error": self.error,
            "priming_capture": self.priming_capture,
            "request_mix": self.request_mix,
            "recommendation": None
            if self.recommendation is None
            else self.recommendation.to_json(),
        }


def repeatable(eager: Mapping[str, Any]) -> bool:
    """Whether two eager calls of a row's step on the same inputs and random draws gave the
    same outputs (within the check's tolerance), so that its replay can be checked against
    eager: a step that changes its own state (parameters, buffers such as spectral norm's
    power-iteration vectors, an optimizer's moments) or runs nondeterministic kernels does
    not. Rows recorded before the check read as repeatable."""
    return eager.get("repeatable") is not False


def new_row(name: str, bucket: int | None, mode: str, *, in_bucket_set: bool) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(callable=name, bucket=bucket, mode=mode, in_bucket_set=in_bucket_set)
    return row


def trace_name(candidate: str, bucket: int | None, mode: str) -> str:
    """File name of a per-bucket trace: ``<name>.b<bucket>.<mode>.json.gz``."""
    safe = _SAFE_NAME.sub("_", candidate).strip("._") or "candidate"
    size = "x" if bucket is None else str(bucket)
    return f"{safe}.b{size}.{mode}.json.gz"


#: Prefix of the NVTX sections ``profile --nsys`` records (the script, each candidate run).
SECTION_PREFIX: Final = "traceinspect:"


def section_name(candidate: str, bucket: int | None, mode: str) -> str:
    """NVTX section of a candidate's profiled steps: ``traceinspect:<name>.b<bucket>.<mode>``."""
    return SECTION_PREFIX + trace_name(candidate, bucket, mode).removesuffix(".json.gz")


def nearest_rank(values: Sequence[int], share: float) -> int:
    """The nearest-rank percentile (``share`` in (0, 1]) of a non-empty sample."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    # round() first: 0.95 * 100 is 95.00000000000001 in binary floating point.
    rank = max(1, math.ceil(round(share * len(ordered), 9)))
    return ordered[min(rank, len(ordered)) - 1]


def candidate_buckets(candidate: GraphCandidate) -> list[int | None]:
    """The batch sizes captured: the registered buckets, else the example's own size."""
    if candidate.buckets is not None:
        return list(candidate.buckets)
    return [batch_size(candidate.example_inputs or (), candidate.batch_dim)]


def unavailable_result(candidate: GraphCandidate, reason: str) -> CandidateResult:
    """Rows for a machine without CUDA: every measurement null, nothing guessed.

    The request mix's fallback and padding shares depend only on the mix and the buckets,
    so they are still given.
    """
    buckets = candidate_buckets(candidate)
    result = CandidateResult(candidate.name, "cuda_unavailable", buckets, error=reason)
    for bucket in buckets:
        for mode in ("eager", "graphed"):
            row = new_row(candidate.name, bucket, mode, in_bucket_set=True)
            row["status"] = "cuda_unavailable"
            row["failure"] = {"phase": "setup", "kind": "cuda_unavailable", "message": reason}
            result.rows.append(row)
    if candidate.request_mix is not None:
        known = [b for b in buckets if b is not None]
        estimate = evaluate_bucket_set(known, candidate.request_mix, {}, {}, {})
        result.request_mix = {
            "sizes": _mix_json(candidate.request_mix),
            "registered_set": estimate.to_json(),
            "measured": None,
        }
    return result


#: ``results.json`` ``options.timing_order``: all timing rounds, then the profiled traces.
#: Recordings without it traced each mode after its first round; their later rounds can be
#: slowed by those sessions (the first round's p50 is then the unprofiled figure).
TIMING_ORDER: Final = "rounds-then-traces"


def measure_candidate(
    candidate: GraphCandidate,
    out_dir: Path,
    options: MeasureOptions,
    log: Callable[[str], None],
    *,
    torch: Any = None,
    before_graphed_round: Callable[[], None] | None = None,
) -> CandidateResult:
    """Measure one candidate on the current CUDA device (see the module docstring).

    ``torch`` replaces the torch module (tests pass one whose ``cuda`` is simulated);
    ``before_graphed_round`` is called before each timing round of a graphed step (the
    copy host-cost probe of :func:`traceinspect.commands.profile.measure_with_probe`).
    """
    torch = _torch() if torch is None else torch
    buckets = candidate_buckets(candidate)
    result = CandidateResult(candidate.name, "measured", buckets)
    session = _Measurement(candidate, out_dir, options, log, torch, before_graphed_round)
    try:
        for bucket in buckets:
            result.rows.extend(session.bucket(bucket))
        if candidate.request_mix is not None:
            result.rows.extend(session.mix_sizes(candidate.request_mix))
            result.request_mix, result.recommendation = session.mix(candidate.request_mix)
        session.record_traces()
    finally:
        result.priming_capture = session.priming
        session.release()
    return result


class _Measurement:
    """State kept across one candidate's buckets: live graphs and their static buffers."""

    def __init__(
        self,
        candidate: GraphCandidate,
        out_dir: Path,
        options: MeasureOptions,
        log: Callable[[str], None],
        torch: Any,
        before_graphed_round: Callable[[], None] | None = None,
    ) -> None:
        self.c = candidate
        self.before_graphed_round = before_graphed_round
        self.out_dir = out_dir
        self.opt = options
        self.log = log
        self.torch = torch
        self.graphs: dict[int, tuple[Any, tuple[Any, ...], Any]] = {}  # bucket -> graph, ins, out
        self.eager_ns: dict[int, int | None] = {}
        self.graphed_ns: dict[int, int | None] = {}
        self.pool_bytes: dict[int, int | None] = {}
        self.inputs: dict[int, tuple[Any, ...]] = {}
        self.broken: str | None = None  # set when the CUDA context is no longer usable
        self.priming: dict[str, Any] | None = None  # the discarded first capture
        #: Profiled traces still to record once every timing round is done: row, bucket,
        #: mode, step.
        self.pending_traces: list[tuple[dict[str, Any], int | None, str, Callable[[], Any]]] = []

    def record_traces(self) -> None:
        """Record the profiled traces of the rows measured (after all timing rounds)."""
        for row, bucket, mode, step in self.pending_traces:
            if self.broken is None:
                row["trace"] = self._trace(bucket, mode, step)
        self.pending_traces.clear()

    # -- one bucket -------------------------------------------------------------------

    def bucket(self, bucket: int | None) -> list[dict[str, Any]]:
        name = self.c.name
        eager = new_row(name, bucket, "eager", in_bucket_set=True)
        graphed = new_row(name, bucket, "graphed", in_bucket_set=True)
        if self.broken is not None:
            for row in (eager, graphed):
                _fail(row, "skipped", "setup", "cuda_unusable", self.broken)
            return [eager, graphed]
        try:
            inputs = self._inputs(bucket)
            new_inputs = tuple(rotate(x, self.c.batch_dim, self.torch, bucket) for x in inputs)
        except Exception as exc:  # noqa: BLE001 - the user's input factory failed
            for row in (eager, graphed):
                _fail_exc(row, "inputs", exc)
            return [eager, graphed]
        rounds: dict[str, _Rounds] = {}
        expected = self._eager(eager, new_inputs, rounds=rounds)
        if eager["status"] != "ok":
            _fail(graphed, "skipped", "eager", "eager_failed", "the eager call failed")
            return [eager, graphed]
        if not repeatable(eager):
            expected = None  # nothing to check the replay against
        drifts = bool(eager["repeat_max_abs_error"])
        self._graphed(
            graphed, bucket, inputs, new_inputs, expected, drifts, rounds=rounds, eager=eager
        )
        self._more_rounds(rounds)
        for row in (eager, graphed):
            if row["mode"] in rounds:
                _fill_rounds(row, rounds[row["mode"]])
        self.log(_progress(name, bucket, eager, graphed))
        if bucket is not None:
            self.eager_ns[bucket] = eager["host_p50_ns"]
            # A graph whose outputs differ from eager is never recommended.
            usable = graphed["status"] == "ok"
            self.graphed_ns[bucket] = graphed["host_p50_ns"] if usable else None
            self.pool_bytes[bucket] = graphed["graph_pool_bytes"]
        return [eager, graphed]

    def _more_rounds(self, rounds: dict[str, _Rounds]) -> None:
        """Timing rounds 2..repeats, each mode in turn (eager, graphed, eager, ...)."""
        for number in range(2, self.opt.repeats + 1):
            for mode in ("eager", "graphed"):
                timed = rounds.get(mode)
                if timed is None or timed.stopped is not None:
                    continue
                if mode == "graphed":
                    self._before_graphed_round()
                try:
                    host, gpu = _time_steps(timed.step, self.opt.iters, self.torch)
                except Exception as exc:  # noqa: BLE001 - the rounds so far stand
                    timed.stopped = f"round {number}: {first_error(exc)}"
                    self.log(f"  {self.c.name}: {mode} {timed.stopped}")
                    self._check_context()
                    if self.broken is not None:
                        return
                    continue
                timed.host.append(host)
                timed.gpu.append(gpu)

    def _eager(
        self,
        row: dict[str, Any],
        inputs: tuple[Any, ...],
        *,
        trace: bool = True,
        rounds: dict[str, _Rounds] | None = None,
    ) -> Any:
        torch, fn = self.torch, self.c.fn
        try:
            for _ in range(self.opt.warmup):
                fn(*inputs)
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            row["allocated_before_bytes"] = int(torch.cuda.memory_allocated())
            host, gpu = _time_steps(lambda: fn(*inputs), self.opt.iters, torch)
            expected = self._reference_call(inputs)
            # The same call again, with the same draws: a step that changes its own state
            # (parameters, buffers, an optimizer's moments) or runs nondeterministic kernels
            # differs from itself, and its replay cannot be checked against it.
            again = self._reference_call(inputs)
        except Exception as exc:  # noqa: BLE001 - reported in the row
            _fail_exc(row, "eager", exc)
            self._check_context()
            return None
        _fill_timing(row, host, gpu)
        same, repeat_error, _ = compare_outputs(expected, again, torch)
        row["repeatable"], row["repeat_max_abs_error"] = same, repeat_error
        if same is False:
            self.log(
                f"  {self.c.name}: two eager calls on the same inputs differ (max |error| "
                f"{repeat_error:.3g}): the replay's outputs are not checked"
            )
        if rounds is not None:
            rounds["eager"] = _Rounds(lambda: fn(*inputs), [host], [gpu])
        else:
            _fill_rounds(row, _Rounds(lambda: fn(*inputs), [host], [gpu]))
        row["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        row["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        row["status"] = "ok"
        if trace and self.opt.traces:
            self.pending_traces.append((row, row["bucket"], "eager", lambda: fn(*inputs)))
        return expected

    def _graphed(
        self,
        row: dict[str, Any],
        bucket: int | None,
        inputs: tuple[Any, ...],
        new_inputs: tuple[Any, ...],
        expected: Any,
        drifts: bool,
        *,
        rounds: dict[str, _Rounds],
        eager: dict[str, Any],
    ) -> None:
        """Capture, replay, time and check one bucket. ``drifts``: two eager calls on the
        same inputs were within tolerance of each other but not identical. ``eager``: the
        bucket's eager row, marked unrepeatable where the replay's check finds eager
        nondeterministic."""
        torch, fn = self.torch, self.c.fn
        static = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(self.opt.warmup):
                    fn(*static)
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            _fail_exc(row, "warmup", exc)
            self._check_context()
            return
        try:
            if self.priming is None:
                # The first capture of a process or callable also pays one-time costs (the
                # capture stream's cuBLAS workspace, lazy library set-up): a priming capture,
                # discarded, keeps them out of the first bucket's capture time and pool.
                _, _, ns, pool = self._capture(static)
                self.priming = {"bucket": bucket, "capture_ns": ns, "pool_bytes": pool}
            torch.cuda.reset_peak_memory_stats()
            row["allocated_before_bytes"] = int(torch.cuda.memory_allocated())
            graph, static_out, row["capture_ns"], row["graph_pool_bytes"] = self._capture(static)
        except Exception as exc:  # noqa: BLE001 - a failed capture is a result
            failure = classify_exception(exc)
            row["status"] = "capture_failed"
            row["failure"] = {"phase": "capture", **failure.to_json()}
            self.log(
                f"  {self.c.name} b{bucket}: capture failed ({failure.kind}): {failure.message}"
            )
            self._check_context()
            return

        # What each replay copies into the static inputs first: the prediction charges it.
        row["input_copy_bytes"] = [
            int(b.numel() * b.element_size()) for b in static if isinstance(b, torch.Tensor)
        ]

        def step() -> None:
            for buffer, value in zip(static, new_inputs, strict=True):
                if isinstance(buffer, torch.Tensor):
                    buffer.copy_(value)
            graph.replay()

        try:
            start = time.perf_counter_ns()
            step()
            torch.cuda.synchronize()
            row["first_replay_ns"] = time.perf_counter_ns() - start
            self._before_graphed_round()
            host, gpu = _time_steps(step, self.opt.iters, torch)
            with _same_draws(torch):  # the random numbers the eager reference drew
                step()
                torch.cuda.synchronize()
            correct, max_error, tolerance = (
                compare_outputs(expected, static_out, torch)
                if expected is not None
                else (None, None, None)
            )
            checked_against = None if expected is None else "eager"
            if correct is False and drifts and max_error is not None:
                # A step that moves its own state a little on every call (a training step,
                # spectral norm's power iteration) drifts over the warm-up, capture and
                # timing steps between the eager reference and this replay, and its drift
                # per step can grow past the tolerance on the way. Check the replay against
                # an eager call made right after it instead, allowing twice what that call
                # and the next eager one differ by: one step of the step's own drift.
                check = self._check_after_replay(static_out, new_inputs)
                if check is not None:
                    correct, max_error, tolerance = True, check[0], check[1]
                    checked_against = "eager_after_replay"
            elif correct is False:
                # Two identical eager calls do not prove a step deterministic: atomics (an
                # index_add_ or scatter_add_ in float) can land in the same order twice by
                # chance. Call it again; if eager differs from itself, the replay is
                # unchecked, as for a step found unrepeatable at first.
                nondeterministic = self._eager_spread(new_inputs, expected)
                if nondeterministic is not None:
                    correct, checked_against = None, None
                    eager["repeatable"] = False
                    eager["repeat_max_abs_error"] = nondeterministic
        except Exception as exc:  # noqa: BLE001
            _fail_exc(row, "replay", exc)
            self._check_context()
            return
        _fill_timing(row, host, gpu)
        rounds["graphed"] = _Rounds(step, [host], [gpu])
        row["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        row["peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
        status = "incorrect" if correct is False else "ok"
        row.update(
            correct=correct,
            max_abs_error=max_error,
            tolerance=tolerance,
            checked_against=checked_against,
            status=status,
        )
        if self.opt.traces:
            self.pending_traces.append((row, bucket, "graphed", step))
        if bucket is not None and status == "ok":
            self.graphs[bucket] = (graph, static, static_out)

    def _reference_call(self, inputs: tuple[Any, ...]) -> Any:
        """The eager step's outputs on ``inputs``, copied, drawing the random numbers every
        reference call draws (:func:`_same_draws`), the device synchronized after."""
        torch = self.torch
        with _same_draws(torch):
            out = clone_tensors(self.c.fn(*inputs), torch)
            torch.cuda.synchronize()
        return out

    def _eager_spread(self, new_inputs: tuple[Any, ...], expected: Any) -> float | None:
        """Call the eager step :data:`RECHECK_CALLS` times more on ``new_inputs`` with the
        reference's draws: the largest |error| of a call that differs from ``expected``
        beyond tolerance (the step runs nondeterministic kernels), else None."""
        worst: float | None = None
        for _ in range(RECHECK_CALLS):
            call = self._reference_call(new_inputs)
            same, error, _ = compare_outputs(expected, call, self.torch)
            if same is False and error is not None:
                worst = max(worst or 0.0, error)
        if worst is not None:
            self.log(
                f"  {self.c.name}: the replay differs from eager, and so does eager from itself "
                f"on the same inputs and draws (max |error| {worst:.3g} over "
                f"{RECHECK_CALLS} more calls; the first two agreed): nondeterministic "
                "kernels, the replay's outputs are not checked"
            )
        return worst

    def _check_after_replay(
        self, static_out: Any, new_inputs: tuple[Any, ...]
    ) -> tuple[float, str] | None:
        """Compare the replay's outputs with an eager call made right after it, whose state
        is one step on: (max |error|, the tolerance used) where they agree within tolerance
        or within twice what that eager call and the next one differ by, else ``None``."""
        torch = self.torch
        replayed = clone_tensors(static_out, torch)
        calls = [self._reference_call(new_inputs) for _ in range(2)]
        ok, error, tolerance = compare_outputs(calls[0], replayed, torch)
        _, step_error, _ = compare_outputs(calls[0], calls[1], torch)
        if error is None or step_error is None:
            return None
        within_drift = error <= 2 * step_error
        self.log(
            f"  {self.c.name}: the replay differs from the first eager reference as the step "
            f"drifts; from an eager call right after it by {error:.3g}, while that call and "
            f"the next eager one differ by {step_error:.3g}"
            + (": consistent" if ok or within_drift else ": not explained by the drift")
        )
        if ok:
            return error, tolerance or ""
        if within_drift:
            return error, f"{tolerance}; or 2 x one eager step's drift ({step_error:.3g})"
        return None

    def _before_graphed_round(self) -> None:
        if self.before_graphed_round is not None:
            self.before_graphed_round()

    def _capture(self, static: tuple[Any, ...]) -> tuple[Any, Any, int, int]:
        """Capture ``fn(*static)`` into a new graph with a private pool: (graph, outputs,
        capture ns, pool bytes). The capture time includes instantiation."""
        torch = self.torch
        # torch.cuda.graph empties the allocator cache before capturing; doing it first makes
        # the growth of reserved memory across the capture the private pool's own segments.
        gc.collect()
        torch.cuda.empty_cache()
        reserved_before = int(torch.cuda.memory_reserved())
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.current_stream()
        try:
            start = time.perf_counter_ns()
            with torch.cuda.graph(graph, pool=torch.cuda.graph_pool_handle()):
                static_out = self.c.fn(*static)
            torch.cuda.synchronize()
            capture_ns = time.perf_counter_ns() - start
        except BaseException:
            # torch.cuda.graph leaves its capture stream current when ending the capture
            # raises; put back ours.
            torch.cuda.set_stream(stream)
            raise
        return graph, static_out, capture_ns, int(torch.cuda.memory_reserved()) - reserved_before

    # -- request mix ------------------------------------------------------------------

    def mix_sizes(self, mix: Mapping[int, float]) -> list[dict[str, Any]]:
        """Eager rows for the mix's sizes that are not buckets (their fallback latency)."""
        rows = []
        by_weight = sorted(mix, key=lambda s: (-mix[s], s))[:MAX_MIX_SIZES]
        for size in sorted(by_weight):
            if size in self.eager_ns or self.broken is not None:
                continue
            row = new_row(self.c.name, size, "eager", in_bucket_set=False)
            try:
                inputs = tuple(
                    rotate(x, self.c.batch_dim, self.torch, size) for x in self._inputs(size)
                )
            except Exception as exc:  # noqa: BLE001
                _fail_exc(row, "inputs", exc)
                rows.append(row)
                continue
            self._eager(row, inputs, trace=False)
            self.eager_ns[size] = row["host_p50_ns"]
            rows.append(row)
        return rows

    def mix(self, mix: Mapping[int, float]) -> tuple[dict[str, Any], BucketRecommendation]:
        registered = [b for b in candidate_buckets(self.c) if b is not None]
        estimate = evaluate_bucket_set(
            registered, mix, self.graphed_ns, self.eager_ns, self.pool_bytes
        )
        recommendation = recommend_buckets(mix, self.graphed_ns, self.eager_ns, self.pool_bytes)
        measured = None if self.broken is not None else self._replay_mix(mix)
        summary = {
            "sizes": _mix_json(mix),
            "registered_set": estimate.to_json(),
            "measured": measured,
        }
        return summary, recommendation

    def _replay_mix(self, mix: Mapping[int, float]) -> dict[str, Any] | None:
        """Serve a fixed sequence of requests drawn from the mix with the captured graphs."""
        torch, fn, dim = self.torch, self.c.fn, self.c.batch_dim
        requests = request_sequence(mix, self.opt.mix_requests)
        captured = sorted(self.graphs)
        sizes = sorted(set(requests))
        try:
            inputs = {n: self._inputs(n) for n in sizes}
        except Exception:  # noqa: BLE001 - already reported on the size's own row
            return None
        latencies: list[int] = []
        fallback = padded = computed = 0
        torch.cuda.synchronize()
        try:
            for n in requests:
                bucket = serving_bucket(n, captured)
                start = time.perf_counter_ns()
                if bucket is None:
                    fn(*inputs[n])
                else:
                    graph, static, _ = self.graphs[bucket]
                    for buffer, value in zip(static, inputs[n], strict=True):
                        if not batch_major(buffer, dim, torch):
                            continue
                        if value.shape == buffer.shape:  # the bucket's size, or not the batch
                            buffer.copy_(value)
                        else:
                            buffer.narrow(dim, 0, n).copy_(value)
                    graph.replay()
                torch.cuda.synchronize()
                latencies.append(time.perf_counter_ns() - start)
                if bucket is None:
                    fallback += 1
                else:
                    padded += bucket - n
                    computed += bucket
        except Exception as exc:  # noqa: BLE001
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "requests": len(requests),
            "buckets_used": captured,
            "mean_ns": round(sum(latencies) / len(latencies)),
            "p50_ns": nearest_rank(latencies, 0.50),
            "p95_ns": nearest_rank(latencies, 0.95),
            "fallback_requests": fallback,
            "padding_share": padded / computed if computed else None,
        }

    # -- helpers ----------------------------------------------------------------------

    def _inputs(self, size: int | None) -> tuple[Any, ...]:
        if size is not None and size in self.inputs:
            return self.inputs[size]
        if self.c.make_inputs is not None:
            if size is None:
                raise ValueError("an input factory needs a batch size")
            made = tuple(self.c.make_inputs(size))
        else:
            example = self.c.example_inputs or ()
            # Without buckets the example is captured as it is: its own batch is the bucket,
            # and arguments of another length along batch_dim (a position, a step counter)
            # are not the batch.
            own = self.c.buckets is None and size == candidate_buckets(self.c)[0]
            batch = batch_size(example, self.c.batch_dim)
            made = (
                example
                if size is None or own
                else tuple(resize(x, size, self.c.batch_dim, self.torch, batch) for x in example)
            )
        if size is not None:
            self.inputs[size] = made
        return made

    def _trace(self, bucket: int | None, mode: str, step: Callable[[], Any]) -> str | None:
        torch = self.torch
        if self.opt.nvtx_sections:
            return self._section(bucket, mode, step)
        name = trace_name(self.c.name, bucket, mode)
        path = self.out_dir / name
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        try:
            prof = profiler(torch, activities)
            start_profiler(prof)
            try:
                for _ in range(self.opt.profile_steps):
                    with torch.profiler.record_function(self.c.name):
                        step()
                torch.cuda.synchronize()
            finally:
                prof.stop()
            export_trace(prof, path)
        except Exception as exc:  # noqa: BLE001 - a missing trace is noted, not fatal
            self.log(f"  {self.c.name} b{bucket}: {mode} trace not recorded: {exc}")
            return None
        return name

    def _section(self, bucket: int | None, mode: str, step: Callable[[], Any]) -> str | None:
        """The profiled steps inside an NVTX range named :func:`section_name`, each step in
        a range named after the candidate (as the trace files hold them)."""
        from traceinspect.collect.regions import region

        name = section_name(self.c.name, bucket, mode)
        try:
            with region(name):
                for _ in range(self.opt.profile_steps):
                    with region(self.c.name):
                        step()
                self.torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a missing section is noted, not fatal
            self.log(f"  {self.c.name} b{bucket}: {mode} section not recorded: {exc}")
            return None
        return name

    def _check_context(self) -> None:
        try:
            self.torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            self.broken = f"CUDA context unusable after an error: {first_error(exc)}"

    def release(self) -> None:
        self.graphs.clear()
        self.inputs.clear()
        gc.collect()
        if self.broken is None:
            try:
                self.torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001, S110 - best effort on the way out
                pass


def request_sequence(mix: Mapping[int, float], count: int, seed: int = 0) -> list[int]:
    """``count`` request sizes in the mix's proportions (largest remainders), shuffled with a
    fixed seed so every run replays the same sequence."""
    total = sum(mix.values())
    quotas = {size: count * weight / total for size, weight in mix.items()}
    counts = {size: int(q) for size, q in quotas.items()}
    left = count - sum(counts.values())
    for size in sorted(quotas, key=lambda s: (-(quotas[s] - counts[s]), s))[:left]:
        counts[size] += 1
    sequence = [size for size in sorted(counts) for _ in range(counts[size])]
    random.Random(seed).shuffle(sequence)
    return sequence


def profiler(torch: Any, activities: Sequence[Any], **options: Any) -> Any:
    """A ``torch.profiler.profile`` for ``activities`` that also records which event each
    stream wait waited on (Kineto's ``enable_cuda_sync_events``, where this torch has it):
    the replay estimate then reads cross-stream dependencies exactly instead of guessing
    them from the order of the host calls."""
    config = None
    cuda = torch.profiler.ProfilerActivity.CUDA in activities
    make = getattr(getattr(torch._C, "_profiler", None), "_ExperimentalConfig", None)
    if cuda and make is not None:
        try:
            config = make(enable_cuda_sync_events=True)
        except TypeError:  # a torch whose config lacks the option
            config = None
    if config is not None:
        options["experimental_config"] = config
    return torch.profiler.profile(activities=activities, **options)


def start_profiler(prof: Any) -> None:
    """Start a ``torch.profiler.profile`` without torch's warning that events are cleared
    at the end of each cycle (each profiler here records exactly one cycle)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Pp]rofiler clears events")
        prof.start()


def export_trace(prof: Any, path: Path) -> None:
    """Export a finished profiler's trace to ``path`` (.json.gz) through a temporary file."""
    tmp = path.with_name(f".{path.name[: -len('.json.gz')]}.tmp{os.getpid()}.json.gz")
    try:
        prof.export_chrome_trace(str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# -- module helpers ---------------------------------------------------------------------


def _torch() -> Any:
    return importlib.import_module("torch")


def _time_steps(step: Callable[[], Any], iters: int, torch: Any) -> tuple[list[int], list[int]]:
    """Host wall clock per synchronized step, then (second pass) GPU time by CUDA events."""
    host: list[int] = []
    torch.cuda.synchronize()
    for _ in range(iters):
        start = time.perf_counter_ns()
        step()
        torch.cuda.synchronize()
        host.append(time.perf_counter_ns() - start)
    gpu: list[int] = []
    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(iters):
        begin.record()
        step()
        end.record()
        end.synchronize()
        gpu.append(round(begin.elapsed_time(end) * 1_000_000))  # ms -> ns
    return host, gpu


@dataclass
class _Rounds:
    """One mode's timing rounds in a bucket: the step, each round's samples (ns)."""

    step: Callable[[], Any]
    host: list[list[int]]
    gpu: list[list[int]]
    stopped: str | None = None  # why the rounds ended early


def _fill_rounds(row: dict[str, Any], rounds: _Rounds) -> None:
    """Timing pooled over all rounds, and each round's p50 with their spread."""
    _fill_timing(row, [t for r in rounds.host for t in r], [t for r in rounds.gpu for t in r])
    per_round = [nearest_rank(r, 0.50) for r in rounds.host]
    row["rounds"] = len(per_round)
    row["round_host_p50_ns"] = per_round
    row["round_host_p50_min_ns"] = min(per_round)
    row["round_host_p50_max_ns"] = max(per_round)
    row["round_gpu_p50_ns"] = [nearest_rank(r, 0.50) for r in rounds.gpu]


def _fill_timing(row: dict[str, Any], host: list[int], gpu: list[int]) -> None:
    row["iterations"] = len(host)
    row["host_p50_ns"] = nearest_rank(host, 0.50)
    row["host_p95_ns"] = nearest_rank(host, 0.95)
    row["gpu_p50_ns"] = nearest_rank(gpu, 0.50)
    row["gpu_p95_ns"] = nearest_rank(gpu, 0.95)


def _fail(row: dict[str, Any], status: str, phase: str, kind: str, message: str) -> None:
    row["status"] = status
    row["failure"] = {"phase": phase, "kind": kind, "message": message}


def _fail_exc(row: dict[str, Any], phase: str, exc: BaseException) -> None:
    first = first_error(exc)
    message = str(first).strip().split("\n")[0]
    row["status"] = "error"
    row["failure"] = {
        "phase": phase,
        "kind": "error",
        "error_type": type(first).__name__,
        "message": message,
    }


def _mix_json(mix: Mapping[int, float]) -> dict[str, float]:
    return {str(size): weight for size, weight in mix.items()}


def _progress(name: str, bucket: int | None, eager: dict[str, Any], graphed: dict[str, Any]) -> str:
    def us(ns: int | None) -> str:
        return "-" if ns is None else f"{ns / 1000:.1f} µs"

    size = "?" if bucket is None else bucket
    return (
        f"  {name} b{size}: eager p50 {us(eager['host_p50_ns'])}, "
        f"graphed p50 {us(graphed['host_p50_ns'])} ({graphed['status']})"
    )


__all__ = [
    "ROW_FIELDS",
    "CandidateResult",
    "MeasureOptions",
    "measure_candidate",
    "nearest_rank",
    "request_sequence",
    "trace_name",
    "unavailable_result",
]
