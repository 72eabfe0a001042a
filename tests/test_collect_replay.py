"""The replay measurement's control flow on CPU, with `torch.cuda` simulated.

CI has no GPU, so a stand-in for `torch.cuda` plays the parts the measurement uses: streams
and events, the allocator's counters, and a graph whose replay re-runs the captured
computation on the static buffers (the test callables hand it over while capturing). Timings
are real host clock readings of CPU work; what is asserted is what the flow must produce
whatever they are: rows, statuses, nulls, correctness, the pool's size, the request mix.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

import traceinspect.collect.replay as replay_module
from traceinspect.collect.candidates import GraphCandidate
from traceinspect.collect.replay import ROW_FIELDS, MeasureOptions, measure_candidate

torch = pytest.importorskip("torch")

NOT_PERMITTED = "CUDA error: operation not permitted when stream is capturing"
POOL_BYTES = 2 * 1024 * 1024  # what the simulated capture adds to reserved memory


class FakeGraph:
    def __init__(self) -> None:
        self.replay_fn: Callable[[], None] | None = None

    def replay(self) -> None:
        assert self.replay_fn is not None, "replaying a graph that captured nothing"
        self.replay_fn()


class FakeCapture:
    def __init__(self, cuda: FakeCuda, graph: FakeGraph) -> None:
        self.cuda, self.graph = cuda, graph

    def __enter__(self) -> None:
        self.cuda.capturing = self.graph
        self.cuda.reserved += POOL_BYTES

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cuda.capturing = None
        if exc is not None:  # as torch: ending an invalidated capture raises again
            raise RuntimeError(
                "CUDA error: operation failed due to a previous error during capture"
            )


class FakeEvent:
    def __init__(self, enable_timing: bool = False) -> None:
        self.at = 0

    def record(self) -> None:
        self.at = time.perf_counter_ns()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.at - self.at) / 1e6


class FakeCuda:
    """The slice of `torch.cuda` that the measurement calls."""

    def __init__(self) -> None:
        self.capturing: FakeGraph | None = None
        self.reserved = 10 * 1024 * 1024
        self.streams_set: list[object] = []

    def synchronize(self) -> None:
        pass

    def reset_peak_memory_stats(self) -> None:
        pass

    def max_memory_allocated(self) -> int:
        return 1000

    def memory_allocated(self) -> int:
        return 600

    def max_memory_reserved(self) -> int:
        return self.reserved

    def memory_reserved(self) -> int:
        return self.reserved

    def empty_cache(self) -> None:
        pass

    def current_stream(self) -> Any:
        return _STREAM

    def set_stream(self, stream: object) -> None:
        self.streams_set.append(stream)

    def Stream(self) -> Any:  # noqa: N802 - torch's name
        return _STREAM

    def stream(self, stream: object) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def Event(self, enable_timing: bool = False) -> FakeEvent:  # noqa: N802
        return FakeEvent(enable_timing)

    def graph_pool_handle(self) -> tuple[int, int]:
        return (0, 1)

    def CUDAGraph(self) -> FakeGraph:  # noqa: N802
        return FakeGraph()

    def graph(self, graph: FakeGraph, pool: object = None) -> FakeCapture:
        return FakeCapture(self, graph)


class _Stream:
    def wait_stream(self, other: object) -> None:
        pass


_STREAM = _Stream()


class FakeTorch:
    """Real torch for tensors, the simulated `cuda` above."""

    def __init__(self) -> None:
        self.cuda = FakeCuda()

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)


def capturable(cuda: FakeCuda, compute: Callable[..., Any]) -> Callable[..., Any]:
    """`compute` as a graph candidate: while capturing, hand the graph a replay that
    recomputes into the captured output buffer."""

    def fn(*args: Any) -> Any:
        out = compute(*args)
        graph = cuda.capturing
        if graph is not None:

            def replay() -> None:
                out.copy_(compute(*args))

            graph.replay_fn = replay
        return out

    return fn


def _candidate(fn: Callable[..., Any], example: tuple[Any, ...], **kw: Any) -> GraphCandidate:
    return GraphCandidate(
        name=kw.pop("name", "cand"),
        fn=fn,
        example_inputs=example,
        make_inputs=None,
        buckets=kw.pop("buckets", None),
        request_mix=kw.pop("request_mix", None),
        batch_dim=0,
    )


OPTIONS = MeasureOptions(iters=5, warmup=1, profile_steps=1, mix_requests=20, traces=False)


def _measure(candidate: GraphCandidate, fake: FakeTorch, tmp_path: Path) -> Any:
    lines: list[str] = []
    result = measure_candidate(candidate, tmp_path, OPTIONS, lines.append, torch=fake)
    return result, lines


def test_buckets_are_measured_eager_and_graphed(tmp_path: Path) -> None:
    fake = FakeTorch()
    weight = torch.randn(8, 8)
    fn = capturable(fake.cuda, lambda x: torch.tanh(x @ weight))
    candidate = _candidate(
        fn, (torch.randn(3, 8),), buckets=(1, 2, 4), request_mix={1: 6.0, 3: 3.0, 8: 1.0}
    )
    result, lines = _measure(candidate, fake, tmp_path)
    rows = result.rows
    # Two rows per bucket, then the eager-only mix sizes that are not buckets (3 and 8).
    assert [(r["bucket"], r["mode"], r["in_bucket_set"]) for r in rows] == [
        (1, "eager", True),
        (1, "graphed", True),
        (2, "eager", True),
        (2, "graphed", True),
        (4, "eager", True),
        (4, "graphed", True),
        (3, "eager", False),
        (8, "eager", False),
    ]
    for row in rows:
        assert list(row) == list(ROW_FIELDS)
        assert row["status"] == "ok"
        assert row["iterations"] == 5
        assert row["host_p50_ns"] > 0 and row["host_p95_ns"] >= row["host_p50_ns"]
        assert row["trace"] is None  # traces off
        assert row["predicted_ns"] is None
    for row in rows:
        if row["mode"] == "graphed":
            assert row["correct"] is True
            assert row["max_abs_error"] == 0.0
            assert row["tolerance"] == "float32 rtol=1.3e-06 atol=1e-05"
            assert row["graph_pool_bytes"] == POOL_BYTES
            assert row["capture_ns"] > 0 and row["first_replay_ns"] > 0
        else:
            assert (row["capture_ns"], row["graph_pool_bytes"], row["correct"]) == (None,) * 3
    mix = result.request_mix
    assert mix["registered_set"]["fallback_share"] == 0.1  # size 8 exceeds bucket 4
    assert mix["registered_set"]["padding_share"] == 3 / 18  # 3 -> 4: 3 rows of 6*1 + 3*4
    assert mix["registered_set"]["graph_memory_bytes"] == 3 * POOL_BYTES
    measured = mix["measured"]
    assert measured["requests"] == 20
    assert measured["fallback_requests"] == 2  # 2 of 20 requests are size 8
    assert measured["padding_share"] == 6 / 36  # 12 of size 1, 6 of size 3 -> bucket 4
    assert result.recommendation is not None and result.recommendation.chosen is not None
    assert len(lines) == 3  # one progress line per bucket
    # The first bucket was captured twice: a priming capture (discarded) took one-time costs.
    priming = result.priming_capture
    assert (priming["bucket"], priming["pool_bytes"]) == (1, POOL_BYTES)
    assert priming["capture_ns"] > 0
    assert all(r["allocated_before_bytes"] == 600 for r in rows)


def test_wrong_graph_output_is_flagged_and_never_recommended(tmp_path: Path) -> None:
    fake = FakeTorch()

    def baked(x: Any) -> Any:
        # A Python value read during the call is frozen into the graph: the capture saw 1.0,
        # eager calls see 0.0 (think of a step counter or a .item() taken outside).
        bias = 1.0 if fake.cuda.capturing is not None else 0.0
        out = x * 2 + bias
        graph = fake.cuda.capturing
        if graph is not None:
            graph.replay_fn = lambda: out.copy_(x * 2 + bias)
        return out

    candidate = _candidate(baked, (torch.ones(2, 4),), buckets=(2,), request_mix={2: 1.0})
    result, _ = _measure(candidate, fake, tmp_path)
    graphed = result.rows[1]
    assert graphed["status"] == "incorrect"
    assert graphed["correct"] is False
    assert graphed["max_abs_error"] == 1.0
    # The only bucket is unusable: the pick is to stay eager.
    assert result.recommendation.chosen.buckets == ()
    assert result.request_mix["measured"]["fallback_requests"] == 20


def test_a_step_that_changes_its_own_state_is_not_judged_incorrect(tmp_path: Path) -> None:
    """A step that updates state of its own on every call (a training step's parameters, a
    spectral-norm layer's power-iteration vectors) gives other outputs on every call, eager
    or replayed: two eager calls on the same inputs and draws differ, so the replay is not
    checked against eager (neither correct nor incorrect) and stays usable."""
    fake = FakeTorch()
    state = torch.zeros(4)

    def update(x: Any) -> Any:
        state.add_(1.0)
        return x + state

    candidate = _candidate(
        capturable(fake.cuda, update), (torch.ones(2, 4),), buckets=(2,), request_mix={2: 1.0}
    )
    result, lines = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert (eager["repeatable"], eager["repeat_max_abs_error"]) == (False, 1.0)
    assert (graphed["status"], graphed["correct"], graphed["max_abs_error"]) == ("ok", None, None)
    assert graphed["repeatable"] is None  # a graphed row has no repeat check
    assert any("two eager calls on the same inputs differ (max |error| 1)" in x for x in lines)
    # the bucket takes part in the recommendation (an incorrect one never does)
    assert (2,) in [s.buckets for s in result.recommendation.shown]


def test_a_step_that_drifts_slowly_is_checked_against_eager_right_after_the_replay(
    tmp_path: Path,
) -> None:
    """Two eager calls one step apart agree within tolerance, but the step moves its state on
    every call (spectral norm's power iteration, an optimizer at a small learning rate), so by
    the time of the checked replay it has drifted past the first reference. An eager call
    made right after the replay is one step away again: the replay is correct against it."""
    fake = FakeTorch()
    state = torch.zeros(4)

    def drift(x: Any) -> Any:
        state.add_(4e-6)  # below float32's atol 1e-5 per call, past it within three calls
        return x + state

    candidate = _candidate(capturable(fake.cuda, drift), (torch.ones(2, 4),), buckets=(2,))
    result, lines = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert eager["repeatable"] is True
    assert eager["repeat_max_abs_error"] == pytest.approx(4e-6, rel=0.05)
    assert (graphed["status"], graphed["correct"]) == ("ok", True)
    assert graphed["checked_against"] == "eager_after_replay"
    assert graphed["max_abs_error"] == pytest.approx(4e-6, rel=0.05)
    assert graphed["tolerance"] == "float32 rtol=1.3e-06 atol=1e-05"
    assert any("from an eager call right after it by" in x and "consistent" in x for x in lines)


def test_a_drift_that_grows_past_the_tolerance_is_judged_against_the_drift(
    tmp_path: Path,
) -> None:
    """The first two eager calls agree within tolerance, but the drift per step grows past it
    later (spectral norm's power iteration on the H200: 7.8e-6 at first, 2e-5 by the
    replay): a replay one step from the eager call after it, which is one step from the next,
    is consistent with the step's own drift."""
    fake = FakeTorch()
    state = torch.zeros(4)
    captured = []

    def drift(x: Any) -> Any:
        if fake.cuda.capturing is not None:
            captured.append(True)
        state.add_(3e-5 if captured else 4e-6)
        return x + state

    candidate = _candidate(capturable(fake.cuda, drift), (torch.ones(2, 4),), buckets=(2,))
    result, lines = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert eager["repeatable"] is True
    assert (graphed["status"], graphed["correct"]) == ("ok", True)
    assert graphed["checked_against"] == "eager_after_replay"
    assert graphed["max_abs_error"] == pytest.approx(3e-5, rel=0.05)
    assert "or 2 x one eager step's drift (2.9" in graphed["tolerance"]


def test_a_graph_that_baked_in_a_value_still_fails_the_second_check(tmp_path: Path) -> None:
    """The re-check does not excuse a real mismatch: a drifting step whose graph also froze a
    value misses the eager call right after the replay as well."""
    fake = FakeTorch()
    state = torch.zeros(4)

    def drift_and_bake(x: Any) -> Any:
        state.add_(4e-6)
        bias = 1.0 if fake.cuda.capturing is not None else 0.0
        out = x + state + bias
        graph = fake.cuda.capturing
        if graph is not None:
            graph.replay_fn = lambda: out.copy_(x + state.add_(4e-6) + bias)
        return out

    candidate = _candidate(drift_and_bake, (torch.ones(2, 4),), buckets=(2,))
    result, _ = _measure(candidate, fake, tmp_path)
    graphed = result.rows[1]
    assert (graphed["status"], graphed["correct"]) == ("incorrect", False)
    assert graphed["checked_against"] == "eager"
    assert graphed["max_abs_error"] == pytest.approx(1.0, abs=1e-3)


def test_a_step_whose_first_two_eager_calls_agree_by_chance_is_not_judged_incorrect(
    tmp_path: Path,
) -> None:
    """Nondeterministic kernels (atomics in float, as LightGCN's ``index_add_`` before a
    ``topk``) can give the same outputs on the two reference calls by chance, then others in
    the replay: the replay's miss sends eager back for more calls, which differ from the
    reference too, so the step is read unrepeatable and its replay unchecked, not incorrect."""
    fake = FakeTorch()
    calls = {"after_capture": 0}

    def racy(x: Any) -> Any:
        graph = fake.cuda.capturing
        if graph is not None:  # the replay's atomics land apart from the reference's
            out = x * 3 + 1
            graph.replay_fn = lambda: out.copy_(x * 3 + 1)
            calls["after_capture"] = 1
            return out
        if calls["after_capture"]:  # from then on, every other eager call lands apart too
            calls["after_capture"] += 1
            return x * 3 + calls["after_capture"] % 2
        return x * 3

    candidate = _candidate(racy, (torch.ones(2, 4),), buckets=(2,))
    result, lines = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert (eager["repeatable"], eager["repeat_max_abs_error"]) == (False, 1.0)
    assert (graphed["status"], graphed["correct"], graphed["checked_against"]) == (
        "ok",
        None,
        None,
    )
    assert any("and so does eager from itself" in x for x in lines)


def test_a_deterministic_step_whose_graph_baked_a_value_stays_incorrect(tmp_path: Path) -> None:
    """The re-check is no excuse for a real mismatch: eager called again agrees with itself,
    so a graph that froze a value is still incorrect."""
    fake = FakeTorch()

    def bake(x: Any) -> Any:
        out = x * 3 + (1.0 if fake.cuda.capturing is not None else 0.0)
        graph = fake.cuda.capturing
        if graph is not None:
            graph.replay_fn = lambda: None  # replays the captured outputs as they were
        return out

    candidate = _candidate(bake, (torch.ones(2, 4),), buckets=(2,))
    result, lines = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert (eager["repeatable"], eager["repeat_max_abs_error"]) == (True, 0.0)
    assert (graphed["status"], graphed["correct"]) == ("incorrect", False)
    assert graphed["max_abs_error"] == pytest.approx(1.0)
    assert not any("and so does eager from itself" in x for x in lines)


def test_a_repeatable_step_says_so(tmp_path: Path) -> None:
    fake = FakeTorch()
    candidate = _candidate(
        capturable(fake.cuda, lambda x: x * 3), (torch.ones(2, 4),), buckets=(2,)
    )
    result, _ = _measure(candidate, fake, tmp_path)
    eager, graphed = result.rows[:2]
    assert (eager["repeatable"], eager["repeat_max_abs_error"]) == (True, 0.0)
    assert (graphed["correct"], graphed["max_abs_error"]) == (True, 0.0)
    assert graphed["checked_against"] == "eager"


def test_a_step_that_draws_random_numbers_compares_the_same_draws(tmp_path: Path) -> None:
    """Dropout-like sampling: the replay and the eager reference each draw right after the
    same seed, so they compare equal; the caller's generator goes on as if nothing drew."""
    fake = FakeTorch()
    fn = capturable(fake.cuda, lambda x: x * (torch.rand(x.shape) > 0.5))
    candidate = _candidate(fn, (torch.ones(4, 8),), buckets=(4,), request_mix={4: 1.0})
    torch.manual_seed(5)
    before = torch.rand(3)
    torch.manual_seed(5)
    result, _ = _measure(candidate, fake, tmp_path)
    graphed = result.rows[1]
    assert (graphed["status"], graphed["correct"], graphed["max_abs_error"]) == ("ok", True, 0.0)
    # what the check drew from its own seed did not move the caller's generator: the draws
    # the timing steps made did
    assert not torch.equal(torch.rand(3), before)
    assert replay_module.CHECK_SEED == 1_729
    with replay_module._same_draws(torch):
        inside = torch.rand(3)
    torch.manual_seed(replay_module.CHECK_SEED)
    assert torch.equal(torch.rand(3), inside)
    state = torch.get_rng_state()
    with replay_module._same_draws(torch):
        torch.rand(100)
    assert torch.equal(torch.get_rng_state(), state)


class Probe:
    """Stands for a CUDA tensor: reading it back fails while a capture is in progress."""

    def __init__(self, cuda: FakeCuda) -> None:
        self.cuda = cuda

    def item(self) -> float:
        if self.cuda.capturing is not None:
            raise RuntimeError(NOT_PERMITTED)
        return 2.0


def test_failed_capture_is_classified_and_the_run_goes_on(tmp_path: Path) -> None:
    fake = FakeTorch()
    probe = Probe(fake.cuda)

    def normalize(x: Any) -> Any:
        scale = probe.item()
        return x / scale

    failing = _candidate(normalize, (torch.ones(4, 4),), name="normalize")
    result, lines = _measure(failing, fake, tmp_path)
    eager, graphed = result.rows
    assert eager["status"] == "ok"
    assert graphed["status"] == "capture_failed"
    assert graphed["failure"]["phase"] == "capture"
    assert graphed["failure"]["kind"] == "host_sync"
    assert graphed["failure"]["message"] == NOT_PERMITTED  # the first error, not the second
    for field in ("host_p50_ns", "first_replay_ns", "graph_pool_bytes", "correct"):
        assert graphed[field] is None
    assert fake.cuda.streams_set == [_STREAM]  # our stream put back after the failure
    assert "capture failed (host_sync)" in lines[0]
    # AND the next candidate still measures
    ok = _candidate(capturable(fake.cuda, lambda x: x + 1), (torch.ones(4, 4),), name="ok")
    assert [r["status"] for r in _measure(ok, fake, tmp_path)[0].rows] == ["ok", "ok"]


def test_eager_failure_skips_the_graph(tmp_path: Path) -> None:
    fake = FakeTorch()

    def broken(x: Any) -> Any:
        raise ValueError("shape mismatch in user code")

    result, _ = _measure(_candidate(broken, (torch.ones(2),)), fake, tmp_path)
    eager, graphed = result.rows
    assert eager["status"] == "error"
    assert eager["failure"] == {
        "phase": "eager",
        "kind": "error",
        "error_type": "ValueError",
        "message": "shape mismatch in user code",
    }
    assert graphed["status"] == "skipped"
    assert eager["bucket"] == graphed["bucket"] == 2  # the example's own batch


def test_input_factory_gets_each_bucket(tmp_path: Path) -> None:
    fake = FakeTorch()
    asked: list[int] = []

    def make(batch: int) -> tuple[Any]:
        asked.append(batch)
        return (torch.ones(batch, 3),)

    candidate = GraphCandidate(
        "factory", capturable(fake.cuda, lambda x: x.sum(0)), None, make, (2, 5), None, 0
    )
    result, _ = _measure(candidate, fake, tmp_path)
    assert asked == [2, 5]
    assert [r["status"] for r in result.rows] == ["ok"] * 4


def test_repeats_interleave_eager_and_graphed_rounds(tmp_path: Path) -> None:
    fake = FakeTorch()
    calls: list[str] = []

    def step(x: Any) -> Any:
        if fake.cuda.capturing is None:
            calls.append("E")
            if "G" in calls:  # eager slows down once replays have begun: rounds 2 and 3
                time.sleep(0.002)
        out = torch.tanh(x)
        graph = fake.cuda.capturing
        if graph is not None:

            def replay() -> None:
                calls.append("G")
                out.copy_(torch.tanh(x))

            graph.replay_fn = replay
        return out

    options = MeasureOptions(iters=5, warmup=1, profile_steps=1, traces=False, repeats=3)
    candidate = _candidate(step, (torch.ones(4, 4),))
    result = measure_candidate(candidate, tmp_path, options, lambda _: None, torch=fake)
    eager, graphed = result.rows
    # Round 1 of each mode (eager, capture, graphed), then rounds 2 and 3 in turn: each later
    # round is one host pass and one CUDA-event pass of 5 steps.
    blocks: list[tuple[str, int]] = []
    for call in calls:
        if blocks and blocks[-1][0] == call:
            blocks[-1] = (call, blocks[-1][1] + 1)
        else:
            blocks.append((call, 1))
    assert [mode for mode, _ in blocks] == ["E", "G", "E", "G", "E", "G"]
    assert [n for _, n in blocks[2:]] == [10, 10, 10, 10]
    for row in (eager, graphed):
        assert row["status"] == "ok"
        assert row["rounds"] == 3
        assert row["iterations"] == 15  # pooled over the rounds
        assert len(row["round_host_p50_ns"]) == len(row["round_gpu_p50_ns"]) == 3
        assert row["round_host_p50_min_ns"] == min(row["round_host_p50_ns"])
        assert row["round_host_p50_max_ns"] == max(row["round_host_p50_ns"])
    first, *later = eager["round_host_p50_ns"]
    assert first < 2_000_000 <= min(later)  # the drift shows in the rounds
    assert eager["round_host_p50_min_ns"] == first
    assert eager["host_p50_ns"] >= 2_000_000  # 10 of the 15 pooled steps are slow
    assert graphed["round_host_p50_max_ns"] < 2_000_000


def test_one_round_by_default(tmp_path: Path) -> None:
    fake = FakeTorch()
    candidate = _candidate(capturable(fake.cuda, lambda x: x * 3), (torch.ones(2, 2),))
    eager, graphed = _measure(candidate, fake, tmp_path)[0].rows
    for row in (eager, graphed):
        assert row["rounds"] == 1
        assert row["round_host_p50_ns"] == [row["host_p50_ns"]]
        assert row["round_gpu_p50_ns"] == [row["gpu_p50_ns"]]
        assert row["round_host_p50_min_ns"] == row["round_host_p50_max_ns"] == row["host_p50_ns"]


def test_without_buckets_the_example_is_used_as_it_is(tmp_path: Path) -> None:
    # A decode step at batch 16 takes a one-element position tensor: it must not be resized
    # to 16 rows (the H200 decoder_b16 recording failed in index_copy_ when it was).
    fake = FakeTorch()
    seen: list[tuple[int, ...]] = []

    def decode(x: Any, pos: Any) -> Any:
        seen.append(tuple(pos.shape))
        return x * pos.float().sum()

    candidate = _candidate(capturable(fake.cuda, decode), (torch.ones(16, 4), torch.tensor([3])))
    eager, graphed = _measure(candidate, fake, tmp_path)[0].rows
    assert (eager["bucket"], eager["status"], graphed["status"]) == (16, "ok", "ok")
    assert set(seen) == {(1,)}


def test_the_copy_probe_runs_before_every_graphed_timing_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN two buckets timed in three rounds each, and a probe that notes when it ran
    fake = FakeTorch()
    fn = capturable(fake.cuda, lambda x: x * 2.0)
    candidate = _candidate(fn, (torch.randn(3, 8),), buckets=(1, 2))
    order: list[str] = []
    options = replace(OPTIONS, repeats=3)
    real_time_steps = replay_module._time_steps

    def noting_time_steps(step: Any, iters: int, torch_: Any) -> Any:
        order.append("round")
        return real_time_steps(step, iters, torch_)

    monkeypatch.setattr(replay_module, "_time_steps", noting_time_steps)
    result = measure_candidate(
        candidate,
        tmp_path,
        options,
        lambda line: None,
        torch=fake,
        before_graphed_round=lambda: order.append("probe"),
    )
    # THEN the probe ran right before each of the six graphed rounds and never before an
    # eager one: eager, graphed, then rounds 2 and 3 alternate per bucket
    assert [r["rounds"] for r in result.rows] == [3, 3, 3, 3]
    per_bucket = ["round", "probe", "round", "round", "probe", "round", "round", "probe", "round"]
    assert order == per_bucket * 2
