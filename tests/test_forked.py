"""Replay estimates on several cores (traceinspect.analysis.estimate.forked): the same report
as on one, whatever the children do."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from conftest import sample_file
from hypothesis import given, settings
from hypothesis import strategies as st

from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.estimate import forked
from traceinspect.analysis.estimate.forked import Raised, fork_map, worker_count
from traceinspect.parse import load_trace
from traceinspect.report.json_report import render_json

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

PARENT = os.getpid()


def _in_child() -> bool:
    return os.getpid() != PARENT


@pytest.fixture
def always_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fork for any work, however small (the samples are below the real threshold)."""
    monkeypatch.setattr(forked, "MIN_COST_PER_WORKER", 1)


@pytest.mark.parametrize(
    "name",
    [
        "two_streams.eager.json.gz",
        "mixed.eager.json.gz",
        "decode_step.eager.json.gz",
        "host_sync.eager.json.gz",
        "nsys/ddp_nccl.sqlite.gz",
    ],
)
def test_the_report_on_three_workers_is_the_report_on_one(name: str, always_fork: None) -> None:
    timeline = load_trace(sample_file(name))
    one = render_json(diagnose(timeline, workers=1))
    several = render_json(diagnose(timeline, workers=3))
    assert several == one
    assert '"graphed_us"' in one  # the estimates are in what was compared


def test_a_big_trace_is_estimated_on_several_cores_a_small_one_on_one() -> None:
    assert worker_count(5_000, 40, requested=4) == 1  # 5,000 activities: not worth a fork
    assert worker_count(25_000, 40, requested=4) == 2
    assert worker_count(1_000_000, 40, requested=4) == 4
    assert worker_count(1_000_000, 3, requested=4) == 3  # never more than the jobs
    assert worker_count(1_000_000, 40, requested=1) == 1  # ranks already run in parallel


def _square(i: int) -> Callable[[], int]:
    return lambda: i * i


def _answers(count: int) -> list[int]:
    return [i * i for i in range(count)]


def test_results_come_back_in_order(always_fork: None) -> None:
    jobs = [_square(i) for i in range(50)]
    assert fork_map(jobs, [50 - i for i in range(50)], workers=4) == _answers(50)


def test_a_job_that_raises_returns_its_exception_in_its_place(always_fork: None) -> None:
    def broken() -> int:
        raise ValueError("no stream 7")

    jobs = [_square(0), broken, _square(2), _square(3)]
    results = fork_map(jobs, [1, 1, 1, 1], workers=2)
    assert results[0] == 0 and results[2:] == [4, 9]
    assert isinstance(results[1], Raised) and str(results[1].error) == "no stream 7"


def test_jobs_a_child_fails_are_run_again_here(always_fork: None) -> None:
    def only_here(i: int) -> Callable[[], int]:
        def job() -> int:
            if _in_child():
                raise MemoryError  # (a child's failure of any kind)
            return i * i

        return job

    assert fork_map([only_here(i) for i in range(8)], [1] * 8, workers=4) == _answers(8)


def test_a_child_that_dies_changes_nothing_but_the_time(always_fork: None) -> None:
    def dies_in_child(i: int) -> Callable[[], int]:
        def job() -> int:
            if _in_child():
                os._exit(3)  # killed for memory, say
            return i * i

        return job

    assert fork_map([dies_in_child(i) for i in range(6)], [1] * 6, workers=3) == _answers(6)


def test_a_child_that_does_not_answer_is_stopped_and_its_jobs_run_here(
    always_fork: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forked, "WAIT_FLOOR_S", 0.5)

    def hangs_in_child(i: int) -> Callable[[], int]:
        def job() -> int:
            if _in_child():
                time.sleep(600)  # (a lock the fork left held)
            return i * i

        return job

    began = time.monotonic()
    assert fork_map([hangs_in_child(i) for i in range(4)], [1] * 4, workers=2) == _answers(4)
    assert time.monotonic() - began < 30


def test_a_region_whose_occurrence_fails_warns_as_on_one_core(
    always_fork: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from traceinspect.analysis.estimate import region

    real = region._estimate_one

    def fails_on_occurrences_over_40_activities(*args: object) -> object:
        by_rank = args[1]
        if any(len(rows) > 40 for rows in by_rank.values()):  # type: ignore[attr-defined]
            raise RuntimeError("schedule ran out of room")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(region, "_estimate_one", fails_on_occurrences_over_40_activities)
    timeline = load_trace(sample_file("mixed.eager.json.gz"))
    one, several = diagnose(timeline, workers=1), diagnose(timeline, workers=2)
    assert render_json(several) == render_json(one)
    failed = [w for w in one.warnings if w.kind == "estimate_failed"]
    assert failed and "RuntimeError: schedule ran out of room" in failed[0].message


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=60),
    st.integers(min_value=1, max_value=8),
)
def test_the_shares_hold_every_job_once_and_balance_within_the_largest(
    costs: list[int], count: int
) -> None:
    shares = forked._balance(costs, count)
    assert len(shares) == count
    assert sorted(i for share in shares for i in share) == list(range(len(costs)))
    assert all(share == sorted(share) for share in shares)
    loads = [sum(max(costs[i], 1) for i in share) for share in shares]
    assert max(loads) - min(loads) <= max(max(c, 1) for c in costs)


def test_a_share_whose_child_cannot_be_forked_is_run_here(
    always_fork: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_memory() -> int:
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(forked.os, "fork", no_memory)
    assert fork_map([_square(i) for i in range(5)], [1] * 5, workers=3) == _answers(5)
