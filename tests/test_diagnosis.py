"""The diagnosis on small synthetic timelines: each gap cause, each verdict rule, the region
mapping, the capture pre-flight and the health checks, with exact expected numbers (ns)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceinspect.analysis.arrays import index_timeline, queued_before_recording
from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.gaps import CAUSES, OTHER_DETAILS, group_gaps
from traceinspect.analysis.intervals import covered_ns, grouped_union
from traceinspect.analysis.regions import WHOLE_TRACE, find_regions, occurrence_rows
from traceinspect.analysis.verdict import RegionShape, decide
from traceinspect.model import Timeline, TraceMeta, make_table

PID = TID = 10


def timeline(
    kernels: Sequence[tuple[int, int, int]],
    calls: Sequence[tuple[int, int, str]] = (),
    *,
    annotations: Sequence[tuple[str, int, int]] = (),
    syncs: Sequence[tuple[str, int, int, int]] = (),
    ops: Sequence[tuple[str, int, int, int]] = (),
    gpu_extra: dict[str, Sequence[Any]] | None = None,
    graph_nodes_visible: bool = True,
) -> Timeline:
    """``kernels``: (start, end, launch_row); ``calls``: (start, end, kind) on thread PID/TID,
    already in start order; ``annotations``: (name, start, end) record_functions;
    ``syncs``: (kind, stream, start, end); ``ops``: (name, start, end, depth)."""
    gpu: dict[str, Sequence[Any]] = {
        "kind": ["kernel"] * len(kernels),
        "name": [f"k{i}" for i in range(len(kernels))],
        "pid": [PID] * len(kernels),
        "device": [0] * len(kernels),
        "stream": [7] * len(kernels),
        "start_ns": [k[0] for k in kernels],
        "end_ns": [k[1] for k in kernels],
        "launch_row": [k[2] for k in kernels],
    }
    gpu.update(gpu_extra or {})
    names = {
        "launch": "cudaLaunchKernel",
        "sync": "cudaStreamSynchronize",
        "memcpy": "cudaMemcpyAsync",
        "malloc": "cudaMalloc",
        "event": "cudaStreamWaitEvent",
    }
    host = {
        "name": [names[c[2]] for c in calls],
        "api": ["runtime"] * len(calls),
        "kind": [c[2] for c in calls],
        "pid": [PID] * len(calls),
        "tid": [TID] * len(calls),
        "start_ns": [c[0] for c in calls],
        "end_ns": [c[1] for c in calls],
    }
    ann = {
        "name": [a[0] for a in annotations],
        "source": [
            "profiler_step" if a[0].startswith("ProfilerStep") else "record_function"
            for a in annotations
        ],
        "pid": [PID] * len(annotations),
        "tid": [TID] * len(annotations),
        "start_ns": [a[1] for a in annotations],
        "end_ns": [a[2] for a in annotations],
        "depth": [0] * len(annotations),
    }
    sync_table = {
        "kind": [s[0] for s in syncs],
        "pid": [PID] * len(syncs),
        "tid": [TID] * len(syncs),
        "device": [0] * len(syncs),
        "stream": [s[1] for s in syncs],
        "start_ns": [s[2] for s in syncs],
        "end_ns": [s[3] for s in syncs],
    }
    cpu_ops = {
        "name": [o[0] for o in ops],
        "pid": [PID] * len(ops),
        "tid": [TID] * len(ops),
        "start_ns": [o[1] for o in ops],
        "end_ns": [o[2] for o in ops],
        "depth": [o[3] for o in ops],
    }
    t = Timeline(
        meta=TraceMeta(
            path="synthetic.json",
            format="kineto",
            generation="test",
            graph_nodes_visible=graph_nodes_visible,
        ),
        gpu=make_table("gpu", gpu),
        host=make_table("host", host),
        cpu_ops=make_table("cpu_ops", cpu_ops),
        annotations=make_table("annotations", ann),
        syncs=make_table("syncs", sync_table),
    )
    t.validate()
    return t


def idle_of(t: Timeline) -> dict[str, int]:
    """Idle ns by cause of all the timeline's activities taken as one group."""
    arrays = index_timeline(t)
    rows = np.arange(len(t.gpu), dtype=np.int64)
    gaps = group_gaps(arrays, np.zeros(len(rows), np.int64), rows, 1)
    return {c: int(gaps.idle[0, i]) for i, c in enumerate(CAUSES) if gaps.idle[0, i]}


def other_of(t: Timeline) -> dict[str, int]:
    arrays = index_timeline(t)
    rows = np.arange(len(t.gpu), dtype=np.int64)
    gaps = group_gaps(arrays, np.zeros(len(rows), np.int64), rows, 1)
    return {
        d: int(gaps.other_detail[0, i])
        for i, d in enumerate(OTHER_DETAILS)
        if gaps.other_detail[0, i]
    }


# -- interval helpers ------------------------------------------------------------------------


def test_covered_ns_counts_partial_blocks() -> None:
    blocks = np.array([0, 10]), np.array([5, 20])
    got = covered_ns(*blocks, np.array([3, 0, 6, -5]), np.array([12, 30, 9, 100]))
    # [3,12): 2 of [0,5) + 2 of [10,20); [0,30): 15; [6,9): 0; [-5,100): 15
    assert got.tolist() == [4, 15, 0, 15]


def test_grouped_union_per_group_busy_and_previous_end() -> None:
    group = np.array([1, 0, 1, 0, 1])
    order, prev_end, busy, first = grouped_union(
        group, np.array([0, 5, 2, 0, 10]), np.array([3, 7, 5, 4, 11])
    )
    # group 0: [0,4) [5,7) -> 6; group 1: [0,3) [2,5) [10,11) -> 5 + 1
    assert busy.tolist() == [6, 6]
    assert order.tolist() == [3, 1, 0, 2, 4]
    assert prev_end.tolist() == [-1, 4, -1, 3, 5]
    assert first.tolist() == [True, False, True, False, False]


# -- gap causes ------------------------------------------------------------------------------


def test_gap_waiting_on_the_next_launch_is_host_launch() -> None:
    # GIVEN K1 runs 1000-2000 and the host only calls the launch of K2 at 4000-4500
    t = timeline([(1000, 2000, 0), (5000, 6000, 1)], [(0, 500, "launch"), (4000, 4500, "launch")])
    # THEN the 3000 ns the GPU idled is the host's
    assert idle_of(t) == {"host_launch": 3000}


def test_gap_while_the_host_was_blocked_in_a_sync_is_sync() -> None:
    # The host sits in cudaStreamSynchronize 1500-3900 while the GPU drains at 2000.
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 2)],
        [(0, 500, "launch"), (1500, 3900, "sync"), (4000, 4500, "launch")],
    )
    assert idle_of(t) == {"sync": 3000}


def test_blocking_copy_is_sync_but_an_async_copy_issued_in_the_gap_is_not() -> None:
    # A copy call already running when the GPU drains (it waits for K1) is a blocking copy.
    blocking = timeline(
        [(1000, 2000, 0), (2100, 2200, 1), (5000, 6000, 2)],
        [(0, 500, "launch"), (600, 2300, "memcpy"), (4000, 4500, "launch")],
        gpu_extra={"kind": ["kernel", "memcpy", "kernel"], "copy_kind": ["", "DtoH", ""]},
    )
    # 100 ns before the copy ran is its own launch gap (copy); 2800 ns after it, sync.
    assert idle_of(blocking) == {"copy": 100, "sync": 2800}
    # The same async copy call made at 3000, with the GPU already idle, is launch work.
    issued_late = timeline(
        [(1000, 2000, 0), (3100, 3200, 1), (5000, 6000, 2)],
        [(0, 500, "launch"), (3000, 3050, "memcpy"), (4000, 4500, "launch")],
        gpu_extra={"kind": ["kernel", "memcpy", "kernel"], "copy_kind": ["", "DtoD", ""]},
    )
    assert idle_of(issued_late) == {"host_launch": 2900}


def test_gap_before_a_host_to_device_copy_is_copy() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 1)],
        [(0, 500, "launch"), (4000, 4900, "memcpy")],
        gpu_extra={
            "kind": ["kernel", "memcpy"],
            "copy_kind": ["", "HtoD"],
            "host_memory": ["", "pageable"],
        },
    )
    assert idle_of(t) == {"copy": 3000}


def test_gap_after_a_stream_wait_with_the_launch_queued_is_dependency() -> None:
    # K2's launch returned at 600, long before K1 ended: the stream waited on an event
    # (device-side wait record on K2's stream at 300).
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 1)],
        [(0, 500, "launch"), (550, 600, "launch")],
        syncs=[("stream_wait_event", 7, 300, 310)],
    )
    assert idle_of(t) == {"dependency": 3000}


def test_host_stream_wait_call_marks_the_next_launch_when_no_wait_records() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 2)],
        [(0, 500, "launch"), (510, 520, "event"), (550, 600, "launch")],
    )
    assert idle_of(t) == {"dependency": 3000}


def test_queued_gap_without_a_reason_is_other_queued() -> None:
    t = timeline([(1000, 2000, 0), (5000, 6000, 1)], [(0, 500, "launch"), (550, 600, "launch")])
    assert idle_of(t) == {"other": 3000}
    assert other_of(t) == {"queued": 3000}


def test_short_queued_gap_is_the_gpus_own_dispatch() -> None:
    # 1500 ns < DISPATCH_GAP_NS between two queued kernels
    t = timeline([(1000, 2000, 0), (3500, 6000, 1)], [(0, 500, "launch"), (550, 600, "launch")])
    assert other_of(t) == {"dispatch": 1500}


def test_gap_without_launch_record_is_other_no_launch_record() -> None:
    t = timeline([(1000, 2000, 0), (5000, 6000, -1)], [(0, 500, "launch")])
    assert other_of(t) == {"no_launch_record": 3000}


def test_queued_gap_filled_by_work_outside_the_group_is_outside_work() -> None:
    t = timeline(
        [(1000, 2000, 0), (2000, 4500, -1), (5000, 6000, 1)],
        [(0, 500, "launch"), (550, 600, "launch")],
    )
    arrays = index_timeline(t)
    rows = np.array([0, 2], np.int64)  # the middle activity belongs to someone else
    gaps = group_gaps(arrays, np.zeros(2, np.int64), rows, 1)
    assert int(gaps.idle[0, CAUSES.index("other")]) == 3000
    assert int(gaps.other_detail[0, OTHER_DETAILS.index("outside_work")]) == 3000


def test_overlapping_streams_leave_no_gap_and_busy_is_the_union() -> None:
    t = timeline(
        [(1000, 3000, 0), (2000, 4000, 1), (4000, 5000, 2)],
        [(0, 100, "launch"), (200, 300, "launch"), (3500, 3900, "launch")],
        gpu_extra={"stream": [7, 8, 7]},
    )
    arrays = index_timeline(t)
    gaps = group_gaps(arrays, np.zeros(3, np.int64), np.arange(3, dtype=np.int64), 1)
    assert int(gaps.busy[0]) == 4000
    assert int(gaps.idle.sum()) == 0
    assert int(gaps.span[0]) == 4000


def test_launch_latency_and_queue_depth() -> None:
    t = timeline(
        [(1000, 2000, 0), (2000, 3000, 1), (5000, 6000, 2)],
        [(0, 500, "launch"), (600, 700, "launch"), (4000, 4500, "launch")],
    )
    arrays = index_timeline(t)
    assert arrays.launch_latency.tolist() == [1000, 1400, 1000]
    # At 600, K1 (launched at 0) has not finished; at 4000 everything has.
    assert arrays.queue_depth.tolist() == [0, 1, 0]


# -- regions ---------------------------------------------------------------------------------


def test_regions_strip_step_numbers_and_own_the_launches_inside_them() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 1), (11000, 12000, 2)],
        [(100, 200, "launch"), (4000, 4500, "launch"), (10100, 10200, "launch")],
        annotations=[("ProfilerStep#1", 0, 9000), ("ProfilerStep#2", 10000, 19000)],
    )
    regions = find_regions(t, index_timeline(t))
    assert [(r.name, r.source, r.occurrences) for r in regions] == [
        ("ProfilerStep", "profiler_step", 2)
    ]
    rows = occurrence_rows(t, regions[0])
    assert [r.tolist() for r in rows] == [[0, 1], [2]]
    assert regions[0].wall_ns.tolist() == [9000, 9000]


def test_recursive_occurrences_count_once() -> None:
    t = timeline(
        [(1000, 2000, 0)],
        [(100, 200, "launch")],
        annotations=[("block", 0, 9000), ("block", 50, 8000)],
    )
    (region,) = find_regions(t, index_timeline(t))
    assert region.occurrences == 1


def test_launchless_activities_join_by_time_and_are_counted() -> None:
    t = timeline(
        [(1000, 2000, 0), (3000, 4000, -1)],
        [(100, 200, "launch")],
        annotations=[("fwd", 0, 9000)],
    )
    (region,) = find_regions(t, index_timeline(t))
    assert region.rows[0].tolist() == [0, 1]
    assert region.overlap_matched == 1


def test_work_queued_before_the_recording_joins_no_range() -> None:
    # GIVEN a stream whose first two activities have no launch record and run before its first
    # launched one (the host had launched them before the recording began), a third without a
    # record after it, and a second stream with no launch record at all
    t = timeline(
        [
            (1000, 2000, -1),
            (1500, 2500, -1),
            (2000, 3000, -1),
            (3000, 4000, 0),
            (5000, 6000, -1),
        ],
        [(100, 200, "launch")],
        annotations=[("fwd", 0, 9000)],
        gpu_extra={"stream": [7, 9, 7, 7, 7]},
    )
    arrays = index_timeline(t)
    # THEN only the first two of the first stream are marked queued before the recording
    assert arrays.queued_before.tolist() == [True, False, True, False, False]
    # AND the range gets its launch, and by time the two others without a record
    (region,) = find_regions(t, arrays)
    assert region.rows[0].tolist() == [1, 3, 4]
    assert region.overlap_matched == 2
    summary = diagnose(t, estimate=False).summary
    assert (summary.without_launch_record, summary.queued_before_recording) == (4, 2)
    assert summary.queued_before_recording_ns == 2000  # the first GPU start to their last end


def test_ranges_whose_work_ran_after_the_recording_ended_are_left_out() -> None:
    # GIVEN a host ahead of its GPU: launches at 100, 300 (none ran: a launch of nothing),
    # 1000 and 5000 ran; those at 7000 and 8000 come after the last that ran, and did not
    t = timeline(
        [(2000, 3000, 0), (4000, 5000, 2), (9000, 9500, 3)],
        [
            (100, 200, "launch"),
            (300, 400, "launch"),
            (1000, 1100, "launch"),
            (5000, 5100, "launch"),
            (7000, 7100, "launch"),
            (8000, 8100, "launch"),
        ],
        annotations=[
            ("fwd", 0, 500),  # its second launch has no activity, but the trace goes on
            ("fwd", 900, 1200),
            ("fwd", 6900, 7200),  # launched work the GPU ran after the recording
            ("opt", 7900, 8200),  # its only occurrence did so too
            ("cpu", 8300, 8400),  # launched nothing
        ],
    )
    analysis = diagnose(t, estimate=False)
    regions = {r.region.name: r.region for r in analysis.region_results}
    # THEN fwd keeps its two recorded occurrences and says it lost one; opt is gone; cpu stays
    assert regions["fwd"].occurrences == 2 and regions["fwd"].cut_unrecorded == 1
    assert "opt" not in regions
    assert regions["cpu"].occurrences == 1
    (note,) = [w.message for w in analysis.warnings if w.kind == "recording_ended"]
    assert note == (
        "the recording ended before the GPU ran the last 2 launches (the host was ahead of "
        "it): 1 range that made them left out (opt); the last occurrence of 1 other region "
        "left out"
    )


def test_a_trace_whose_only_range_ran_after_the_recording_is_the_whole_trace() -> None:
    # GIVEN one range, whose only launch ran on the GPU after the recording ended
    t = timeline(
        [(1000, 2000, 0)],
        [(100, 200, "launch"), (3000, 3100, "launch")],
        annotations=[("fwd", 2900, 3200)],
    )
    analysis = diagnose(t, estimate=False)
    # THEN the whole trace is the region, and health says why the range is gone
    assert [r.region.name for r in analysis.region_results] == [WHOLE_TRACE]
    assert [w.kind for w in analysis.warnings if w.kind == "recording_ended"] == ["recording_ended"]


def test_no_annotations_gives_the_whole_trace() -> None:
    t = timeline([(1000, 2000, 0), (5000, 6000, 1)], [(0, 500, "launch"), (4000, 4500, "launch")])
    (region,) = find_regions(t, index_timeline(t))
    assert (region.name, region.source, region.occurrences) == (WHOLE_TRACE, "whole_trace", 1)
    assert region.wall_ns.tolist() == [6000]  # 0 (first call) to 6000 (last kernel)


# -- verdicts --------------------------------------------------------------------------------


def shape(**kw: Any) -> RegionShape:
    base: dict[str, Any] = {
        "occurrences": 5,
        "activities": 100,
        "window_ns": 1_000_000,
        "busy_share": 0.5,
        "idle_share": {},
        "median_activity_ns": 20_000,
        "gpu_per_activity_ns": 20_000,
        "graph_share": 0.0,
    }
    base.update(kw)
    return RegionShape(**base)


@pytest.mark.parametrize(
    ("kw", "verdict"),
    [
        ({"activities": 0}, "idle"),
        ({"graph_share": 0.9}, "already-graphed"),
        ({"idle_share": {"sync": 0.3, "host_launch": 0.2}}, "sync-bound"),
        # a short GPU window (1 ms), but the host waited in syncs for 60% of a 10 ms wall
        ({"busy_share": 1.0, "host_sync_share": 0.6, "wall_ns": 10_000_000}, "sync-bound"),
        # a step that ends in a synchronize: 0.6 × 1.5 ms of waiting < 1 ms of its own GPU work
        ({"busy_share": 1.0, "host_sync_share": 0.6, "wall_ns": 1_500_000}, "compute-bound"),
        ({"busy_share": 0.95}, "compute-bound"),
        # busy but every launch buys 2 µs of GPU time: the host barely keeps up
        ({"busy_share": 0.95, "gpu_per_activity_ns": 2_000}, "mixed"),
        ({"idle_share": {"host_launch": 0.4}}, "launch-bound"),
        ({"busy_share": 0.3, "gpu_per_activity_ns": 2_000}, "launch-bound"),
        # the same, but 20 launches already queued: the host ran ahead, the GPU did not wait
        (
            {"busy_share": 0.3, "gpu_per_activity_ns": 2_000, "median_queue_depth": 20.0},
            "mixed",
        ),
        # host gaps, but mostly long ones: the host did its own work
        (
            {"busy_share": 0.05, "idle_share": {"host_launch": 0.9}, "long_host_share": 0.8},
            "idle",
        ),
        ({"busy_share": 0.05, "idle_share": {"other": 0.95}}, "idle"),
        ({"busy_share": 0.7, "idle_share": {"host_launch": 0.2}}, "mixed"),
    ],
)
def test_verdict_rules(kw: dict[str, Any], verdict: str) -> None:
    got, evidence = decide(shape(**kw), launch_cost_ns=6_839)
    assert got == verdict
    assert evidence


def test_verdict_evidence_carries_the_numbers() -> None:
    got, evidence = decide(
        shape(busy_share=0.04, idle_share={"host_launch": 0.96}, gpu_per_activity_ns=1_500),
        launch_cost_ns=6_839,
    )
    assert got == "launch-bound"
    assert evidence[0] == "GPU busy 4% of its 1,000.0 µs window"
    assert evidence[1] == "1.5 µs of GPU time per launch vs 6.8 µs unprofiled launch cost"
    assert "host_launch gaps 96% of window" in evidence


# -- capture pre-flight and health -------------------------------------------------------------


def test_item_between_launches_makes_the_region_not_capturable() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 2)],
        [(100, 200, "launch"), (2100, 3000, "sync"), (4000, 4500, "launch")],
        annotations=[("step", 0, 9000)],
        ops=[("aten::item", 2000, 3100, 0), ("aten::_local_scalar_dense", 2050, 3050, 1)],
    )
    (region,) = diagnose(t, estimate=False).region_results
    assert region.capture.verdict == "not capturable"
    assert not region.capture.capturable
    (blocker,) = region.capture.blockers
    assert (blocker.kind, blocker.severity, blocker.count) == ("host_sync", "breaks", 1)
    assert blocker.example["op"] == "aten::item"
    assert blocker.example["at_us"] == 2.0
    assert region.idle_ns["sync"] == 3000.0


def test_sync_after_the_last_launch_only_needs_a_change() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, 1)],
        [(100, 200, "launch"), (4000, 4500, "launch"), (6000, 6100, "sync")],
        annotations=[("step", 0, 9000)],
    )
    (region,) = diagnose(t, estimate=False).region_results
    assert region.capture.verdict == "capturable after changes"
    assert [(b.kind, b.severity) for b in region.capture.blockers] == [("trailing_sync", "change")]


def test_changing_kernel_sequence_breaks_capture_and_warmup_allocations_are_notes() -> None:
    t = timeline(
        [(1000, 2000, 0), (11000, 12000, 2), (21000, 22000, 3)],
        [
            (100, 200, "launch"),
            (300, 400, "malloc"),
            (10100, 10200, "launch"),
            (20100, 20200, "launch"),
        ],
        annotations=[("step", 0, 9000), ("step", 10000, 19000), ("step", 20000, 29000)],
        gpu_extra={"name": ["gemm", "gemm", "topk"]},
    )
    (region,) = diagnose(t, estimate=False).region_results
    kinds = {b.kind: b.severity for b in region.capture.blockers}
    assert kinds == {"kernel_sequence_changes": "breaks", "warmup_allocation": "note"}
    assert region.capture.verdict == "not capturable"


@pytest.mark.parametrize("changed", [False, True])
def test_streams_side_by_side_may_start_in_either_order(changed: bool) -> None:
    # GIVEN three steps, each a gemm then a relu on stream 7 beside an all-reduce on stream
    # 9: the all-reduce starts before the relu in the first step, after it in the others
    # (as a DDP step's buckets do beside backward)
    t = timeline(
        [
            (1000, 2000, 0),
            (1500, 4000, 1),
            (2100, 2500, 2),
            (11000, 12000, 3),
            (12100, 12500, 4),
            (12200, 14000, 5),
            (21000, 22000, 6),
            (22100, 22500, 7),
            (22300, 24000, 8),
        ],
        [
            (100 + 10_000 * s + 100 * k, 150 + 10_000 * s + 100 * k, "launch")
            for s in range(3)
            for k in range(3)
        ],
        annotations=[("step", 0, 9000), ("step", 10000, 19000), ("step", 20000, 29000)],
        gpu_extra={
            "name": [
                "gemm",
                "allreduce",
                "relu",
                "gemm",
                "relu",
                "allreduce",
                "gemm",
                "relu" if not changed else "gelu",
                "allreduce",
            ],
            "stream": [7, 9, 7, 7, 7, 9, 7, 7, 9],
        },
    )
    (region,) = diagnose(t, estimate=False).region_results
    kinds = {b.kind: b.severity for b in region.capture.blockers}
    # THEN the order the streams' kernels start in is no change of the work; a kernel that
    # changes on one stream is
    if changed:
        assert kinds == {"kernel_sequence_changes": "breaks"}
        (blocker,) = region.capture.blockers
        assert "occurrence 3 differs at kernel 2: gelu" in blocker.what
    else:
        assert kinds == {}


def test_health_warns_about_missing_launches_hidden_graph_nodes_and_single_occurrence() -> None:
    t = timeline(
        [(1000, 2000, 0), (5000, 6000, -1)],
        [(100, 200, "launch")],
        annotations=[("step", 0, 9000)],
        graph_nodes_visible=False,
    )
    kinds = [h.kind for h in diagnose(t, estimate=False).warnings]
    assert kinds == [
        "missing_launch_records",
        "graph_nodes_hidden",
        "single_occurrence",
        "overlap_matched",
    ]


def test_health_warns_when_the_first_occurrence_is_a_warmup() -> None:
    t = timeline(
        [(1000, 2000, 0), (31000, 32000, 1), (41000, 42000, 2)],
        [(100, 200, "launch"), (30100, 30200, "launch"), (40100, 40200, "launch")],
        annotations=[("step", 0, 29000), ("step", 30000, 39000), ("step", 40000, 49000)],
    )
    (warning,) = diagnose(t, estimate=False).warnings
    assert warning.kind == "warmup_included"
    assert "29.0 µs, 3.2× the median of the others (9.0 µs)" in warning.message


def test_pageable_copy_nonzero_shapes_and_collectives_are_reported() -> None:
    # Two occurrences: a pageable HtoD copy, an NCCL kernel, and aten::nonzero in each;
    # the recorded input shapes differ between them.
    t = timeline(
        [(1000, 2000, 0), (2500, 3000, 1), (11000, 12000, 3), (12500, 13000, 4)],
        [
            (100, 200, "memcpy"),
            (300, 400, "launch"),
            (500, 600, "launch"),
            (10100, 10200, "memcpy"),
            (10300, 10400, "launch"),
        ],
        annotations=[("step", 0, 9000), ("step", 10000, 19000)],
        ops=[("aten::nonzero", 250, 450, 0), ("aten::nonzero", 10250, 10450, 0)],
        gpu_extra={
            "kind": ["memcpy", "kernel", "memcpy", "kernel"],
            "name": [
                "Memcpy HtoD (Pageable -> Device)",
                "ncclDevKernel_AllReduce",
                "Memcpy HtoD (Pageable -> Device)",
                "ncclDevKernel_AllReduce",
            ],
            "copy_kind": ["HtoD", "", "HtoD", ""],
            "host_memory": ["pageable", "", "pageable", ""],
        },
    )
    t.cpu_ops["input_shapes"] = ["[[8, 4]]", "[[16, 4]]"]
    (region,) = diagnose(t, estimate=False).region_results
    found = {(b.kind, b.severity): b.count for b in region.capture.blockers}
    assert found == {
        ("data_dependent_shape", "breaks"): 2,
        ("pageable_copy", "change"): 2,
        ("shapes_change", "change"): 2,
        ("collective", "note"): 2,
    }
    shapes = next(b for b in region.capture.blockers if b.kind == "shapes_change")
    assert "aten::nonzero [[16, 4]]" in shapes.what


def test_clock_skew_is_a_health_warning() -> None:
    # Both kernels start before their launch calls do.
    t = timeline(
        [(1000, 2000, 0), (3000, 4000, 1)], [(1500, 1600, "launch"), (3500, 3600, "launch")]
    )
    kinds = [h.kind for h in diagnose(t, estimate=False).warnings]
    assert kinds == ["clock_skew"]


def test_region_with_gpu_ranges_but_no_linked_activity_is_a_health_warning() -> None:
    # The kernel was launched from another process's thread: nothing links it to "fwd",
    # though kineto's GPU projection of "fwd" shows GPU work under it.
    t = timeline([(1000, 2000, 0)], [(100, 200, "launch")], annotations=[("other", 0, 50)])
    ann = make_table(
        "annotations",
        {
            "name": ["fwd", "fwd"],
            "source": ["record_function", "gpu_user_annotation"],
            "pid": [PID + 1, -1],
            "tid": [TID + 1, -1],
            "start_ns": [0, 1000],
            "end_ns": [9000, 2000],
        },
    )
    t = Timeline(meta=t.meta, gpu=t.gpu, host=t.host, annotations=ann)
    warnings = {h.kind: h.message for h in diagnose(t, estimate=False).warnings}
    assert warnings["unmatched_gpu_ranges"].startswith("fwd: the trace shows GPU work")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 10_000), st.booleans()),
        min_size=1,
        max_size=40,
    )
)
def test_queued_before_marks_exactly_what_precedes_a_streams_first_launch(
    activities: list[tuple[int, int, bool]],
) -> None:
    # GIVEN activities (stream, start, has a launch record) on three streams
    stream = np.array([a[0] for a in activities], np.int64)
    start = np.array([a[1] for a in activities], np.int64)
    launched = np.array([a[2] for a in activities], bool)
    queued = queued_before_recording(np.zeros_like(stream), stream, start, launched)
    for i in range(len(activities)):
        firsts = start[(stream == stream[i]) & launched]
        # THEN an activity is marked exactly when it has no record and its stream has
        # launched ones, all of which start after it
        expected = not launched[i] and len(firsts) > 0 and start[i] < firsts.min()
        assert bool(queued[i]) == expected


def test_a_dataloader_fetch_inside_a_step_stays_on_replay() -> None:
    # GIVEN two steps, each fetching its batch through a DataLoader (a CPU operator in one,
    # a user annotation in the other, as torch records it now) before launching two kernels
    fetch = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    t = timeline(
        [(60_000, 70_000, 0), (70_000, 80_000, 1), (160_000, 170_000, 2), (170_000, 180_000, 3)],
        [
            (55_000, 56_000, "launch"),
            (56_000, 57_000, "launch"),
            (155_000, 156_000, "launch"),
            (156_000, 157_000, "launch"),
        ],
        annotations=[("ProfilerStep#1", 0, 90_000), ("ProfilerStep#2", 100_000, 190_000)],
        ops=[(fetch, 1_000, 51_000, 0)],
    )
    from traceinspect.analysis.estimate.region import data_loader_fetches, data_loading_ns

    # THEN the fetch is found in its step only, by the step's process
    fetches = data_loader_fetches(t)
    assert fetches.tolist() == [[1_000, 51_000, PID]]
    assert data_loading_ns(fetches, 0, 90_000, {PID}) == 50_000
    assert data_loading_ns(fetches, 100_000, 190_000, {PID}) == 0
    assert data_loading_ns(fetches, 0, 90_000, {PID + 1}) == 0
    # AND the first step's replay keeps it, at the unprofiled host's pace, and says so
    (step,) = [r for r in diagnose(t).region_results if r.region.name == "ProfilerStep"]
    assert step.estimate is not None
    assert 0 < step.estimate.parts["data_loading"] <= 50_000
    assert any("DataLoader fetch" in note for note in step.estimate.notes)
