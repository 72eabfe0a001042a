"""The multi-stream replay schedule: nodes wait for room on the device, and kernels that
shared the device in the trace are charged their time alone."""

from __future__ import annotations

import numpy as np
import pytest

from traceinspect.analysis.estimate.schedule import scheduled_path_ns, solo_durations

US = 1_000


def path(keys: list[int], dur: list[float], share: list[float], deps=(), overhead=None) -> float:
    n = len(keys)
    return (
        scheduled_path_ns(
            np.array(keys),
            np.array(dur, float) * US,
            np.zeros(n) if overhead is None else np.array(overhead, float) * US,
            np.array(share, float),
            list(deps),
        )
        / US
    )


def test_kernels_that_fill_the_device_queue_whatever_their_streams() -> None:
    # two streams of two 10 µs kernels each holding the whole device: one after the other
    assert path([1, 2, 1, 2], [10, 10, 10, 10], [1.0] * 4) == 40
    # the same kernels at 0.97 of the device: still no room for a second one beside
    assert path([1, 2, 1, 2], [10, 10, 10, 10], [0.97] * 4) == 40


def test_kernels_that_fit_together_run_side_by_side() -> None:
    # half-device kernels on two streams: pairs overlap, 20 µs
    assert path([1, 2, 1, 2], [10, 10, 10, 10], [0.5] * 4) == 20
    # a small kernel slips in beside a 0.9 one, a 0.2 one does not
    assert path([1, 2], [10, 4], [0.9, 0.1]) == 10
    assert path([1, 2], [10, 4], [0.9, 0.2]) == 14


def test_a_kernel_larger_than_the_device_starts_alone() -> None:
    assert path([1, 2], [10, 10], [3.0, 3.0]) == 20


def test_copies_take_no_room() -> None:
    assert path([1, 2], [10, 8], [1.0, 0.0]) == 10


def test_dependencies_and_overheads_order_the_nodes() -> None:
    # b (stream 2) waits for a (stream 1); each node pays 1 µs before it starts
    assert path([1, 2], [10, 5], [0.1, 0.1], deps=[(0, 1)], overhead=[1, 1]) == 17
    # without the dependency they overlap
    assert path([1, 2], [10, 5], [0.1, 0.1], overhead=[1, 1]) == 11
    # one stream: its overheads add up, as on a chain
    assert path([1, 1, 1], [10, 10, 10], [0.1] * 3, overhead=[1, 1, 1]) == 33


def test_a_node_blocked_for_room_lets_a_smaller_ready_one_start() -> None:
    # stream 1 runs a 0.6 kernel; stream 2's 0.6 kernel must wait, stream 3's 0.3 one fits
    assert path([1, 2, 3], [10, 10, 10], [0.6, 0.6, 0.3]) == 20


def test_solo_durations_take_back_the_shared_time() -> None:
    # two full-device kernels overlapping for 50 µs of their 100: each ran at half speed then
    start = np.array([0, 50]) * US
    end = np.array([100, 150]) * US
    assert solo_durations(start, end, np.array([1.0, 1.0])).tolist() == [75 * US, 75 * US]
    # kernels that fit together lose nothing, nor does a copy
    assert solo_durations(start, end, np.array([0.5, 0.5])).tolist() == [100 * US, 100 * US]
    assert solo_durations(start, end, np.array([1.0, 0.0])).tolist() == [100 * US, 100 * US]
    # three at 0.5 over the same 30 µs: 1.5 of load, each advanced 2/3 as fast
    same = solo_durations(np.zeros(3, np.int64), np.full(3, 30 * US), np.full(3, 0.5))
    assert same.tolist() == pytest.approx([20 * US] * 3)
