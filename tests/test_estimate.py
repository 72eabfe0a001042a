"""Graph-replay estimator on synthetic timelines: every expected number is worked out inline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from traceinspect.analysis.estimate import (
    critical_path_ns,
    device_share,
    duration_spread,
    estimate_occurrence,
    estimate_region,
    infer_dependencies,
)
from traceinspect.calibration import Calibration, NodeOverheadPoint, ProfilerCost
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, make_table

US = 1_000

#: Round numbers so expectations can be computed by hand.
CAL = Calibration(
    name="test",
    device_name="Test GPU",
    source="test",
    eager_launch_host_ns=5 * US,
    eager_launch_host_ns_profiled=10 * US,
    graph_launch_host_ns=((1, 2 * US),),
    # measured as wall(1-node replay + sync) − kernel: 4 µs to the GPU + 0.9 µs node + 2 µs sync
    graph_launch_latency_ns=6_900,
    graph_node_overhead_ns=900,
    sync_ns=2 * US,
    node_overhead_table=(
        NodeOverheadPoint(
            nodes=100, kernel_ns=1_000, graph_gpu_ns=0, graph_wall_ns=0, per_node_ns=900
        ),
        NodeOverheadPoint(
            nodes=100, kernel_ns=100_000, graph_gpu_ns=0, graph_wall_ns=0, per_node_ns=100
        ),
    ),
    copy_launch_host_ns=6 * US,
    copy_gpu_ns=2 * US,
    spread_frac=0.1,
)


def timeline(
    activities: Sequence[tuple[int, int, int]],
    launches: Sequence[tuple[int, int]] | None = None,
    *,
    kinds: Sequence[str] | None = None,
    copy_kinds: Sequence[str] | None = None,
    extra_host: Sequence[tuple[str, int, int]] = (),
    grids: Sequence[str] | None = None,
) -> Timeline:
    """GPU activities ``(stream, start_ns, end_ns)``, each launched by the host call
    ``launches[i] = (start_ns, end_ns)`` (``cudaLaunchKernel``), plus named host calls
    ``extra_host = (name, start_ns, end_ns)`` (kind ``sync`` for ``*Synchronize``, else
    ``event``). Activities must be given in start order. The device has 100 SMs; kernels
    have one block unless ``grids`` says otherwise."""
    n = len(activities)
    host_calls = [
        ("cudaLaunchKernel", "launch", s, e, i) for i, (s, e) in enumerate(launches or [])
    ]
    host_calls += [
        (name, "sync" if "Synchronize" in name else "event", s, e, -1) for name, s, e in extra_host
    ]
    host_calls.sort(key=lambda c: c[2])
    launch_row = [-1] * n
    for pos, call in enumerate(host_calls):
        if call[4] >= 0:
            launch_row[call[4]] = pos
    host = make_table(
        "host",
        {
            "name": [c[0] for c in host_calls],
            "kind": [c[1] for c in host_calls],
            "pid": [1] * len(host_calls),
            "tid": [1] * len(host_calls),
            "start_ns": [c[2] for c in host_calls],
            "end_ns": [c[3] for c in host_calls],
        },
    )
    gpu = make_table(
        "gpu",
        {
            "kind": list(kinds or ["kernel"] * n),
            "name": [f"k{i}" for i in range(n)],
            "device": [0] * n,
            "stream": [a[0] for a in activities],
            "start_ns": [a[1] for a in activities],
            "end_ns": [a[2] for a in activities],
            "launch_row": launch_row,
            "copy_kind": list(copy_kinds or [""] * n),
            "grid": list(grids or ["1,1,1"] * n),
        },
    )
    meta = TraceMeta(
        path="synthetic",
        format="kineto",
        generation="test",
        devices=(DeviceInfo(0, "Test GPU", {"numSms": 100}),),
    )
    tl = Timeline(meta=meta, gpu=gpu, host=host)
    tl.validate()
    return tl


def all_rows(tl: Timeline) -> np.ndarray:
    return np.arange(len(tl.gpu), dtype=np.int64)


def test_single_stream_replays_back_to_back_with_node_overhead() -> None:
    # GIVEN 10 kernels of 1 µs on one stream, each 10 µs apart (launch-bound eager)
    acts = [(7, i * 10 * US, i * 10 * US + US) for i in range(10)]
    tl = timeline(acts)
    # WHEN replayed as a graph without input copies
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN GPU = 10 × (1 µs + 0.9 µs) = 19 µs, starting 4 µs after replay(), +2 µs sync
    assert est.parts["gpu_work"] == 10 * US
    assert est.parts["node_overhead"] == 9 * US
    assert est.graphed_ns == 4 * US + 19 * US + 2 * US
    assert (
        sum(
            est.parts[k]
            for k in ("input_copies", "launch", "gpu_work", "node_overhead", "completion")
        )
        == 25 * US
    )
    # AND the range scales the launch and sync overheads by ±10 % and takes half the node
    # overhead at the low end, 0.9 µs more per node at the high end (machines differ most
    # there): low 3.6 + 10 + 4.5 + 1.8 µs, high 4.4 + 10 + 10 × (0.99 + 0.9) + 2.2 µs
    assert est.low_ns == 19_900
    assert est.high_ns == 35_500
    assert est.nodes == 10 and est.streams == 1 and est.dependencies == 0


def test_large_kernels_hide_the_node_overhead() -> None:
    # 3 kernels of 100 µs: per-node overhead 100 ns (table), not 900 ns
    acts = [(7, i * 200 * US, i * 200 * US + 100 * US) for i in range(3)]
    tl = timeline(acts)
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    assert est.parts["node_overhead"] == 300
    assert est.graphed_ns == 4 * US + 300 * US + 300 + 2 * US


def test_node_overhead_interpolates_in_log_duration() -> None:
    # 10 µs is halfway between 1 µs and 100 µs in log scale: (900 + 100) / 2
    assert CAL.node_overhead_for([10_000]).tolist() == pytest.approx([500.0])
    # flat beyond the table
    assert CAL.node_overhead_for([10, 10**9]).tolist() == [900.0, 100.0]


@pytest.fixture
def no_light_charge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The schedule without the charge of a light kernel beside another stream's
    (``LIGHT_BESIDE_NS``): the synthetic steps below test which kernels wait for which, and
    their 50-100 µs kernels of unknown grid are light ones."""
    from traceinspect.analysis.estimate import schedule

    monkeypatch.setattr(schedule, "LIGHT_BESIDE_NS", 0.0)
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_LOW_NS", 0.0)


@pytest.mark.usefixtures("no_light_charge")
def test_concurrent_streams_overlap_in_the_graph() -> None:
    # GIVEN two streams each running 5 × 100 µs kernels at the same time, no waits
    a = [(7, i * 100 * US, (i + 1) * 100 * US) for i in range(5)]
    b = [(20, i * 100 * US + 50 * US, (i + 1) * 100 * US + 50 * US) for i in range(5)]
    acts = sorted(a + b, key=lambda x: x[1])
    tl = timeline(acts, [(s - 20 * US, s - 15 * US) for _, s, _ in acts])
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN the GPU path is one stream's chain, not the sum of both: 5 × 100.1 µs
    assert est.dependencies == 0
    assert est.parts["gpu_work"] + est.parts["node_overhead"] == 500_500
    assert est.parts["gpu_busy"] == 1_000 * US


@pytest.mark.usefixtures("no_light_charge")
def test_cross_stream_dependency_is_inferred_from_a_held_back_kernel() -> None:
    # GIVEN A: k0 [0, 100 µs); B: k1 launched at 10 µs but starting at 101 µs (1 µs after k0
    # ended, B idle) → B waited for A; then A: k2 [100, 150 µs) independent of B.
    acts = [(7, 0, 100 * US), (20, 101 * US, 201 * US), (7, 102 * US, 150 * US)]
    launches = [(0, 5 * US), (10 * US, 15 * US), (20 * US, 25 * US)]
    tl = timeline(acts, launches)
    assert infer_dependencies(tl, all_rows(tl)) == [(0, 1)]
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN the path is k0 then k1 (100.1 + 100.1 µs), k2 overlaps k1
    assert est.parts["gpu_work"] == 200 * US
    assert est.parts["node_overhead"] == 200


@pytest.mark.usefixtures("no_light_charge")
def test_no_dependency_when_the_launch_itself_came_late() -> None:
    # B's kernel starts right after A's ended, but it was launched only then: host-bound,
    # not waiting on A.
    acts = [(7, 0, 100 * US), (20, 101 * US, 201 * US)]
    launches = [(0, 5 * US), (99 * US, 100_800)]
    tl = timeline(acts, launches)
    assert infer_dependencies(tl, all_rows(tl)) == []
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    assert est.parts["gpu_work"] == 100 * US


def test_no_dependency_when_the_waiting_stream_was_busy() -> None:
    # B was running its own k1 until 100.5 µs: k2 on B started after its predecessor.
    acts = [(7, 0, 100 * US), (20, 10 * US, 100_500), (20, 101 * US, 150 * US)]
    tl = timeline(acts, [(0, 1 * US), (2 * US, 3 * US), (4 * US, 5 * US)])
    assert infer_dependencies(tl, all_rows(tl)) == []


def test_event_record_and_wait_give_the_dependency_even_when_far_apart() -> None:
    # GIVEN A: k0 [0, 50 µs); the host records an event, makes B wait, then launches k1 on B,
    # which starts 30 µs after k0 ended (too far for the timing rule)
    acts = [(7, 0, 50 * US), (20, 80 * US, 90 * US)]
    launches = [(0, 2 * US), (70 * US, 72 * US)]
    tl = timeline(
        acts,
        launches,
        extra_host=[
            ("cudaEventRecord", 60 * US, 61 * US),
            ("cudaStreamWaitEvent", 62 * US, 63 * US),
        ],
    )
    assert infer_dependencies(tl, all_rows(tl)) == [(0, 1)]


def _prefetch(waits: int) -> Timeline:
    """Side stream 20 runs three kernels, an event recorded after each; then the main
    stream 7 waits before each of its kernels (``waits`` of them, one wait each), all
    launch-bound (no timing evidence)."""
    side = [(20, (10 + 10 * i) * US, (15 + 10 * i) * US) for i in range(3)]
    main = [(7, (200 + 20 * i) * US, (201 + 20 * i) * US) for i in range(waits)]
    launches = [(10 * i * US, (10 * i + 2) * US) for i in range(3)]
    launches += [((100 + 20 * i) * US, (102 + 20 * i) * US) for i in range(waits)]
    records = [("cudaEventRecord", (10 * i + 4) * US, (10 * i + 5) * US) for i in range(3)]
    wait_calls = [
        ("cudaStreamWaitEvent", (96 + 20 * i) * US, (97 + 20 * i) * US) for i in range(waits)
    ]
    return timeline(side + main, launches, extra_host=records + wait_calls)


def test_waits_after_a_run_of_records_pair_with_them_in_order() -> None:
    # GIVEN three records on the side stream, then three waits each before a main kernel
    tl = _prefetch(3)
    # THEN main kernel i waits for side kernel i (a prefetch), not all for the last one
    assert infer_dependencies(tl, all_rows(tl)) == [(0, 3), (1, 4), (2, 5)]
    # two waits after three records: each waits for the last record's work
    tl = _prefetch(2)
    assert infer_dependencies(tl, all_rows(tl)) == [(2, 3), (2, 4)]


def test_critical_path_through_a_diamond() -> None:
    # a(10) → {b(5) on s2, c(20) on s1} → d(1) on s2 waiting for c: 10 + 20 + 1
    keys = np.array([1, 2, 1, 2], np.int64)
    assert critical_path_ns(keys, [10, 5, 20, 1], [(0, 1), (2, 3)]) == 31.0
    assert critical_path_ns(keys, [10, 5, 20, 1], []) == 30.0  # s1 chain alone
    assert critical_path_ns(np.array([], np.int64), [], []) == 0.0


def test_launch_cost_dominates_a_short_graph() -> None:
    # A 1-node graph whose replay() costs 40 µs of host time: host-bound
    slow = replace(CAL, graph_launch_host_ns=((1, 40 * US),))
    tl = timeline([(7, 0, 1 * US)])
    est = estimate_occurrence(tl, all_rows(tl), slow, assume_input_copy=False)
    assert est.graphed_ns == 40 * US + 2 * US
    assert est.parts["launch"] == 40 * US - 1 * US - 900


def test_graph_launch_host_cost_interpolates_in_node_count() -> None:
    cal = replace(CAL, graph_launch_host_ns=((1, 2 * US), (101, 12 * US)))
    assert cal.graph_launch_host_for(51) == 7 * US
    assert cal.graph_launch_host_for(1000) == 12 * US


def test_leading_host_to_device_copy_is_an_eager_input_copy() -> None:
    # GIVEN an HtoD copy of 3 µs before the first kernel, then one 1 µs kernel
    acts = [(7, 0, 3 * US), (7, 10 * US, 11 * US)]
    tl = timeline(acts, kinds=["memcpy", "kernel"], copy_kinds=["HtoD", ""])
    est = estimate_occurrence(tl, all_rows(tl), CAL)
    # THEN the copy is not a node: host launches it (6 µs), GPU copies until 9 µs; replay at
    # 6 µs puts the kernel at max(9, 6 + 4) = 10 µs, done at 11.9 µs, +2 µs sync
    assert est.nodes == 1 and est.input_copies == 1
    assert est.graphed_ns == 13_900
    assert est.parts["input_copies"] == 9 * US


def test_default_input_copy_when_none_is_visible() -> None:
    tl = timeline([(7, 0, 1 * US)])
    with_copy = estimate_occurrence(tl, all_rows(tl), CAL)
    without = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # copy: host 6 µs, GPU 6 → 8 µs; replay at 6 µs: kernel at max(8, 10) = 10 µs
    assert without.graphed_ns == 4 * US + 1_900 + 2 * US
    assert with_copy.graphed_ns == 6 * US + 4 * US + 1_900 + 2 * US


def test_the_input_copies_do_not_hide_the_replay_latency() -> None:
    # GIVEN a profile whose first call after a synchronize costs 1 µs more than a warm call
    cold = replace(CAL, cold_call_ns=1 * US)
    tl = timeline([(7, 0, 1 * US)])
    with_copy = estimate_occurrence(tl, all_rows(tl), cold)
    without = estimate_occurrence(tl, all_rows(tl), cold, assume_input_copy=False)
    # THEN the input copy opens the request cold (host 6 µs, GPU 6 → 8 µs); the replay after
    # it is warm on the host, yet its first node still reaches the GPU the whole replay
    # latency after the call (a one-kernel graph fed n inputs took the copies' host time
    # plus the replay's own wall on the H200): kernel at max(8, 6 + 4) = 10 µs, done at
    # 11.9 µs, + 2 µs sync: as without a cold start
    assert with_copy.graphed_ns == 13_900
    assert estimate_occurrence(tl, all_rows(tl), CAL).graphed_ns == 13_900
    # a replay that opens the request is cold, as calibrated: 4 + 1.9 + 2 µs
    assert without.graphed_ns == 7_900
    # the range scales the cold start with the other overheads. High: two copies, the first
    # cold (6.6 µs host), the second warm (an eager launch: 5.5 µs), each 1.2× on top (the
    # copy's host time across H200 machines), the replay's whole latency (4.4 µs), kernel
    # 1 + 0.99 + 0.9 µs, sync 2.2 µs. Low: no copy, a cold replay (3.6 µs), kernel 1 + half
    # its 0.9 µs node overhead.
    assert with_copy.high_ns == 7_920 + 6_600 + 4_400 + 2_890 + 2_200
    assert with_copy.low_ns == 3_600 + 1_450 + 1_800


def test_after_a_host_sync_the_next_replay_is_cold_again() -> None:
    # GIVEN k0, k1, a device-to-host copy and a stream synchronize (an .item()), then k2
    tl = _host_sync_timeline()
    est = estimate_occurrence(
        tl, all_rows(tl), replace(CAL, cold_call_ns=1 * US), assume_input_copy=False
    )
    # THEN graph 0 runs 4 → 7.8 µs (cold replay, host free at 2 µs); the readback is warm
    # (an eager launch, 5 µs host: 2 → 7 µs) and runs 7.8 → 8.8 µs; the sync ends at
    # 10.8 µs; graph 1's replay follows a sync, so it is cold: 14.8 → 16.7 µs; + 2 µs
    # completion
    assert est.graphed_ns == 18_700
    assert est.parts["host_syncs"] == 10_800 - 7_800


def test_builtin_profile_states_the_cold_start() -> None:
    from traceinspect.calibration import (
        DEFAULT_COLD_CALL_NS,
        builtin_calibrations,
        parse_calibration,
    )

    assert builtin_calibrations()["nvidia-h200"].cold_call_ns == DEFAULT_COLD_CALL_NS == 4_550
    profile = {
        "device_name": "Test GPU",
        "eager_launch_host_ns": 5_000,
        "graph_launch_host_ns": 2_000,
        "graph_launch_latency_ns": 6_900,
        "graph_node_overhead_ns": 900,
        "sync_ns": 2_000,
    }
    assert parse_calibration(profile, name="t", source="t").cold_call_ns == 4_550
    measured = parse_calibration({**profile, "cold_call_ns": 2_500}, name="t", source="t")
    assert measured.cold_call_ns == 2_500


def test_region_medians_range_and_measured_saving() -> None:
    # 3 occurrences of a one-kernel step: kernel durations 0.2, 0.5, 1 µs (overhead 0.9 µs)
    acts = [(7, i * 100 * US, i * 100 * US + d) for i, d in enumerate((200, 500, 1_000))]
    tl = timeline(acts, [(s - 5 * US, s - 1 * US) for _, s, _ in acts])
    occ = [np.array([i], np.int64) for i in range(3)]
    est = estimate_region(
        tl, occ, [50 * US] * 3, CAL, eager_unprofiled_ns=30 * US, assume_input_copy=False
    )
    assert est is not None
    # graphed per occurrence: 4 + (d + 0.9) + 2 µs → 7.1, 7.4, 7.9; median 7.4 µs
    assert est.graphed_ns == 7_400
    # the same kernel ran 0.2, 0.5 and 1 µs: occurrences at 0.4, 1 and 2 × the median;
    # 10th/90th percentiles 0.52 and 1.8, widened by the 5 % replay drift → durations
    # × 0.494 and × 1.89 at the ends of the range
    assert duration_spread(tl, occ) == pytest.approx((0.52, 1.8))
    # low: launch and sync × 0.9, node overhead × 0.5 (5.85 µs) + 0.0988, 0.247, 0.494 µs
    # → 10th percentile 5.9784 µs
    assert est.low_ns == 5_978
    # high: overheads × 1.1 + 0.9 µs per node (8.49 µs) + 0.378, 0.945, 1.89 µs → 90th
    # percentile 10.191 µs
    assert est.high_ns == 10_191
    assert est.eager_source == "measured"
    assert est.saving_ns == 30 * US - 7_400
    out = est.to_json()
    assert out["graphed_us"] == 7.4 and out["eager_us"] == 30.0
    assert out["saving_frac"] == pytest.approx(22.6 / 30, abs=1e-4)
    assert out["calibration"] == "test"
    assert set(out["parts"]) == {
        "input_copies",
        "launch",
        "gpu_work",
        "node_overhead",
        "host_syncs",
        "completion",
        "gpu_busy",
    }


def test_eager_from_trace_removes_the_profiler_cost_per_call() -> None:
    # 10 launches (4 µs calls, one every 12 µs) under the profiler in a 120 µs step; the
    # profiler adds 2 µs to each CUDA call: each call's stretch shrinks 4 → 2 µs, the 8 µs
    # between calls (no event in them) stays
    acts = [(7, i * 12 * US + 5 * US, i * 12 * US + 6 * US) for i in range(10)]
    tl = timeline(acts, [(s - 5 * US, s - 1 * US) for _, s, _ in acts])
    cal = replace(CAL, profiler_cost=ProfilerCost(0.0, 0.0, 2.0 * US, 0.2))
    est = estimate_region(tl, [all_rows(tl)], [120 * US], cal, assume_input_copy=False)
    assert est is not None
    assert est.eager_source == "trace-deflated"
    # host: 10 × 2 + 9 × 8 + 8 (after the last call) = 100 µs; the last kernel runs at
    # 92–93 µs; + 2 µs synchronize
    assert est.eager_ns == 102 * US
    # the simulated run: 10 × 1 µs kernels over a 91 µs window, the rest waiting on launches
    assert est.unprofiled is not None
    assert est.unprofiled.window_ns == 91 * US
    assert est.unprofiled.busy_share == pytest.approx(10 / 91)
    assert est.unprofiled.idle_share["host_launch"] == pytest.approx(81 / 91)
    # a call's stretch never shrinks below the floor: 0.75 × 4 µs = 3 µs
    floored = replace(CAL, profiler_cost=ProfilerCost(0.0, 0.0, 2.0 * US, 0.75))
    est2 = estimate_region(tl, [all_rows(tl)], [120 * US], floored, assume_input_copy=False)
    assert est2 is not None and est2.eager_ns == 112 * US
    # without profiler costs the traced wall is the eager time
    flat = replace(CAL, profiler_cost=ProfilerCost(0.0, 0.0, 0.0, 0.2))
    est3 = estimate_region(tl, [all_rows(tl)], [120 * US], flat, assume_input_copy=False)
    assert est3 is not None and est3.eager_ns == 122 * US


def test_eager_from_a_gpu_bound_trace_keeps_the_gpu_time() -> None:
    # one 100 µs kernel launched at 0–4 µs, in a 10 µs region: the host (the call 2 µs
    # shorter unprofiled) is done long before the GPU; the kernel is ready at 2 µs → 102 µs,
    # + 2 µs synchronize
    tl = timeline([(7, 5 * US, 105 * US)], [(0, 4 * US)])
    cal = replace(CAL, profiler_cost=ProfilerCost(0.0, 0.0, 2.0 * US, 0.2))
    est = estimate_region(tl, [all_rows(tl)], [10 * US], cal, assume_input_copy=False)
    assert est is not None and est.eager_ns == 104 * US


def test_region_without_gpu_work_has_no_estimate() -> None:
    tl = timeline([(7, 0, US)])
    assert estimate_region(tl, [np.array([], np.int64)], [10 * US], CAL) is None
    with pytest.raises(ValueError):
        estimate_region(tl, [np.array([0])], [], CAL)


def _host_sync_timeline() -> Timeline:
    """k0, k1 (1 µs each), then a 1 µs device-to-host copy whose stream synchronize the host
    waits in (an ``.item()``), then k2."""
    acts = [
        (7, 100 * US, 101 * US),
        (7, 110 * US, 111 * US),
        (7, 120 * US, 121 * US),
        (7, 140 * US, 141 * US),
    ]
    launches = [
        (90 * US, 95 * US),
        (100 * US, 105 * US),
        (112 * US, 118 * US),
        (130 * US, 135 * US),
    ]
    return timeline(
        acts,
        launches,
        kinds=["kernel", "kernel", "memcpy", "kernel"],
        copy_kinds=["", "", "DtoH", ""],
        extra_host=[("cudaStreamSynchronize", 119 * US, 122 * US)],
    )


def test_host_sync_splits_the_work_into_two_graphs_with_an_eager_readback() -> None:
    # GIVEN k0, k1, then a device-to-host copy and a stream synchronize (an .item()), then k2
    tl = _host_sync_timeline()
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN graph 0 = {k0, k1} runs 4 → 7.8 µs; the host (free at 2 µs) launches the copy,
    # a warm call (not the first after a synchronize), which costs an eager launch when the
    # profile states no copy_warm_host_ns (5 µs host: 2 → 7 µs); it runs 7.8 → 8.8 µs, the
    # sync ends at 10.8 µs; graph 1 = {k2} runs 14.8 → 16.7 µs; + 2 µs completion
    assert (est.graphs, est.host_syncs, est.nodes) == (2, 1, 3)
    assert est.graphed_ns == 18_700
    assert est.parts == {
        "input_copies": 0,
        "launch": 8_000,
        "gpu_work": 3_000,
        "node_overhead": 2_700,
        "host_syncs": 3_000,
        "completion": 2_000,
        "gpu_busy": 3_000,
    }


@pytest.mark.usefixtures("no_light_charge")
def test_fork_join_events_give_both_branch_dependencies() -> None:
    # GIVEN main forks to side streams 20 and 21 (record + wait each), a0 (50 µs) on 20 and
    # b0 (30 µs) on 21 run concurrently, then main joins both (record + wait each) and runs c
    acts = [(20, 10 * US, 60 * US), (21, 11 * US, 41 * US), (7, 61 * US, 62 * US)]
    launches = [(5 * US, 6 * US), (7 * US, 8 * US), (14 * US, 15 * US)]
    events = [
        ("cudaEventRecord", 0, 1 * US),
        ("cudaStreamWaitEvent", 1 * US, 2 * US),
        ("cudaEventRecord", 2 * US, 3 * US),
        ("cudaStreamWaitEvent", 3 * US, 4 * US),
        ("cudaEventRecord", 9 * US, 10 * US),
        ("cudaStreamWaitEvent", 10 * US, 11 * US),
        ("cudaEventRecord", 11 * US, 12 * US),
        ("cudaStreamWaitEvent", 12 * US, 13 * US),
    ]
    tl = timeline(acts, launches, extra_host=events)
    # THEN c depends on both branches' last activities (a0 = 0, b0 = 1)
    assert infer_dependencies(tl, all_rows(tl)) == [(0, 2), (1, 2)]
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # AND the path is a0 + c: 50 µs + 220 ns overhead (log-interpolated) + 1 µs + 0.9 µs
    assert est.parts["gpu_work"] == 51 * US
    assert est.parts["node_overhead"] == 1_120
    assert est.streams == 3 and est.dependencies == 2


@pytest.mark.usefixtures("no_light_charge")
def test_concurrent_streams_that_fill_the_device_do_not_overlap() -> None:
    # GIVEN two streams of 5 × 100 µs kernels that did not overlap in the trace (the host
    # launched them one after the other, 10 µs apart), each kernel 100 blocks on a 100-SM
    # device
    a = [(7, i * 220 * US, i * 220 * US + 100 * US) for i in range(5)]
    b = [(20, i * 220 * US + 110 * US, i * 220 * US + 210 * US) for i in range(5)]
    acts = sorted(a + b, key=lambda x: x[1])
    tl = timeline(acts, grids=["100,1,1"] * 10)
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN replayed, each kernel waits for room on the device: 1,000 µs, not one stream's 500
    assert est.parts["gpu_work"] == 1_000 * US
    # AND half-device kernels (50 blocks) run two at a time: 500 µs
    half = timeline(acts, grids=["50,1,1"] * 10)
    assert device_share(half, all_rows(half)).tolist() == [0.5] * 10
    est_half = estimate_occurrence(half, all_rows(half), CAL, assume_input_copy=False)
    assert est_half.parts["gpu_work"] == 500 * US
    # AND a trace without grids or SM count counts every kernel as filling the device
    bare = timeline(acts, grids=[""] * 10)
    assert device_share(bare, all_rows(bare)).tolist() == [1.0] * 10


def test_kernels_that_shared_the_device_in_the_trace_are_charged_their_time_alone() -> None:
    # GIVEN the two streams overlapping by half a kernel in the trace (b starts 50 µs into
    # each a), every kernel filling the 100-SM device
    a = [(7, i * 100 * US, (i + 1) * 100 * US) for i in range(5)]
    b = [(20, i * 100 * US + 50 * US, (i + 1) * 100 * US + 50 * US) for i in range(5)]
    acts = sorted(a + b, key=lambda x: x[1])
    tl = timeline(acts, grids=["100,1,1"] * 10)
    est = estimate_occurrence(tl, all_rows(tl), CAL, assume_input_copy=False)
    # THEN each ran at half speed while it overlapped another: the device did 550 µs of
    # work (the trace's busy span), not the 1,000 µs the durations add up to
    assert est.parts["gpu_work"] == 550 * US


@pytest.mark.corpus
def test_a100_trace_with_graph_launches_and_host_syncs() -> None:
    # GIVEN the A100 training trace with 70 cudaGraphLaunch, 6 streams and NCCL collectives
    from conftest import corpus_file

    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.regions import find_regions
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    tl = load_trace(
        corpus_file("HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz")
    )
    cal = calibration_for(tl)
    # THEN no A100 profile ships: the H200 one stands in, and says so
    assert cal.name == "nvidia-h200" and cal.is_fallback
    steps = next(r for r in find_regions(tl, index_timeline(tl)) if r.name == "ProfilerStep")
    est = estimate_region(tl, steps.rows, [int(w) for w in steps.wall_ns], cal)
    assert est is not None
    assert est.notes[-1].startswith("calibration nvidia-h200: trace device 'NVIDIA A100")
    # median step: 1,366 activities on 6 streams, 15 host syncs cut it into 16 graphs,
    # 3 host-to-device input copies (the batch) stay eager
    assert (est.nodes, est.streams, est.graphs, est.host_syncs) == (1366, 6, 16, 15)
    assert est.input_copies == 3
    # AND every step holds its own 1,375 activities: the 872 the GPU ran at the start from
    # work launched before the recording began (no launch record, before the first launched
    # activity of their stream) join no step; they had joined the first by time (2,247)
    assert [len(r) for r in steps.rows] == [1375] * 5
    # 70.8 ms of GPU work as the six streams' nodes are scheduled (NCCL waits included; a
    # node starts when the device has room for it, NCCL kernels taking none) + 3.9 ms of
    # input copies + 0.56 ms of node overhead (0.19-0.42 µs per node as calibrated + 0.1 µs
    # graph_node_extra_ns, and at least 2 µs for a kernel after a memset node or a copy node
    # other than device-to-device); the replays' host cost is small beside it (71 µs of
    # launches, 81 µs of host syncs). 75.1 ms of GPU work, 0.563 ms of node overhead and
    # 79.49 ms in all while the queued work joined the first step (the median step of five
    # then gained from the first's extra nodes)
    assert est.parts["gpu_work"] == 70_768_560
    assert est.parts["input_copies"] == 3_872_398
    assert est.parts["node_overhead"] == 561_566
    assert est.graphed_ns == 75_491_544
    # the high end, the 90th percentile of the five steps' own: 93.4 ms; 125.6 ms while the
    # first step carried the queued work (its own prediction 155.0 ms)
    assert est.low_ns == 65_609_978 and est.high_ns == 93_371_050


def test_many_occurrences_are_estimated_from_an_even_sample() -> None:
    # GIVEN the H200 tiny_mlp step (96 kernels), repeated as if the trace held 100 steps
    from conftest import sample_file

    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.estimate import MAX_ESTIMATED_OCCURRENCES
    from traceinspect.analysis.regions import find_regions
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    tl = load_trace(sample_file("tiny_mlp.eager.json.gz"))
    cal = calibration_for(tl)
    step = next(r for r in find_regions(tl, index_timeline(tl)) if r.name == "step")
    one = estimate_region(tl, step.rows[:1], [int(step.wall_ns[0])], cal)
    many = estimate_region(tl, [step.rows[0]] * 100, [int(step.wall_ns[0])] * 100, cal)
    assert one is not None and many is not None
    # THEN 48 evenly spaced occurrences stand for the 100, and the report says so
    assert MAX_ESTIMATED_OCCURRENCES == 48
    assert many.occurrences == 48
    assert many.notes[0] == "estimated from 48 evenly spaced of 100 occurrences"
    # and identical occurrences give the single occurrence's prediction
    assert many.graphed_ns == one.graphed_ns
    assert one.occurrences == 1 and not any("evenly spaced" in n for n in one.notes)


def test_a_fast_hosts_trace_charges_its_input_copies_at_its_pace() -> None:
    # GIVEN the mixed H200 step, whose profiled launch calls took a median 4.9 µs (the
    # typical profiled process: 7.1 µs)
    from conftest import sample_file

    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.analysis.estimate.columns import TimelineColumns
    from traceinspect.analysis.estimate.eager import (
        COPY_PER_LAUNCH_CALL,
        median_launch_call_ns,
        paced_calibration,
    )
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    tl = load_trace(sample_file("mixed.eager.json.gz"))
    cal = calibration_for(tl)
    assert median_launch_call_ns(tl) == 4_942
    # WHEN its replay is estimated from the trace alone
    paced = paced_calibration(tl, cal, TimelineColumns(tl))
    # THEN each input copy costs 1.25 x that median, 6.2 µs, not the calibrated 9.2 µs, the
    # first after a synchronize scaled alike; nothing else in the profile moves
    assert cal.warm_copy_host_ns == 9_170
    assert paced.warm_copy_host_ns == round(COPY_PER_LAUNCH_CALL * 4_942) == 6_178
    first = cal.copy_launch_host_ns * 6_178 / 9_170
    assert paced.copy_launch_host_ns == pytest.approx(first, abs=1)
    assert not paced.copy_host_measured
    assert (paced.graph_node_overhead_ns, paced.sync_ns) == (
        cal.graph_node_overhead_ns,
        cal.sync_ns,
    )
    # AND the estimate says so where a user reads it (JSON, HTML)
    step = diagnose(tl).region("step")
    assert step.estimate is not None
    assert step.estimate.notes[-1] == (
        "input copies charged 6.2 µs of host each (9.2 calibrated), at the pace of this "
        "trace's host; `traceinspect profile` measures it"
    )
    # AND a copy cost measured in the timing process is never replaced, nor raised
    measured = cal.with_host_costs(9_900, 9_200)
    assert measured.with_copy_pace(5_000) is measured
    assert cal.with_copy_pace(12_000) is cal


def test_an_nsight_trace_keeps_the_calibrated_copy_cost() -> None:
    # Nsight Systems traces are taken as traced (their host is not deflated), and their
    # launch calls are not torch.profiler's: the copy cost stays as calibrated
    from conftest import sample_file

    from traceinspect.analysis.estimate.columns import TimelineColumns
    from traceinspect.analysis.estimate.eager import paced_calibration
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    tl = load_trace(sample_file("nsys/host_sync.eager.sqlite.gz"))
    cal = calibration_for(tl)
    assert paced_calibration(tl, cal, TimelineColumns(tl)) is cal
