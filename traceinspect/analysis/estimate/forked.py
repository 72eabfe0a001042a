"""Independent jobs run on several cores, in forked children, with the results of one core.

A region's occurrences are estimated one by one (:func:`estimate_occurrence` and
:func:`simulate_eager` per occurrence), each from the timeline alone: on a big trace they
are most of the analysis (200 MB: 1.9 s of a 2.5 s diagnosis, 2-core machine).
:func:`fork_map` runs such jobs in children forked from this process, which see its memory
as it stood at the fork (copy on write), and puts their pickled results back in order.

Why the result is exact. A job is a function of the memory it inherits and of nothing a
sibling job changes, so a child computes what the parent would have. Anything short of a
result changes nothing but the time: a job that raised in a child, a child that died, was
killed for memory, or did not answer within :data:`WAIT_FLOOR_S` (or :data:`WAIT_FACTOR`
times the parent's own share of the work, whichever is longer) has its jobs run again by
the parent, where an exception is the one a single core would have met; so has a share
whose child could not be forked (no memory or file descriptors for it).

Children are bare forks, started as the reader's workers are
(:func:`traceinspect.parse._parallel.fork_child`): no multiprocessing bootstrap, nothing
printed, and they leave with ``os._exit``, so a thread of the parent (the progress display)
cannot hold a lock a child needs. The garbage
collector is paused across the fork, and stays paused in the children, so that it does not
touch, and so copy, the parent's objects in every child.
"""

from __future__ import annotations

import gc
import heapq
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from multiprocessing.connection import Connection
from typing import Final, Generic, TypeVar, cast

from traceinspect import machine
from traceinspect.parse import _parallel

T = TypeVar("T")

#: Cost (activities estimated, summed over the jobs) each worker should have at least: a
#: fork, the pickled results and the wait cost about 0.05 s on a 200 MB trace's process,
#: which 10,000 activities' estimates (0.15-0.2 s) outweigh.
MIN_COST_PER_WORKER: Final = 10_000
#: How long the parent waits for a child past the end of its own share: this many seconds
#: at least, else this many times what its own share took.
WAIT_FLOOR_S: Final = 10.0
WAIT_FACTOR: Final = 4.0


@dataclass(frozen=True)
class Raised(Generic[T]):
    """A job that raised (in this process): the exception, for the caller to raise where a
    single core would have met it."""

    error: Exception


def worker_count(total_cost: int, jobs: int, requested: int | None = None) -> int:
    """Processes to run ``jobs`` jobs of ``total_cost`` with: ``requested``, else one per
    core available (:func:`~traceinspect.machine.usable_cores`), never more than the
    jobs nor one per :data:`MIN_COST_PER_WORKER`; 1 where there is no ``fork``. Callers that
    already run in parallel ask for 1."""
    if requested is not None and requested <= 1:
        return 1
    if not hasattr(os, "fork"):
        return 1
    most = min(jobs, total_cost // MIN_COST_PER_WORKER)
    if most <= 1:
        return 1
    cores = requested if requested is not None else machine.usable_cores()
    return max(1, min(cores, most))


def fork_map(
    jobs: Sequence[Callable[[], T]],
    costs: Sequence[int],
    workers: int | None = None,
) -> list[T | Raised[T]]:
    """Each job's result, in order, or :class:`Raised` where it raised; run on
    :func:`worker_count` processes (this one among them), each given jobs of about equal
    total ``costs`` (longest first, each to the least loaded)."""
    if len(costs) != len(jobs):
        raise ValueError("jobs and costs differ in length")
    count = worker_count(sum(costs), len(jobs), workers)
    if count <= 1:
        return [_run(job) for job in jobs]
    shares = _balance(costs, count)
    results: list[T | Raised[T] | None] = [None] * len(jobs)
    children: list[tuple[list[int], int, Connection]] = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        own = list(shares[0])
        for share in shares[1:]:
            child = _fork(jobs, share)
            if child is None:  # no memory or no file descriptors for another process
                own.extend(share)
            else:
                children.append((share, *child))
        if gc_was_enabled:  # the children keep it paused; the parent's own share needs it
            gc.enable()
        began = time.monotonic()
        for i in own:
            results[i] = _run(jobs[i])
        deadline = time.monotonic() + max(WAIT_FLOOR_S, WAIT_FACTOR * (time.monotonic() - began))
        for share, pid, receiver in children:
            answers = _receive(receiver, deadline, len(share))
            if answers is None:
                _parallel.kill_child(pid)
            for k, i in enumerate(share):
                done, value = answers[k] if answers is not None else (False, None)
                results[i] = cast(T, value) if done else _run(jobs[i])
    finally:
        for _, pid, receiver in children:
            _parallel.end_child(pid, receiver)
        if gc_was_enabled:
            gc.enable()
    return results  # type: ignore[return-value]  # every slot filled above


def _run(job: Callable[[], T]) -> T | Raised[T]:
    try:
        return job()
    except Exception as exc:  # noqa: BLE001 - returned for the caller to raise in order
        return Raised(exc)


def _balance(costs: Sequence[int], count: int) -> list[list[int]]:
    """Job indices per worker, in job order within each: the longest first, each to the
    worker with the least cost so far (ties to the lower worker)."""
    loads = [(0, w) for w in range(count)]
    shares: list[list[int]] = [[] for _ in range(count)]
    for i in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        load, w = heapq.heappop(loads)
        shares[w].append(i)
        heapq.heappush(loads, (load + max(int(costs[i]), 1), w))
    return [sorted(share) for share in shares]


def _fork(jobs: Sequence[Callable[[], T]], share: list[int]) -> tuple[int, Connection] | None:
    """Start a child running ``share`` of ``jobs``; its pid and the pipe its answers come
    through (:func:`_answer`), or None where no process or pipe could be made."""
    try:
        return _parallel.fork_child(partial(_answer, jobs, share))
    except OSError:
        return None


def _answer(jobs: Sequence[Callable[[], T]], share: list[int], conn: Connection) -> None:
    """In the child: one ``(True, result)`` per job of ``share``, or ``(False, None)`` where
    it raised (the parent runs it again)."""
    results = [_run(jobs[i]) for i in share]
    conn.send([(False, None) if isinstance(r, Raised) else (True, r) for r in results])


def _receive(conn: Connection, deadline: float, count: int) -> list[tuple[bool, object]] | None:
    """A child's answers, or None when it sent none in time or sent something else."""
    try:
        if not conn.poll(max(0.0, deadline - time.monotonic())):
            return None
        answers = conn.recv()
    except (EOFError, OSError, ValueError, TypeError, AttributeError, ImportError):
        return None  # it died mid-answer, or the answer does not unpickle here
    if not isinstance(answers, list) or len(answers) != count:
        return None
    return answers
