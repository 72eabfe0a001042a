"""How much of the device each kernel occupies, from the launch geometry and the registers
and shared memory the profiler recorded (real H200 traces, Kineto and Nsight Systems)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES

from traceinspect.analysis.estimate import TimelineColumns
from traceinspect.analysis.estimate.columns import SmLimits
from traceinspect.model import Timeline
from traceinspect.parse import load_trace

MULTISTREAM = SAMPLES / "validation" / "multistream_events" / "step.b256.eager.json.gz"
NSYS_TWO_STREAMS = SAMPLES / "nsys" / "two_streams.eager.sqlite.gz"


def _step_dependencies(timeline: Timeline) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
    """Per occurrence of the trace's ``step`` region: each activity's stream (activities in
    start order) and the cross-stream dependencies inferred among them, as index pairs."""
    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.estimate import infer_dependencies
    from traceinspect.analysis.regions import find_regions

    cols = TimelineColumns(timeline)
    (region,) = [r for r in find_regions(timeline, index_timeline(timeline)) if r.name == "step"]
    out = []
    for rows in region.rows:
        rows = np.asarray(rows)
        rows = rows[np.argsort(cols.gpu("start_ns")[rows], kind="stable")]
        out.append((cols.gpu("stream")[rows], infer_dependencies(timeline, rows, columns=cols)))
    return out


def test_prefetch_waits_pair_with_their_layers() -> None:
    # a side stream dequantizes four layers' weights ahead, recording an event after each;
    # the main stream waits on layer i's event before layer i's GEMM (torch 2.11, H200):
    # each GEMM depends on its own layer's dequantization, not all on the last one
    trace = SAMPLES / "validation" / "holdout8" / "dequant_prefetch_b16" / "step.b16.eager.json.gz"
    timeline = load_trace(trace)
    names = timeline.gpu["name"].to_numpy()
    cols = TimelineColumns(timeline)
    per_step = _step_dependencies(timeline)
    assert len(per_step) == 5
    for (streams, deps), rows in zip(per_step, _step_rows(timeline, cols), strict=True):
        dequant = [i for i, r in enumerate(rows) if "elementwise_kernel<128, 4" in names[r]]
        gemm = [i for i, r in enumerate(rows) if names[r].startswith("nvjet")]
        assert len(dequant) == len(gemm) == 4
        assert sorted(deps) == list(zip(dequant, gemm, strict=True))
        assert len({int(streams[i]) for i in dequant}) == 1


def _step_rows(timeline: Timeline, cols: TimelineColumns) -> list[np.ndarray]:
    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.regions import find_regions

    (region,) = [r for r in find_regions(timeline, index_timeline(timeline)) if r.name == "step"]
    return [
        np.asarray(rows)[np.argsort(cols.gpu("start_ns")[np.asarray(rows)], kind="stable")]
        for rows in region.rows
    ]


def _stream_pairs(streams: np.ndarray, deps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(int(streams[a]), int(streams[b])) for a, b in deps]


def _kernel(timeline_gpu: object, name_part: str) -> int:
    import pandas as pd

    assert isinstance(timeline_gpu, pd.DataFrame)
    names = timeline_gpu["name"].astype(str)
    return int(np.flatnonzero(names.str.contains(name_part, regex=False).to_numpy())[0])


def test_kineto_kernels_carry_registers_and_shared_memory() -> None:
    timeline = load_trace(MULTISTREAM)
    gpu = timeline.gpu
    gemm = _kernel(gpu, "nvjet_sm90")
    relu = _kernel(gpu, "vectorized_elementwise_kernel")
    assert (gpu.at[gemm, "registers"], gpu.at[gemm, "shared_mem"]) == (168, 213460)
    assert (gpu.at[relu, "registers"], gpu.at[relu, "shared_mem"]) == (32, 0)
    copies = gpu["kind"].to_numpy() != "kernel"
    assert (gpu["registers"].to_numpy()[copies] == -1).all()


def test_nsys_kernels_carry_registers_and_shared_memory() -> None:
    timeline = load_trace(NSYS_TWO_STREAMS)
    gpu = timeline.gpu
    gemm = _kernel(gpu, "nvjet_sm90")
    # static + dynamic shared memory of the export's kernel table
    assert (gpu.at[gemm, "registers"], gpu.at[gemm, "shared_mem"]) == (168, 213188)
    limits = SmLimits.of(timeline.meta.devices[0].properties)
    assert limits == SmLimits(sms=132, threads=2048, registers=65536, shared_mem=233472, blocks=32)


def test_kineto_device_properties_give_the_h200_limits() -> None:
    timeline = load_trace(MULTISTREAM)
    limits = SmLimits.of(timeline.meta.devices[0].properties)
    # Kineto has no maxBlocksPerSm: compute capability 9.0 holds 32 blocks per SM.
    assert limits == SmLimits(sms=132, threads=2048, registers=65536, shared_mem=233472, blocks=32)


def test_share_counts_the_blocks_an_sm_holds_at_once() -> None:
    timeline = load_trace(MULTISTREAM)
    cols = TimelineColumns(timeline)
    gpu = timeline.gpu
    gemm = _kernel(gpu, "nvjet_sm90")
    relu = _kernel(gpu, "vectorized_elementwise_kernel")
    # The GEMM's 213 KB of shared memory leaves room for one block per SM: its 128 blocks
    # fill 128 of 132 SMs. The ReLU's 128-thread, 32-register blocks fit 16 to an SM (the
    # thread limit, 2048 / 128): 256 blocks take 256 / (16 x 132) of the device.
    assert cols.share[gemm] == pytest.approx(128 / 132)
    assert cols.share[relu] == pytest.approx(256 / (16 * 132))


def test_unknown_occupancy_falls_back_to_one_block_per_sm() -> None:
    limits = SmLimits(sms=132, threads=2048, registers=65536, shared_mem=233472, blocks=32)
    resident = limits.resident_blocks(
        np.array([128.0, 256.0, 1024.0]), np.array([-1.0, 64.0, 32.0]), np.array([0.0, 0, 0])
    )
    # unknown registers: 0 (the caller takes one block per SM); 256 threads x 64 registers:
    # the register file holds 4 blocks; 1024 threads: the thread limit, 2 blocks.
    assert resident.tolist() == [0.0, 4.0, 2.0]


def test_waits_on_one_event_take_one_record() -> None:
    """H200 ``multistream_events`` recorded by ``traceinspect profile`` (Kineto sync events
    on): the three side streams wait on one forked event (id 520), the current stream on
    each branch's own event (521-523). Only the join depends on the branches; the branches
    do not wait for one another."""
    timeline = load_trace(SAMPLES / "validation" / "multistream_events" / "step.b256.eager.json.gz")
    waits = timeline.syncs[timeline.syncs["kind"] == "stream_wait_event"]
    assert waits["event_id"].tolist()[:6] == [520, 520, 520, 521, 522, 523]
    for streams, deps in _step_dependencies(timeline):
        # each branch's last kernel (12 per branch) -> the join's first kernel on stream 7
        assert _stream_pairs(streams, deps) == [(13, 7), (17, 7), (21, 7)]
        assert [a for a, _ in deps] == [11, 23, 35]


def test_without_event_ids_the_branches_are_serialized() -> None:
    """The same workload's first recording, without the profiler's sync events: the waits
    of branches 2 and 3 are matched to the previous branch's record (stated miss)."""
    trace = SAMPLES / "validation" / "multistream_events_nosync" / "step.b256.eager.json.gz"
    timeline = load_trace(trace)
    assert (timeline.syncs["event_id"] < 0).all() if len(timeline.syncs) else True
    streams, deps = _step_dependencies(timeline)[0]
    assert (13, 17) in _stream_pairs(streams, deps)


@pytest.mark.parametrize(
    ("trace", "joins"),
    [
        # two towers, each forked with wait_stream(current), each joined by its own event
        ("holdout5/dual_tower_streams_b4/step.b4.eager.json.gz", [(17, 7)]),
        # two branches forked with wait_stream(current), joined with current.wait_stream(s)
        ("holdout2_fresh/fork_join_streams/step.b512.eager.json.gz", [(17, 7)]),
    ],
)
def test_a_wait_stream_fork_waits_on_the_origin_not_on_the_branch_launched_before(
    trace: str, joins: list[tuple[int, int]]
) -> None:
    """``s.wait_stream(current)`` records on the current stream (7) after the first branch
    (stream 13) was launched; the trace does not say which stream the record was made on.
    Read as a record of the stream launched last, it made the second branch (17) wait for
    the first: two towers that replay side by side were predicted one after the other
    (+9 to +17 %). A stream's first wait before its first launch is a fork from the origin
    (the stream of the last launch), which has nothing launched before it here."""
    for streams, index_pairs in _step_dependencies(load_trace(SAMPLES / "validation" / trace)):
        deps = _stream_pairs(streams, index_pairs)
        assert (13, 17) not in deps
        assert all(dst == 7 for _, dst in deps)
        for join in joins:
            assert join in deps


def test_a_second_fork_after_a_join_waits_on_the_origin_too() -> None:
    """Two Inception modules (holdout14): each forks three branches from the current stream
    (7) with ``wait_stream`` onto side streams 13, 17 and 21 and joins them back with events
    before the next. The second module's waits are not the side streams' first, so they
    were read as waiting on every stream launched before them: each branch waited for the
    one launched before it, the second module ran its branches one after the other, and
    the step was predicted +15 % (+11 % read as forks). A stream's first wait once the
    origin has joined its earlier work is a fork as well."""
    trace = "holdout14/inception_streams_b16/step.b16.eager.json.gz"
    for streams, index_pairs in _step_dependencies(load_trace(SAMPLES / "validation" / trace)):
        deps = _stream_pairs(streams, index_pairs)
        # no branch waits on another; the second module's three forks and both joins
        assert all(7 in pair for pair in deps), deps
        assert sorted(deps) == sorted(
            [(13, 7), (17, 7), (21, 7), (7, 13), (7, 17), (7, 21), (13, 7), (17, 7), (21, 7)]
        )


def test_branches_joined_on_a_stream_that_launched_nothing_fork_from_it() -> None:
    """A prefill chunk (stream 13) and a decode batch (stream 17), each forked from the
    current stream with ``wait_stream`` and joined back with nothing launched after the
    join (holdout29): the current stream launches nothing in the step. Taken as the origin,
    the stream of the last launch (the decode stream) read its own fork as waiting on the
    whole prefill, and the step was predicted +41 to +46 %. Its first wait came before its
    first launch and the first wait after the last launch is on another stream: the
    origin is that stream, and neither branch waits on the other."""
    trace = "holdout29/prefill_decode_2streams/step.b1.eager.json.gz"
    occurrences = _step_dependencies(load_trace(SAMPLES / "validation" / trace))
    assert len(occurrences) == 5
    for streams, index_pairs in occurrences:
        assert set(streams.tolist()) == {13, 17}
        assert _stream_pairs(streams, index_pairs) == []


def test_heads_forked_after_a_trunk_fork_from_the_trunk_stream() -> None:
    """A trunk on the current stream (7), then a metrics branch (13) and a deeper head (17)
    forked onto side streams and joined with nothing launched after (holdout20). In the
    first occurrence the trace names both forks' waiting streams: the stream of the last
    launch (17) was forked itself, and the current stream launched before any wait of its
    own, so both branches fork from it (read from 17, the metrics branch lost its wait on
    the trunk and the deeper head waited on the metrics)."""
    trace = "holdout20/metrics_side_stream_b512/step.b512.eager.json.gz"
    streams, index_pairs = _step_dependencies(load_trace(SAMPLES / "validation" / trace))[0]
    assert sorted(_stream_pairs(streams, index_pairs)) == [(7, 13), (7, 17)]
