"""The multi-stream replay schedule: nodes wait for room on the device, and kernels that
shared the device in the trace are charged their time alone."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SAMPLES

from traceinspect.analysis.estimate import schedule
from traceinspect.analysis.estimate.columns import (
    FFMA_KERNEL,
    GATHER_KERNEL,
    MATRIX_KERNEL,
    STREAMING_KERNEL,
    TimelineColumns,
)
from traceinspect.analysis.estimate.schedule import (
    BANDWIDTH_CAP,
    BANDWIDTH_KNEE,
    BANDWIDTH_LATENCY_NS,
    BANDWIDTH_OWN,
    BANDWIDTH_SATURATION,
    BANDWIDTH_SLOWDOWN,
    FP32_BOUND_MIN_NS,
    FP32_SLOWDOWN,
    LIGHT_SLOWDOWN,
    MATRIX_LATENCY_NS,
    MATRIX_SLOWDOWN,
    ONE_WAVE_RELEASE_LIGHT,
    ONE_WAVE_RELEASE_MATRIX,
    PACK_BESIDE_LIGHT_MAX,
    PACKED_EXPONENT,
    GraphSchedule,
    Packing,
    RangeEnd,
    bandwidth_demand,
    bandwidth_slowdown,
    matrix_contention,
    scheduled_path_ns,
    solo_durations,
)
from traceinspect.parse import load_trace

US = 1_000


@pytest.fixture(autouse=True)
def _mechanisms_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test here isolates one mechanism of the schedule: the charge of a light kernel
    beside another stream's (``LIGHT_BESIDE_NS``) is off but in the tests of it, which
    set it."""
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_NS", 0.0)
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_LOW_NS", 0.0)


def path(
    keys: list[int],
    dur: list[float],
    share: list[float],
    deps=(),
    overhead=None,
    matrix: list[bool] | None = None,
) -> float:
    n = len(keys)
    return (
        scheduled_path_ns(
            np.array(keys),
            np.array(dur, float) * US,
            np.zeros(n) if overhead is None else np.array(overhead, float) * US,
            np.array(share, float),
            list(deps),
            matrix=None if matrix is None else np.array(matrix, bool),
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


def test_a_light_kernel_beside_a_matrix_kernel_advances_slowly() -> None:
    # a 50 µs elementwise kernel beside a 100 µs GEMM holding 0.9 of the device: it fits,
    # but runs at 1 / (1 + 1.3 * 0.9) of its pace until the GEMM ends, then alone
    slowed = path([1, 2], [100, 50], [0.9, 0.1], matrix=[True, False])
    assert slowed == pytest.approx(100 + (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9)))
    # without the matrix marks, it would have ended inside the GEMM's 100 µs
    assert path([1, 2], [100, 50], [0.9, 0.1]) == 100
    # a short light kernel still ends under the GEMM: 20 µs at pace 1/2.17 is 43.4 µs
    assert path([1, 2], [100, 20], [0.9, 0.1], matrix=[True, False]) == pytest.approx(100)
    # two light kernels do not slow each other (two matrix kernels do: below)
    assert path([1, 2], [100, 50], [0.5, 0.5], matrix=[False, False]) == 100


def test_a_light_kernel_beside_another_streams_kernel_runs_a_little_longer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # In the H200 replays light kernels beside other streams' light kernels ran a median
    # 1.40x their time alone, 640-770 ns more, however little of the device the others held
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_NS", 700.0)
    # two 2 µs elementwise kernels side by side, each on a tenth of the device: 2.7 µs each
    assert path([1, 2], [2, 2], [0.1, 0.1], matrix=[False, False]) == pytest.approx(2.7)
    # the third, after the second on the other stream, runs alone: not charged
    assert path([1, 2, 1], [2, 2, 2], [0.1] * 3, [(1, 2)], matrix=[False] * 3) == pytest.approx(
        2.7 + 2
    )
    # beside a matrix kernel the larger charge holds: 1 + 1.3 x 0.9 for a 50 µs kernel
    slowed = path([1, 2], [100, 50], [0.9, 0.1], matrix=[True, False])
    assert slowed == pytest.approx(100 + (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9)))
    # ... and 700 ns on a 2 µs kernel beside a GEMM holding a twentieth of the device
    assert path([1, 2], [100, 2], [0.05, 0.1], matrix=[True, False]) == pytest.approx(100)
    # (at 1 / 1.35 of its pace while the 2.5 µs GEMM runs, then alone)
    beside = path([1, 2], [2.5, 2], [0.05, 0.1], matrix=[True, False])
    assert beside == pytest.approx(2.5 + (2 - 2.5 / 1.35))
    # a copy beside it (no share of the device) is no company
    assert path([1, 2], [2, 2], [0.0, 0.1], matrix=[False, False]) == pytest.approx(2)
    # matrix kernels are not charged it (their own contention: below)
    assert path([1, 2], [2, 2], [0.1, 0.1], matrix=[True, True]) == pytest.approx(2, abs=0.1)


def test_a_light_kernels_charge_in_company_is_taken_back_from_the_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(schedule, "LIGHT_BESIDE_NS", 700.0)
    # two light kernels traced side by side for 2.7 µs each ran 2 µs alone
    solo = solo_durations(
        np.array([0, 0]), np.array([2_700, 2_700]), np.array([0.1, 0.1]), np.array([False] * 2)
    )
    assert solo.tolist() == pytest.approx([2_000, 2_000])
    # the same kernels one after the other keep their traced time
    apart = solo_durations(
        np.array([0, 2_700]), np.array([2_700, 5_400]), np.array([0.1, 0.1]), np.zeros(2, bool)
    )
    assert apart.tolist() == pytest.approx([2_700, 2_700])


def _streaming_pair(
    dur: list[float], streaming: list[bool], share: float = 1.0, waves: int = 4
) -> GraphSchedule:
    """Two light kernels on two streams, each of ``waves`` waves of 8 blocks to each of the
    132 SMs (the second starts once the first's last wave is dispatched) holding ``share``."""
    packing = Packing(
        np.full(2, 132.0 * 8 * waves),
        np.full(2, 8.0),
        np.full(2, 132.0),
        np.zeros(2, bool),
        streaming=np.array(streaming),
    )
    return GraphSchedule.of(
        np.array([1, 2]), np.full(2, share), [], np.zeros(2, bool), packing=packing
    )


def test_light_kernels_that_stream_memory_share_its_bandwidth() -> None:
    # In the H100 replays of holdout51's two Hyena branches, many-wave copies and FFTs of
    # the two streams interleaved and ran 1.3-3x their time alone: their streams took
    # about the sum of their kernels' times alone; in holdout52's, two foreach AdamW
    # updates on 0.61 and 0.36 of the SMs each ran 1.4-2x
    assert BANDWIDTH_LATENCY_NS == 2000 and BANDWIDTH_SATURATION == 0.5
    assert (BANDWIDTH_KNEE, BANDWIDTH_SLOWDOWN, BANDWIDTH_OWN, BANDWIDTH_CAP) == (0.8, 1.3, 0.5, 3)
    assert bandwidth_demand(np.array([40e3, 2e3, 1e3]), np.array([1.0, 1.0, 0.5])).tolist() == (
        pytest.approx([0.95, 0.0, 0.0])
    )
    # half the SMs draw all the bandwidth; fewer, their share of it
    assert bandwidth_demand(np.array([10e3]), np.array([0.5]))[0] == pytest.approx(0.8)
    assert bandwidth_demand(np.array([10e3]), np.array([0.2]))[0] == pytest.approx(0.32)
    # the slowdown reads what a kernel demands and what those beside it do: a kernel
    # streaming little beside ones streaming much slows the most (up to the cap), one with
    # no streaming company or under the knee not at all
    two = 1 + 1.3 * 0.95 / (0.95 + 0.5)
    assert bandwidth_slowdown(0.95, 0.95) == pytest.approx(two)
    assert bandwidth_slowdown(0.2, 0.95) == pytest.approx(1 + 1.3 * 0.95 / 0.7)
    assert bandwidth_slowdown(0.05, 1.5) == 3.0
    assert bandwidth_slowdown(0.95, 0.0) == 1.0
    assert bandwidth_slowdown(0.4, 0.4) == 1.0
    dur, no_overhead = np.array([40.0, 40.0]) * US, np.zeros(2)
    # two 40 µs kernels of 4 waves: the second starts on the first's last wave (at 30 µs)
    plain = _streaming_pair([40, 40], [False, False])
    assert plain.path_ns(dur, no_overhead) == pytest.approx(70 * US)
    # streaming, they demand 0.95 each: each advances at 1 / 1.85 while both run; the
    # first's last 10 µs take 18.5, the second then has 30 µs left alone
    both = _streaming_pair([40, 40], [True, True])
    start, end = both.spans_ns(dur, no_overhead)
    assert start.tolist() == [0, 30 * US]
    assert end.tolist() == pytest.approx([(30 + 10 * two) * US, (60 + 10 * two) * US])
    assert both.path_ns(dur, no_overhead) == pytest.approx((60 + 10 * two) * US)
    # the high end charges it too; the low end does not
    assert both.path_ns(dur, no_overhead, RangeEnd.HIGH) == pytest.approx((60 + 10 * two) * US)
    assert both.path_ns(dur, no_overhead, RangeEnd.LOW) == pytest.approx(70 * US)
    # one streaming kernel beside one that does not: neither is slowed, though the streaming
    # one alone demands 0.95, past the knee (it drew as much alone)
    one = _streaming_pair([40, 40], [True, False])
    assert one.path_ns(dur, no_overhead) == pytest.approx(70 * US)
    assert one.spans_ns(dur, no_overhead)[1].tolist() == pytest.approx([40 * US, 70 * US])
    # short kernels demand less: two 4 µs kernels demand 0.5 each, 1.0 in all: each at
    # 1 / (1 + 1.3 x 0.5 / 1.0); the first's last 1 µs takes 1.65, the second then has 3 µs
    short = np.array([4.0, 4.0]) * US
    assert both.path_ns(short, no_overhead) == pytest.approx(7.65 * US)
    # with half the SMs each, they would fit side by side: as many waves each, both slowed
    half = _streaming_pair([40, 40], [True, True], share=0.5, waves=1)
    assert half.path_ns(dur, no_overhead) == pytest.approx(40 * two * US)


def test_kernels_that_stream_memory_are_named() -> None:
    names = [
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float>>",
        "triton_poi_fused_add_mul_0",
        "triton_red_fused_sum_1",
        "void vector_fft_symm_r2c<16384u, EPT<32u>, 1u, 0u>",
        "void gemv2T_kernel_val<int, int, float>",
        "void convolve_common_engine_float_NHWC<__nv_bfloat16>",
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>",
    ]
    assert [bool(STREAMING_KERNEL.search(n)) for n in names] == [
        True, True, True, True, True, True, False, False, True,
    ]  # fmt: skip
    # gathers by their own names, not by the index types PyTorch's templates name
    gathers = [
        "void at::native::(anonymous namespace)::EmbeddingBag_updateOutputKernel_sum_mean<float>",
        "void at::native::(anonymous namespace)::indexSelectSmallIndex<float, long, unsigned int>",
        "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<>>",
        "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long)",
        "void at::native::radixSortKVInPlace<2, -1, 32, 32, float, long, unsigned int>",
        "void at::native::mbtopk::gatherTopK<float, unsigned int, 2>",
    ]
    streaming = [
        "void at::native::batch_norm_transform_input_kernel<c10::BFloat16, float, true, int>"
        "(at::GenericPackedTensorAccessor<c10::BFloat16, 4, at::RestrictPtrTraits, int> "
        "const, at::DefaultPtrTraits, int IndexType)",
        "void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, "
        "int>(IndexType)",
        "void at::native::(anonymous namespace)::upsample_nearest2d_out_frame<float, "
        "&at::native::nearest_neighbor_compute_source_index>(float const*, float*)",
    ]
    assert all(GATHER_KERNEL.search(n) for n in gathers)
    assert not any(GATHER_KERNEL.search(n) for n in streaming)
    # the columns mark kernels only, and never a matrix kernel
    cols = TimelineColumns(load_trace(SAMPLES / "two_streams.eager.json.gz"))
    kernel = cols.gpu("kind") == "kernel"
    assert not (cols.streaming & ~kernel).any()
    assert not (cols.streaming & cols.matrix).any()
    assert cols.streaming.any()


def test_matrix_kernels_side_by_side_slow_each_other() -> None:
    # two 100 µs GEMMs, each spread over the whole device yet holding half its block slots
    # (shares 0.5, and without a packing the share stands for the SMs covered): they fit
    # side by side, and each runs at 1 / (1 + 0.5 x (1 - 1 µs / 100 µs) x 1) of its pace
    assert MATRIX_SLOWDOWN == 0.5 and MATRIX_LATENCY_NS == 1000
    both = path([1, 2], [100, 100], [1.0, 1.0], matrix=[True, True])
    assert both == 200  # no room: one after the other, neither slowed
    pair = path([1, 2], [100, 100], [0.5, 0.5], matrix=[True, True])
    assert pair == pytest.approx(100 * (1 + 0.5 * 0.99 * 0.5))
    # twin FP32 MLP branches' replay on the H200 (holdout24): 128-block GEMMs (0.97 of the
    # 132 SMs, 0.16 of the block slots) of 25-38 µs alone ran 1.2-1.57x side by side
    twin = dict(share=[0.16, 0.16], blocks=[128, 128], resident=[6, 6], matrix=[True, True])
    got = packed_path([1, 2], [25.2, 25.2], **twin)
    assert got == pytest.approx(25.2 * (1 + 0.5 * (1 - 1 / 25.2) * 128 / 132))
    assert matrix_contention(np.array([25.2e3]))[0] == pytest.approx(0.5 * (1 - 1 / 25.2))
    # a kernel no longer than the latency does not stretch, nor slow-free kernels pay
    assert matrix_contention(np.array([800.0, 0.0])).tolist() == [0.0, 0.0]
    # the slowed pair ends together; a light kernel beside them keeps its own pace rule
    got = packed_path(
        [1, 2, 3],
        [25.2, 25.2, 10],
        share=[0.16, 0.16, 0.1],
        blocks=[128, 128, 8],
        resident=[6, 6, 16],
        matrix=[True, True, False],
    )
    assert got == pytest.approx(25.2 * (1 + 0.5 * (1 - 1 / 25.2) * 128 / 132))
    # the slowdown is taken back from a trace where the pair overlapped: each 100 µs GEMM
    # (shares 0.5) that ran side by side for all its 124.75 µs is charged 100 µs alone
    traced = 100 * (1 + 0.5 * 0.99 * 0.5)
    start, end = np.zeros(2, np.int64), np.full(2, int(traced * US))
    solo = solo_durations(start, end, np.array([0.5, 0.5]), np.array([True, True]))
    assert solo.tolist() == pytest.approx([traced * US / (1 + 0.5 * (1 - 1 / traced) * 0.5)] * 2)


def test_the_light_pace_follows_the_matrix_share_and_its_end() -> None:
    # the GEMM holds 0.4: the light kernel runs at 1 / 1.52 for 30 µs, then alone
    got = path([1, 2], [30, 40], [0.4, 0.2], matrix=[True, False])
    assert got == pytest.approx(30 + (40 - 30 / (1 + LIGHT_SLOWDOWN * 0.4)))
    # a second GEMM after the first on its stream keeps it slow for 60 µs
    got = path([1, 1, 2], [30, 30, 40], [0.4, 0.4, 0.2], matrix=[True, True, False])
    assert got == pytest.approx(60 + (40 - 60 / (1 + LIGHT_SLOWDOWN * 0.4)))
    # the dependent of a slowed kernel waits for its slowed end
    got = path([1, 2, 2], [100, 50, 10], [0.9, 0.1, 0.1], matrix=[True, False, False])
    assert got == pytest.approx(100 + (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9)) + 10)


def test_copies_keep_their_pace_beside_a_matrix_kernel() -> None:
    assert path([1, 2, 3], [100, 60, 50], [0.9, 0.0, 0.1], matrix=[True, False, False]) == (
        pytest.approx(100 + (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9)))
    )
    assert path([1, 2], [100, 90], [0.9, 0.0], matrix=[True, False]) == 100


def test_solo_durations_take_back_the_slowdown_beside_a_matrix_kernel() -> None:
    # a light kernel that ran all its 80 µs beside a 0.9 GEMM: alone it takes 80 / 2.17
    start = np.array([0, 0]) * US
    end = np.array([100, 80]) * US
    solo = solo_durations(start, end, np.array([0.9, 0.1]), np.array([True, False]))
    assert solo[0] == 100 * US
    assert solo[1] == pytest.approx(80 * US / (1 + LIGHT_SLOWDOWN * 0.9))
    # without the marks, nothing is taken back (the two fit on the device)
    plain = solo_durations(start, end, np.array([0.9, 0.1]))
    assert plain.tolist() == [100 * US, 80 * US]
    # over-full device and a GEMM at once: the larger of the two take-backs
    solo = solo_durations(start, end, np.array([0.9, 0.9]), np.array([True, False]))
    assert solo[1] == pytest.approx(80 * US / (1 + LIGHT_SLOWDOWN * 0.9))
    assert solo[0] == pytest.approx(20 * US + 80 * US / 1.8)


@pytest.mark.parametrize(
    ("name", "matrix"),
    [
        ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1", True),
        ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", True),
        ("ampere_sgemm_128x64_tn", True),
        ("cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", True),
        ("void cudnn::cnn::implicit_convolve_sgemm<float, float, 1024, 5, 5>", True),
        ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", True),
        ("void flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>", True),
        ("triton_tem_fused_addmm_0", True),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
            False,
        ),
        ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>", False),
        ("triton_poi_fused_add_relu_0", False),
    ],
)
def test_matrix_kernels_are_told_by_name(name: str, matrix: bool) -> None:
    assert bool(MATRIX_KERNEL.search(name)) is matrix


def test_the_matrix_column_of_a_real_multi_stream_trace() -> None:
    trace = SAMPLES / "validation/streams_fit/big_and_small/step.b1024.eager.json.gz"
    if not trace.exists():
        pytest.skip("streams_fit sample not present")
    cols = TimelineColumns(load_trace(trace))
    kernels = cols.gpu("kind") == "kernel"
    names = cols.gpu("name")[cols.matrix]
    assert int(kernels.sum()) == 425
    assert int(cols.matrix.sum()) == 10
    assert all("gemm" in str(n).lower() or "nvjet" in str(n) for n in names)
    assert not cols.matrix[~kernels].any()


def packed_path(
    keys, dur, share, blocks, resident, matrix, deps=(), one_wave_release=True, fp32=None
) -> float:
    n = len(keys)
    return (
        scheduled_path_ns(
            np.array(keys),
            np.array(dur, float) * US,
            np.zeros(n),
            np.array(share, float),
            list(deps),
            matrix=np.array(matrix, bool),
            packing=Packing(
                np.array(blocks, float),
                np.array(resident, float),
                np.full(n, 132.0),
                np.array(matrix, bool),
                one_wave_release,
                fp32=None if fp32 is None else np.array(fp32, bool),
            ),
        )
        / US
    )


def test_a_gemm_packed_onto_the_sms_another_leaves_free_runs_long() -> None:
    # DCN-v2's replay on the H200 (132 SMs): a GEMM of 128 SM-filling blocks (share 0.97,
    # 5 µs) holds all but 4 SMs when a GEMM of 128 blocks, 5 to an SM (share 0.19, 15 µs
    # alone), is ready on the other stream
    dcn = dict(share=[0.97, 0.19], blocks=[128, 128], resident=[1, 5], matrix=[True, True])
    # it starts at once, five blocks on each free SM, and runs 5 ** 0.7 = 3.1 times as long
    assert PACKED_EXPONENT == 0.7
    assert packed_path([1, 2], [5, 15], **dcn) == pytest.approx(15 * 5**0.7)
    # (the trace: 42.8-47.3 µs where it took 15.1 alone); without packing it waited: 20 µs
    assert path([1, 2], [5, 15], [0.97, 0.19], matrix=[True, True]) == 20
    # blocks that spread one to an SM alone and still one to an SM packed are not packed:
    # a GEMM of 4 blocks had room anyway; it runs beside the first GEMM (0.97 of the SMs,
    # slowing it by 1 + 0.5 x (1 - 1 / 15) x 0.97) until that one ends, which it barely
    # slows (its 4 blocks cover 0.03 of the SMs)
    first_end = 5 * (1 + 0.5 * (1 - 1 / 5) * 4 / 132)
    beside = first_end / (1 + 0.5 * (1 - 1 / 15) * 128 / 132)
    assert packed_path([1, 2], [5, 15], [0.97, 0.03], [128, 4], [1, 5], [True, True]) == (
        pytest.approx(first_end + 15 - beside)
    )

    def after_tail(first_cover: float, second_cover: float) -> float:
        """The end of a 15 µs GEMM started in the room a 5 µs one frees at 90 % of its run,
        the two slowing each other for the first one's last 0.5 µs."""
        first_end = 4.5 + 0.5 * (1 + 0.5 * (1 - 1 / 5) * second_cover)
        done = (first_end - 4.5) / (1 + 0.5 * (1 - 1 / 15) * first_cover)
        return first_end + 15 - done

    # a kernel one SM holds one block of cannot pack: it waits, until the first GEMM (one
    # wave) makes room at 90 % of its run
    assert packed_path([1, 2], [5, 15], [0.97, 0.5], [128, 66], [1, 1], [True, True]) == (
        pytest.approx(after_tail(128 / 132, 66 / 132))
    )
    assert (
        packed_path(
            [1, 2], [5, 15], [0.97, 0.5], [128, 66], [1, 1], [True, True], one_wave_release=False
        )
        == 20
    )
    # nor where no SM is free: it waits for the room the first frees at 90 % of its run
    assert packed_path([1, 2], [5, 15], [1.0, 0.19], [132, 128], [1, 5], [True, True]) == (
        pytest.approx(after_tail(1.0, 128 / 132))
    )
    # light kernels keep their own slowdown beside matrix kernels: they never pack; this one
    # starts in the room the GEMM frees at 90 % of its run, slowed beside its last 0.5 µs
    got = packed_path([1, 2], [5, 15], [0.97, 0.19], [128, 128], [1, 5], [True, False])
    assert got == pytest.approx(20 - 0.5 / (1 + 1.3 * 0.97))
    # Inception's convolution (98 blocks, two to an SM) with 0.742 of the device held: on
    # the 34 SMs free, two to an SM against one alone: 2 ** 0.7 = 1.62 (the trace: 1.79)
    got = packed_path([1, 2], [30, 11.8], [0.742, 0.37], [98, 98], [1, 2], [True, True])
    assert got == pytest.approx(30)
    assert packed_path([1, 2], [5, 11.8], [0.742, 0.37], [98, 98], [1, 2], [True, True]) == (
        pytest.approx(11.8 * 2**0.7)
    )


def test_a_gemm_waits_for_a_light_kernels_room_instead_of_packing_beside_it() -> None:
    # holdout26's replay: a batch norm of 512 blocks holding 0.97 of the device (5 µs), and
    # on the other stream a GEMM of 128 blocks, five to an SM (share 0.19, 6.3 µs alone)
    assert PACK_BESIDE_LIGHT_MAX == 0.8
    norm = dict(share=[0.97, 0.19], blocks=[512, 128], resident=[4, 5])
    # the batch norm (light) holds more than 0.8 of the device: the GEMM waits for the room
    # its blocks free at 80 % of its run, then runs at its own pace beside the batch norm's
    # last microsecond (which it slows; a matrix kernel keeps its pace beside a light one)
    assert packed_path([1, 2], [5, 6.3], matrix=[False, True], **norm) == pytest.approx(4 + 6.3)
    # beside a GEMM holding the same room it packs, as DCN-v2's did: 6.3 x 5 ** 0.7
    assert packed_path([1, 2], [5, 6.3], matrix=[True, True], **norm) == pytest.approx(
        6.3 * 5**PACKED_EXPONENT
    )


def test_a_graphs_start_nodes_start_in_capture_order() -> None:
    # two start nodes that each fill the device: the one captured first starts first (at its
    # overhead), though the second's overhead is 0.4 µs shorter; the second waits for its
    # room (before, the second started first: 0.1 + 3 + 10 = 13.1 µs)
    assert path([1, 2], [3, 10], [1.0, 1.0], overhead=[0.5, 0.1]) == pytest.approx(0.5 + 3 + 10)
    assert path([1, 2], [10, 3], [1.0, 1.0], overhead=[0.5, 0.1]) == pytest.approx(0.5 + 10 + 3)
    # a later start node still waits its own overhead where that is the longer one: two that
    # fit side by side end at their own overhead plus duration
    assert path([1, 2], [10, 3], [0.5, 0.5], overhead=[0.2, 0.6]) == pytest.approx(10.2)
    assert path([1, 2], [3, 10], [0.5, 0.5], overhead=[0.2, 0.6]) == pytest.approx(10.6)


def test_a_graph_walked_again_gives_what_a_fresh_walk_gives() -> None:
    # a light kernel beside a GEMM slows (the slowed walk), then the same graph with shorter
    # durations: the second walk skips the plain one and gives the same as a fresh schedule
    keys, share = np.array([1, 2]), np.array([0.9, 0.1])
    matrix = np.array([True, False])
    walked = GraphSchedule.of(keys, share, [], matrix)
    first = walked.path_ns(np.array([100.0, 50.0]) * US, np.zeros(2))
    assert walked.slowed_before == [True]
    for dur in ([100.0, 20.0], [10.0, 50.0], [100.0, 50.0]):
        fresh = GraphSchedule.of(keys, share, [], matrix).path_ns(np.array(dur) * US, np.zeros(2))
        assert walked.path_ns(np.array(dur) * US, np.zeros(2)) == pytest.approx(fresh)
    assert first == pytest.approx((100 + (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9))) * US)


def test_a_kernel_of_several_waves_makes_room_in_its_last_one() -> None:
    # FPN's replay on the H200 (132 SMs): NCHW-to-NHWC transposes of 2048 blocks, 8 to an SM
    # (1,056 at once: two waves), on four streams started 3.3 µs apart, each about 6 µs long:
    # the next starts once the last blocks of the one before are dispatched
    two_waves = dict(share=[1.0, 1.0], blocks=[2048, 2048], resident=[8, 8], matrix=[False] * 2)
    assert packed_path([1, 2], [6, 6], **two_waves) == pytest.approx(3 + 6)
    # four waves: room after three quarters of the run
    four = dict(share=[1.0, 1.0], blocks=[4224, 2048], resident=[8, 8], matrix=[False] * 2)
    assert packed_path([1, 2], [8, 6], **four) == pytest.approx(6 + 6)
    # one wave (a GEMM of 128 SM-filling blocks): room at 90 % of its run, where the
    # transpose starts beside the GEMM's last 0.5 µs, at 1 / (1 + 1.3 x 0.97) of its pace
    one = dict(share=[0.97, 1.0], blocks=[128, 2048], resident=[1, 8], matrix=[True, False])
    assert packed_path([1, 2], [5, 6], **one) == pytest.approx(5 + 6 - 0.5 / (1 + 1.3 * 0.97))
    # held to its end (the range's high end): no room before
    assert packed_path([1, 2], [5, 6], **one, one_wave_release=False) == pytest.approx(5 + 6)
    # on one stream the next kernel waits for the end whatever the waves
    assert packed_path([1, 1], [6, 6], **two_waves) == pytest.approx(12)


def test_kernels_of_one_wave_on_two_streams_interleave() -> None:
    # streams_fit/elementwise_chains' replay on the H200: two chains of elementwise kernels
    # of 2,048 blocks, 16 to an SM (one wave of 2,112 slots, 0.97 of the device each), each
    # about 2.5 µs alone; each started 0.5-1 µs into the other's run
    chains = dict(share=[0.97] * 4, blocks=[2048] * 4, resident=[16] * 4, matrix=[False] * 4)
    # each makes room at 80 % of its run: the other chain's kernel starts then
    assert ONE_WAVE_RELEASE_LIGHT == 0.8 and ONE_WAVE_RELEASE_MATRIX == 0.9
    assert packed_path([1, 2, 1, 2], [2.5] * 4, **chains) == pytest.approx(3 * 2.0 + 2.5)
    # held to their ends, the chains run one kernel after another
    got = packed_path([1, 2, 1, 2], [2.5] * 4, **chains, one_wave_release=False)
    assert got == pytest.approx(4 * 2.5)
    # an unknown grid (no SM count) holds its room to its end
    unknown = Packing(np.full(2, 2048.0), np.full(2, 16.0), np.zeros(2), np.zeros(2, bool))
    assert unknown.releases() == [1.0, 1.0]


@pytest.mark.corpus
@pytest.mark.timeout(120)
def test_a_long_multi_stream_graph_with_last_waves_ends() -> None:
    # GIVEN the 8-rank A100 control trace (rank 3): a region whose graph holds 1,040 nodes
    # on three streams over 55 ms of kernels, light ones slowed beside GEMMs and 160 of
    # several waves. Its schedule once spun for ever: at 5e7 ns a float step is coarser than
    # the schedule's epsilon, and a last wave's light-time release never came due.
    from conftest import corpus_file

    from traceinspect.analysis.diagnose import diagnose

    trace = load_trace(corpus_file("HolisticTraceAnalysis__trace_diff__control.json.gz"))
    # WHEN every region is estimated THEN it ends, each estimate in its range
    analysis = diagnose(trace)
    estimates = [r.estimate for r in analysis.region_results if r.estimate is not None]
    assert estimates
    assert all(e.low_ns <= e.graphed_ns <= e.high_ns for e in estimates)


def test_node_spans_are_the_walk_the_path_takes() -> None:
    # a GEMM beside a light kernel (slowed), then a node after both on a third stream: each
    # node's span is where the walk put it, and the last end is the path
    keys, share = np.array([1, 2, 3]), np.array([0.9, 0.1, 0.5])
    matrix = np.array([True, False, False])
    dur, overhead = np.array([100.0, 50.0, 10.0]) * US, np.full(3, 0.5 * US)
    schedule = GraphSchedule.of(keys, share, [(0, 2), (1, 2)], matrix)
    start, end = schedule.spans_ns(dur, overhead)
    light = (50 - 100 / (1 + LIGHT_SLOWDOWN * 0.9)) + 100  # slowed while the GEMM runs
    assert start.tolist() == pytest.approx([0.5 * US, 0.5 * US, (0.5 + light + 0.5) * US])
    assert end.tolist() == pytest.approx([100.5 * US, (0.5 + light) * US, (1 + light + 10) * US])
    assert end.max() == pytest.approx(schedule.path_ns(dur, overhead))
    # where nothing slows (no matrix kernel), the spans follow the plain walk
    plain = GraphSchedule.of(keys, share, [(0, 2), (1, 2)], None)
    assert plain.spans_ns(dur, overhead)[1].max() == pytest.approx(plain.path_ns(dur, overhead))


def test_long_fp32_gemms_slow_each_other_fully() -> None:
    # holdout25's FP32 GEMM chains on the H200: 118 µs FFMA GEMMs of 256 blocks, four to an
    # SM (0.48 of the device's block slots, covering all 132 SMs), on three streams
    assert FP32_SLOWDOWN == 1.0 and FP32_BOUND_MIN_NS == 20_000
    chains = dict(share=[0.48] * 2, blocks=[256] * 2, resident=[4] * 2, matrix=[True] * 2)
    # two side by side: as tensor-core GEMMs each advances at 1 / (1 + 0.5 (1 - 1/118))
    tensor = packed_path([1, 2], [118, 118], **chains)
    assert tensor == pytest.approx(118 * (1 + 0.5 * (1 - 1 / 118)))
    # bound by the FP32 pipes, at 1 / (1 + 1.0 (1 - 1/118)): nearly one after the other
    fp32 = packed_path([1, 2], [118, 118], fp32=[True, True], **chains)
    assert fp32 == pytest.approx(118 * (2 - 1 / 118))
    # a third on a third stream, with 0.04 of the device free: a tensor-core GEMM packs onto
    # the 5 free SMs (4 to an SM against 2 alone: 2 ** 0.7 as long) beside the pair; an
    # FP32 one waits for them, the pipes of every SM being taken
    three = dict(share=[0.48] * 3, blocks=[256] * 3, resident=[4] * 3, matrix=[True] * 3)
    packed = packed_path([1, 2, 3], [118] * 3, **three)
    assert packed == pytest.approx(118 * 2**PACKED_EXPONENT)
    waited = packed_path([1, 2, 3], [118] * 3, fp32=[True] * 3, **three)
    # (it starts in the room the pair frees at 90 % of its run, slowed beside its tail)
    c = 1 - 1 / 118
    assert waited == pytest.approx(fp32 + 118 - 0.1 * fp32 / (1 + c))
    # beside a tensor-core GEMM it still packs, and slows that one as any matrix kernel does
    mixed = packed_path([1, 2, 3], [118] * 3, fp32=[False, False, True], **three)
    assert mixed == pytest.approx(packed)
    # the contention charged per unit of cover, and taken back from a trace where two ran
    # side by side for 2 x 118 µs less the latency
    got = matrix_contention(np.array([118e3, 118e3]), fp32=np.array([True, False]))
    assert got.tolist() == pytest.approx([1.0 * (1 - 1 / 118), 0.5 * (1 - 1 / 118)])
    traced = int(fp32 * US)
    solo = solo_durations(
        np.zeros(2, np.int64),
        np.full(2, traced),
        np.array([0.48, 0.48]),
        np.array([True, True]),
        cover=np.ones(2),
        fp32=np.array([True, True]),
    )
    assert solo.tolist() == pytest.approx([traced / (1 + (1 - 1e3 / traced))] * 2)


@pytest.mark.parametrize(
    ("name", "fp32"),
    [
        ("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma", True),
        ("sm80_xmma_fprop_implicit_gemm_indexed_f32f32_f32f32_f32_nchwkcrs_nchw_ffma", True),
        ("sm80_xmma_gemm_tf32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4", False),
        ("nvjet_sm90_tst_96x128_64x6_1x2_h_bz_NNN", False),
        ("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>", False),
    ],
)
def test_fp32_matrix_kernels_are_told_by_name(name: str, fp32: bool) -> None:
    assert bool(FFMA_KERNEL.search(name)) is fp32


def test_the_fp32_column_of_a_real_multi_stream_trace() -> None:
    folder = SAMPLES / "validation/holdout25/fp32_gemm_chains_3streams_b512"
    trace = folder / "step.b512.eager.json.gz"
    if not trace.exists():
        pytest.skip("holdout25 sample not present")
    cols = TimelineColumns(load_trace(trace))
    assert int(cols.ffma.sum()) == int(cols.matrix.sum()) == 30
    assert not cols.ffma[~cols.matrix].any()


def test_kernels_launched_by_the_host_share_the_device_as_in_the_replay() -> None:
    # The eager run's GPU side (eager.SharedDevice): node i is ready no earlier than the host
    # launches it. Two device-filling 10 µs kernels on two streams launched 1 µs apart: the
    # second waits for the room the first frees at 90 % of its run (a one-wave matrix kernel)
    share, blocks, resident = [1.0, 1.0], [132, 132], [1, 1]
    matrix = np.array([True, True])
    packing = Packing(np.array(blocks, float), np.array(resident, float), np.full(2, 132.0), matrix)
    schedule = GraphSchedule.of(np.array([1, 2]), np.array(share), [], matrix, packing=packing)
    starts, ends = schedule.launched_spans_ns(np.array([10e3, 10e3]), np.array([0.0, 1e3]))
    assert starts.tolist() == pytest.approx([0.0, 9e3])
    # (the first's last microsecond beside it: both slowed by 1 + 0.5 (1 - 1/10))
    assert ends[0] == pytest.approx(9e3 + 1e3 * (1 + 0.5 * 0.9))
    # launched late, a kernel starts when launched, not when its stream is free
    starts, ends = schedule.launched_spans_ns(np.array([10e3, 10e3]), np.array([0.0, 50e3]))
    assert starts.tolist() == [0.0, 50e3] and ends.tolist() == [10e3, 60e3]


def test_the_simulated_eager_run_of_gemm_chains_on_three_streams_shares_the_device() -> None:
    from traceinspect.analysis.estimate import TimelineColumns
    from traceinspect.analysis.estimate.eager import EagerSimulation, SharedDevice
    from traceinspect.calibration import calibration_for

    trace = SAMPLES / "validation/holdout25/fp32_gemm_chains_3streams_b512/step.b512.eager.json.gz"
    if not trace.exists():
        pytest.skip("holdout25 sample not present")
    # holdout25's three chains of 118 µs fp32 GEMMs (eager p50 858 µs measured): simulated
    # without the profiler, the host launches the six GEMMs within some 60 µs; at their
    # traced pace, each as if alone, the chains ran side by side in the time of two GEMMs
    timeline = load_trace(trace)
    cols = TimelineColumns(timeline)
    kernels = np.flatnonzero(cols.gpu("kind") == "kernel")
    rows = kernels[:12]  # the first occurrence's six GEMMs and the kernels beside them
    sim = EagerSimulation.of(timeline, rows, columns=cols)
    assert sim.shared is not None
    shared = sim.shared()
    assert isinstance(shared, SharedDevice)
    # every GEMM is bound by the FP32 pipes (schedule.FP32_SLOWDOWN)
    assert shared.packing.fp32 is not None
    assert int(shared.packing.fp32.sum()) == int(cols.matrix[rows].sum())
    calibration = calibration_for(timeline)
    from traceinspect.analysis.estimate.eager import profiler_cost_for

    run = sim.run(profiler_cost_for(timeline, calibration), calibration.sync_ns)
    apart = EagerSimulation.of(timeline, rows, columns=cols)
    object.__setattr__(apart, "shared", None)
    alone = apart.run(profiler_cost_for(timeline, calibration), calibration.sync_ns)
    # sharing the device: 912 µs; each as if alone: 773 µs, the GPU busy throughout both
    assert (run.eager_ns, run.busy_ns) == (911_747, 834_246)
    assert (alone.eager_ns, alone.busy_ns) == (772_781, 695_280)
