"""The Kineto (PyTorch-profiler Chrome-trace) reader against real traces of every generation.

Expected numbers were read from the files independently with ``json``/``gzip`` and exact
``decimal`` arithmetic; each is stated where it is asserted.
"""

from __future__ import annotations

import functools
import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import corpus_file

from traceinspect.errors import TraceFormatError
from traceinspect.model import Timeline
from traceinspect.parse import kineto, load_trace
from traceinspect.parse._nesting import nesting_depth
from traceinspect.parse.cuda_api import classify_host_call, classify_memcpy
from traceinspect.parse.exact_time import us_to_ns
from traceinspect.parse.kineto import read_kineto

NEGATIVE_QUEUE = "HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz"
TRACE_DIFF = "HolisticTraceAnalysis__trace_diff__control.json.gz"
NCCL = "HolisticTraceAnalysis__nccl_data.json.gz"
V100_RANK0 = "HolisticTraceAnalysis__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
EVENT_SYNC = "HolisticTraceAnalysis__cuda_event_sync__event_sync_trace.json.gz"
BENCHMARK = "HolisticTraceAnalysis__benchmark_result_2869224_1695835535_trace.json.gz"
TRITON = "HolisticTraceAnalysis__triton_example.json.gz"
CPU_ONLY = "HolisticTraceAnalysis__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
INFERENCE_2022 = "HolisticTraceAnalysis__inference_rank_1.json.gz"
ROCM = "HolisticTraceAnalysis__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
RANK70_BIG_ID = "HolisticTraceAnalysis__rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz"
VLLM_ROCM_GRAPH = "TraceLens__vllm_decode_full__graph_execution.json.gz"
RESNET_2021 = "kineto__tb_plugin_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz"

ALL_KINETO = [
    NEGATIVE_QUEUE,
    TRACE_DIFF,
    NCCL,
    V100_RANK0,
    EVENT_SYNC,
    BENCHMARK,
    TRITON,
    CPU_ONLY,
    INFERENCE_2022,
    ROCM,
    RANK70_BIG_ID,
    VLLM_ROCM_GRAPH,
    RESNET_2021,
]

_loaded: dict[str, Timeline] = {}


def timeline(name: str) -> Timeline:
    """Each corpus trace is read once per test session."""
    if name not in _loaded:
        _loaded[name] = read_kineto(corpus_file(name))
    return _loaded[name]


def write_trace(tmp_path: Path, doc: Any, name: str = "trace.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def corpus_doc(name: str) -> dict[str, Any]:
    with gzip.open(corpus_file(name), "rb") as f:
        doc: dict[str, Any] = json.load(f)
    return doc


# ---------------------------------------------------------------------------------------
# Every generation loads and validates.


@pytest.mark.corpus
@pytest.mark.parametrize("name", ALL_KINETO)
def test_every_corpus_trace_loads_and_validates(name: str) -> None:
    tl = timeline(name)
    tl.validate()
    assert tl.meta.format == "kineto"
    assert (tl.gpu["launch_row"] < len(tl.host)).all()
    for table in tl.tables().values():
        if len(table):
            assert table["start_ns"].is_monotonic_increasing


@pytest.mark.corpus
def test_load_trace_dispatches_json_gz_to_this_reader() -> None:
    tl = load_trace(corpus_file(TRITON))
    assert tl.meta.format == "kineto"
    assert len(tl.gpu) == 1


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "generation"),
    [
        (RESNET_2021, "kineto-2021"),  # Kernel/Runtime/Operator cats, flows cat "async"
        (INFERENCE_2022, "kineto-2022"),  # flows cat "async_gpu"
        (TRACE_DIFF, "kineto-2022"),  # flows cat "async_cpu_to_gpu"
        (NEGATIVE_QUEUE, "kineto"),  # ac2g flows
    ],
)
def test_generation_is_recognised(name: str, generation: str) -> None:
    assert timeline(name).meta.generation == generation


# ---------------------------------------------------------------------------------------
# Counts, graphs, joins.


@pytest.mark.corpus
def test_negative_queue_kernels_and_graph_fan_out() -> None:
    # GIVEN the A100 trace with 6,080 kernels and 70 cudaGraphLaunch calls, whose replays
    # produced 345 GPU activities (135 kernels + 210 memsets), 1 to 20 per launch.
    tl = timeline(NEGATIVE_QUEUE)
    assert len(tl.kernels) == 6080
    assert len(tl.gpu) == 7747  # + 1,390 memcpy + 277 memset
    graph_launches = tl.host[tl.host["kind"] == "graph_launch"]
    assert len(graph_launches) == 70
    assert set(graph_launches["name"]) == {"cudaGraphLaunch"}
    # WHEN GPU rows are grouped by the graph launch they point at
    replayed = tl.gpu[tl.gpu["launch_row"].isin(graph_launches.index)]
    fan_out = replayed.groupby("launch_row").size()
    # THEN every launch fans out to 1..20 activities, all flagged from_graph
    assert len(fan_out) == 70
    assert fan_out.min() == 1 and fan_out.max() == 20
    assert len(replayed) == 345
    assert (replayed["kind"] == "kernel").sum() == 135
    assert replayed["from_graph"].all()
    assert tl.gpu["from_graph"].sum() == 345
    # 872 activities (705 kernels, 140 memcpy, 27 memset) were launched before the window.
    assert (tl.gpu["launch_row"] == -1).sum() == 872
    assert "872 GPU activities without a launch record" in tl.meta.notes


@pytest.mark.corpus
def test_trace_diff_kernel_count() -> None:
    assert len(timeline(TRACE_DIFF).kernels) == 8568


@pytest.mark.corpus
def test_v100_timestamps_are_exact_to_the_ns() -> None:
    # The kernel with correlation 135071 has "ts": 1712195495505582.988, "dur": 4.928.
    # float64 would give 1712195495505583104 ns; the exact value is ...582988.
    tl = timeline(V100_RANK0)
    kernel = tl.gpu[tl.gpu["correlation"] == 135071].iloc[0]
    assert kernel["start_ns"] == 1712195495505582988
    assert kernel["end_ns"] == 1712195495505587916
    # Its cudaLaunchKernel: "ts": 1712195495505543.140 (json.load reads ...543.2),
    # "dur": 41.768.
    launch = tl.host.iloc[kernel["launch_row"]]
    assert launch["name"] == "cudaLaunchKernel" and launch["kind"] == "launch"
    assert launch["start_ns"] == 1712195495505543140
    assert launch["end_ns"] == 1712195495505584908
    assert tl.meta.profiler["trace_id"] == "094DFF9CD7781F8ADDEAFBA6A8855CA7"
    assert tl.meta.devices[0].name == "Tesla V100-SXM2-32GB"


@pytest.mark.corpus
def test_relative_ts_plus_base_time_nanoseconds() -> None:
    # nccl_data: "baseTimeNanoseconds": 1711964646000000000; the cpu_op
    # "autograd::engine::evaluate_function: DivBackward1" (tid 2919752) has
    # "ts": 4458676522690.655, "dur": 156.777.
    tl = timeline(NCCL)
    ops = tl.cpu_ops
    op = ops[
        (ops["name"] == "autograd::engine::evaluate_function: DivBackward1")
        & (ops["tid"] == 2919752)
    ].iloc[0]
    assert op["start_ns"] == 1716423322522690655
    assert op["end_ns"] == 1716423322522847432
    assert op["external_id"] == 2049
    # gpu_user_annotation projections keep their device/stream, no host thread.
    gpu_ann = tl.annotations[tl.annotations["source"] == "gpu_user_annotation"]
    assert len(gpu_ann) == 30  # 9 on stream 7, 21 on stream 40
    assert set(gpu_ann["device"]) == {0}
    assert gpu_ann["stream"].value_counts().to_dict() == {40: 21, 7: 9}
    assert (gpu_ann["pid"] == -1).all()


@pytest.mark.corpus
def test_a_step_left_open_past_the_recording_is_cut_where_recording_stopped() -> None:
    # An on-demand trace: ProfilerStep#1 opens at +353.8 ms and is written ending 13.3 s
    # later, in a 355.5 ms trace ("PyTorch Profiler (0)") whose last event, a
    # cudaDeviceSynchronize, ends at +355.4 ms. Read whole, the step (and the whole trace,
    # which spans it) took 13.3 s, and replay would have "saved" it.
    tl = timeline(TRITON)
    step = tl.annotations[tl.annotations["name"] == "ProfilerStep#1"].iloc[0]
    # Cut where the profiler's span ends, 142.3 µs after the synchronize does.
    sync_end = int(tl.host[tl.host["name"] == "cudaDeviceSynchronize"]["end_ns"].iloc[0])
    assert step["end_ns"] - sync_end == 142_339
    assert step["end_ns"] - step["start_ns"] == 1_673_183  # 1,673.2 µs, not 13,336,315.8
    assert any(
        n == "1 range ended past the trace's recording (by up to 13,334.6 ms): cut at its "
        "last recorded point"
        for n in tl.meta.notes
    )


def test_ranges_are_cut_at_the_last_recorded_event_without_a_profiler_span(
    tmp_path: Path,
) -> None:
    def x(cat: str, name: str, ts: float, dur: float, **args: Any) -> dict[str, Any]:
        return {
            "ph": "X",
            "cat": cat,
            "name": name,
            "pid": 1,
            "tid": 1,
            "ts": ts,
            "dur": dur,
            "args": args,
        }

    events = [
        x("user_annotation", "ProfilerStep#1", 100, 50),
        x("user_annotation", "ProfilerStep#2", 150, 9_000),  # open when recording stopped
        x("user_annotation", "outer", 160, 8_000),
        x("cpu_op", "aten::add", 155, 10),
        x("cuda_runtime", "cudaLaunchKernel", 157, 5, correlation=7),
        {**x("kernel", "k", 170, 20, correlation=7, device=0, stream=7), "pid": 0, "tid": 7},
    ]
    tl = read_kineto(write_trace(tmp_path, {"traceEvents": events}))
    ends = dict(zip(tl.annotations["name"], tl.annotations["end_ns"], strict=True))
    assert ends == {"ProfilerStep#1": 150_000, "ProfilerStep#2": 190_000, "outer": 190_000}
    assert tl.meta.notes == (
        "2 ranges ended past the trace's recording (by up to 9.0 ms): cut at its last "
        "recorded point",
    )
    # Without the profiler's span a last step may end a little after its last event (here
    # 20 µs, in a trace of 35 µs): read as written.
    events[1]["dur"], events[2]["dur"] = 60, 10
    tl = read_kineto(write_trace(tmp_path, {"traceEvents": events}, "inside.json"))
    assert tl.meta.notes == ()
    assert sorted(tl.annotations["end_ns"].tolist()) == [150_000, 170_000, 210_000]
    # With it, nothing past the span's end is kept.
    span = {
        **x("Trace", "PyTorch Profiler (0)", 90, 110),
        "pid": "Spans",
        "tid": "PyTorch Profiler",
    }
    tl = read_kineto(write_trace(tmp_path, {"traceEvents": [*events, span]}, "span.json"))
    assert sorted(tl.annotations["end_ns"].tolist()) == [150_000, 170_000, 200_000]
    assert tl.meta.notes == (
        "1 range ended past the trace's recording (by up to 10.0 µs): cut at its last recorded "
        "point",
    )


@pytest.mark.corpus
def test_triton_kernel_joins_its_driver_launch() -> None:
    # triton_poi_fused_add_cos_sin_0 has correlation 35, shared with a cuLaunchKernel
    # event of cat cuda_driver on pid 1670242.
    tl = timeline(TRITON)
    kernel = tl.kernels.iloc[0]
    assert kernel["name"] == "triton_poi_fused_add_cos_sin_0"
    assert kernel["grid"] == "1,1,1" and kernel["block"] == "128,1,1"
    assert kernel["launch_row"] != -1
    launch = tl.host.iloc[kernel["launch_row"]]
    assert (launch["name"], launch["api"], launch["kind"]) == ("cuLaunchKernel", "driver", "launch")
    assert kernel["pid"] == 1670242
    sync = tl.host[tl.host["name"] == "cudaDeviceSynchronize"].iloc[0]
    assert (sync["api"], sync["kind"]) == ("runtime", "sync")
    assert tl.meta.profiler["cupti_version"] == "18"


@pytest.mark.corpus
def test_2021_resnet_joins_all_9096_gpu_activities() -> None:
    # 8,772 Kernel + 312 Memset + 12 Memcpy; each has an "async" flow pair whose id is a
    # Runtime call's correlation. tid values are strings ("stream 7", "25738").
    tl = timeline(RESNET_2021)
    assert len(tl.gpu) == 9096
    assert (tl.gpu["kind"].value_counts().to_dict()) == {
        "kernel": 8772,
        "memset": 312,
        "memcpy": 12,
    }
    assert (tl.gpu["launch_row"] >= 0).all()
    assert set(tl.gpu["stream"]) == {7}
    launches = tl.host.iloc[tl.kernels["launch_row"].to_numpy()]
    assert set(launches["name"]) == {"cudaLaunchKernel"}
    # Runtime calls come from tid "25738" (6,583) and "25772" (5,340).
    assert tl.host["tid"].value_counts().to_dict() == {25738: 6583, 25772: 5340}
    # Operator events are cpu_ops; the lowercase "external id" links Runtime calls to them.
    assert len(tl.cpu_ops) == 23640
    assert (tl.host["external_id"] >= 0).all()


@pytest.mark.corpus
def test_2022_inference_joins_through_async_gpu_flows(tmp_path: Path) -> None:
    # GIVEN the 2022 trace with its "correlation" args removed, so only the async_gpu
    # flows (ph s on the cudaLaunchKernel, ph f on the kernel, id = correlation) remain
    doc = corpus_doc(INFERENCE_2022)
    for event in doc["traceEvents"]:
        (event.get("args") or {}).pop("correlation", None)
    path = write_trace(tmp_path, doc)
    # WHEN read
    tl = read_kineto(path)
    # THEN the 4 kernels still join their launches (correlations 538860, 538873, ...)
    assert len(tl.kernels) == 4
    assert tl.gpu["correlation"].tolist() == [538860, 538873, 538885, 538890]
    launches = tl.host.iloc[tl.gpu["launch_row"].to_numpy()]
    assert launches["name"].tolist() == ["cudaLaunchKernel"] * 4
    assert launches["correlation"].tolist() == [538860, 538873, 538885, 538890]
    # and the untouched file gives the same join through args.correlation.
    original = timeline(INFERENCE_2022)
    assert original.gpu["launch_row"].tolist() == tl.gpu["launch_row"].tolist()


def test_flows_are_ignored_once_correlation_args_exist(tmp_path: Path) -> None:
    # GIVEN a trace whose first kernel has args.correlation and whose second has only flows
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5}
    doc = {
        "traceEvents": [
            {**launch, "ts": 1, "dur": 2, "args": {"correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 4, "dur": 1,
             "args": {"correlation": 1}},
            {**launch, "ts": 10, "dur": 2, "args": {}},
            {"ph": "s", "cat": "ac2g", "id": 2, "pid": 5, "tid": 5, "ts": 10},
            {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 14, "dur": 1},
            {"ph": "f", "cat": "ac2g", "id": 2, "pid": 0, "tid": 7, "ts": 14, "bp": "e"},
        ]
    }  # fmt: skip
    # THEN the trace is joined by args alone (flows are the fallback of old exporters)
    tl = read_kineto(write_trace(tmp_path, doc))
    assert tl.gpu["launch_row"].tolist() == [0, -1]
    assert tl.gpu["correlation"].tolist() == [1, -1]
    assert "1 GPU activities without a launch record" in tl.meta.notes


@pytest.mark.corpus
def test_rocm_hip_names_classify_like_cuda() -> None:
    # mi250: hipLaunchKernel x12, hipMemcpyWithStream x2, hipExtModuleLaunchKernel x2,
    # hipDeviceSynchronize x1, hipGetDevicePropertiesR0600 x4.
    tl = timeline(ROCM)
    kinds = tl.host.groupby("name")["kind"].agg(set).to_dict()
    assert kinds == {
        "hipLaunchKernel": {"launch"},
        "hipMemcpyWithStream": {"memcpy"},
        "hipExtModuleLaunchKernel": {"launch"},
        "hipDeviceSynchronize": {"sync"},
        "hipGetDevicePropertiesR0600": {"other"},
    }
    assert (tl.gpu["launch_row"] >= 0).all()  # all 16 GPU activities joined
    assert set(tl.host["api"]) == {"runtime"}


@pytest.mark.corpus
def test_rocm_graph_launch_fans_out_to_421_kernels() -> None:
    # vLLM decode: one hipGraphLaunch replays 421 of the trace's 425 kernels.
    tl = timeline(VLLM_ROCM_GRAPH)
    assert len(tl.kernels) == 425
    assert tl.gpu["from_graph"].sum() == 421
    graph_row = tl.host.index[tl.host["name"] == "hipGraphLaunch"][0]
    assert (tl.gpu["launch_row"] == graph_row).sum() == 421
    assert tl.host.loc[graph_row, "kind"] == "graph_launch"
    memcpy = tl.gpu[tl.gpu["kind"] == "memcpy"]
    assert len(memcpy) == 9 and set(memcpy["copy_kind"]) == {"DtoD"}


@pytest.mark.corpus
def test_cpu_only_trace_has_no_gpu_rows() -> None:
    # 4 aten::empty cpu_ops; 10 gloo:all_reduce ranges (c10d's: communication, not regions)
    # and ProfilerStep#551.
    tl = timeline(CPU_ONLY)
    assert len(tl.gpu) == 0 and len(tl.host) == 0
    assert not tl.has_gpu_activity
    assert len(tl.cpu_ops) == 4
    steps = tl.annotations[tl.annotations["source"] == "profiler_step"]
    assert steps["name"].tolist() == ["ProfilerStep#551"]
    assert (tl.annotations["source"] == "collective").sum() == 10
    assert set(tl.annotations.loc[tl.annotations["source"] == "collective", "name"]) == {
        "gloo:all_reduce"
    }
    assert tl.meta.devices == ()


@pytest.mark.corpus
def test_id_above_int64_loads() -> None:
    # args "Comms Id": 10159970886766084423 (> 2**63) on the cpu_op; ts 100/200 µs, no base.
    tl = timeline(RANK70_BIG_ID)
    assert tl.cpu_ops["name"].tolist() == ["record_param_comms"]
    assert tl.cpu_ops["start_ns"].tolist() == [200_000]
    assert tl.gpu["start_ns"].tolist() == [100_000] and tl.gpu["end_ns"].tolist() == [150_000]


def test_correlation_above_int64_wraps_instead_of_crashing(tmp_path: Path) -> None:
    big = 10159970886766084423
    doc = {
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 1, "dur": 1, "args": {"correlation": big, "External id": big}},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3, "dur": 1,
             "args": {"correlation": big, "device": 0, "stream": 7}},
        ]
    }  # fmt: skip
    tl = read_kineto(write_trace(tmp_path, doc))
    assert tl.gpu["correlation"].tolist() == [big - 2**64]
    assert tl.gpu["launch_row"].tolist() == [0]


def test_graph_id_args_mark_graph_nodes(tmp_path: Path) -> None:
    # Newer kineto writes "graph id" / "graph node id" on kernels replayed from a graph.
    doc = {
        "traceEvents": [
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 9, "tid": 9,
             "ts": 10, "dur": 5, "args": {"correlation": 77}},
            {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 20, "dur": 1,
             "args": {"correlation": 77, "graph id": 3, "graph node id": 41,
                      "grid": [2, 1, 1], "block": [64, 1, 1]}},
            {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 22, "dur": 1,
             "args": {"correlation": 77, "graph id": 3, "graph node id": 42}},
            {"ph": "X", "cat": "kernel", "name": "eager", "pid": 0, "tid": 7, "ts": 30,
             "dur": 1, "args": {"correlation": 78}},
        ]
    }  # fmt: skip
    tl = read_kineto(write_trace(tmp_path, doc))
    assert tl.gpu["graph_id"].tolist() == [3, 3, -1]
    assert tl.gpu["graph_node_id"].tolist() == [41, 42, -1]
    assert tl.gpu["from_graph"].tolist() == [True, True, False]
    assert tl.gpu["launch_row"].tolist() == [0, 0, -1]
    assert tl.gpu["pid"].tolist() == [9, 9, 9]  # the third falls back to the main host pid
    assert tl.gpu["grid"].tolist() == ["2,1,1", "", ""]
    assert tl.gpu["block"].tolist() == ["64,1,1", "", ""]
    assert "1 GPU activities without a launch record" in tl.meta.notes


@pytest.mark.corpus
def test_cuda_sync_events_become_syncs() -> None:
    # benchmark_result: 41 cuda_sync events: 20 "Stream Wait Event", 16 "Stream Sync",
    # 5 "Context Sync". The first (ts 1695835572943623, dur 9, correlation 15) was caused by
    # cudaStreamSynchronize on thread 2869224.
    tl = timeline(BENCHMARK)
    assert tl.syncs["kind"].value_counts().to_dict() == {
        "stream_wait_event": 20,
        "stream": 16,
        "context": 5,
    }
    first = tl.syncs.iloc[0]
    assert first["start_ns"] == 1695835572943623000 and first["end_ns"] == 1695835572943632000
    assert (first["correlation"], first["pid"], first["tid"]) == (15, 2869224, 2869224)
    assert (first["device"], first["stream"]) == (0, 7)
    # event_sync trace: 2 "Event Sync", 1 "Stream Sync", 1 "Context Sync".
    kinds = sorted(timeline(EVENT_SYNC).syncs["kind"])
    assert kinds == ["context", "event", "event", "stream"]


@pytest.mark.corpus
def test_memcpy_and_memset_details() -> None:
    # negative_queue's first "Memcpy HtoD (Pinned -> Device)" moves 147,456 bytes.
    gpu = timeline(NEGATIVE_QUEUE).gpu
    pinned = gpu[gpu["name"] == "Memcpy HtoD (Pinned -> Device)"].iloc[0]
    assert (pinned["copy_kind"], pinned["host_memory"], pinned["bytes"]) == (
        "HtoD",
        "pinned",
        147456,
    )
    dtoh = gpu[gpu["name"] == "Memcpy DtoH (Device -> Pageable)"]
    assert set(dtoh["copy_kind"]) == {"DtoH"} and set(dtoh["host_memory"]) == {"pageable"}
    memsets = gpu[gpu["kind"] == "memset"]
    assert len(memsets) == 277 and (memsets["bytes"] > 0).all()
    assert set(memsets["copy_kind"]) == {""} and set(memsets["grid"]) == {""}


@pytest.mark.corpus
def test_annotation_depth_follows_nesting() -> None:
    # negative_queue thread 4515: ProfilerStep#550 (outer) > "## forward ##" >
    # DistributedDataParallel.forward > "## forward:sparse_arch ##" > ...
    ann = timeline(NEGATIVE_QUEUE).annotations
    depth = ann.drop_duplicates("name").set_index("name")["depth"]
    assert depth["ProfilerStep#550"] == 0
    assert depth["## forward ##"] == 1
    assert depth["DistributedDataParallel.forward"] == 2
    assert depth["## forward:sparse_arch ##"] == 3
    assert depth["## all2all_data:recat_values ##"] == 7
    assert (ann[ann["source"] == "profiler_step"]["depth"] == 0).all()


@pytest.mark.corpus
def test_cpu_op_depth_and_input_shapes() -> None:
    # First cpu_ops of negative_queue: aten::select [5] contains aten::as_strided [6];
    # aten::gt [7] contains aten::to [8] which contains aten::_to_copy [9].
    ops = timeline(NEGATIVE_QUEUE).cpu_ops.head(5)
    assert ops["name"].tolist() == [
        "aten::select",
        "aten::as_strided",
        "aten::gt",
        "aten::to",
        "aten::_to_copy",
    ]
    assert ops["depth"].tolist() == [0, 1, 0, 1, 2]
    assert ops["external_id"].tolist() == [5, 6, 7, 8, 9]
    assert ops["input_shapes"].iloc[0] == "[[1], [], []]"
    assert json.loads(ops["input_shapes"].iloc[0]) == [[1], [], []]


@pytest.mark.corpus
def test_devices_and_profiler_versions() -> None:
    meta = timeline(NEGATIVE_QUEUE).meta
    assert len(meta.devices) == 8
    assert meta.devices[0].name == "NVIDIA A100-SXM4-80GB"
    assert meta.devices[0].properties["totalGlobalMem"] == 84990623744
    assert meta.profiler["schemaVersion"] == "1"


# ---------------------------------------------------------------------------------------
# Streaming: chunking must not change the result.


@pytest.mark.corpus
def test_small_chunks_give_identical_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN the nccl trace read whole, and again in ~16 KB chunks read 4 KB at a time
    whole = timeline(NCCL)
    monkeypatch.setattr(kineto, "CHUNK_BYTES", 16 * 1024)
    monkeypatch.setattr(kineto, "READ_BYTES", 4 * 1024)
    chunked = read_kineto(corpus_file(NCCL))
    # THEN every table is identical, and so is the metadata read after the events
    for name, table in whole.tables().items():
        pd.testing.assert_frame_equal(table, chunked.tables()[name], obj=name)
    assert chunked.meta == whole.meta


def test_cut_inside_nested_value_is_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Args holding lists of objects put '}, {' inside events; chunk cuts there must fail to
    # decode and move to a real event boundary.
    events = [
        {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1,
         "args": {"External id": i, "meta": [{"a": "}, {"}, {"b": 2}, {"c": 3}] * 20}}
        for i in range(300)
    ]  # fmt: skip
    path = write_trace(tmp_path, {"traceEvents": events, "baseTimeNanoseconds": 5})
    monkeypatch.setattr(kineto, "CHUNK_BYTES", 2048)
    monkeypatch.setattr(kineto, "READ_BYTES", 1000)
    tl = read_kineto(path)
    assert tl.cpu_ops["name"].tolist() == [f"op{i}" for i in range(300)]
    assert tl.cpu_ops["start_ns"].tolist() == [i * 1000 + 5 for i in range(300)]


def test_null_fields_read_as_unknown(tmp_path: Path) -> None:
    doc = {
        "traceEvents": [
            {"ph": "X", "cat": "kernel", "name": None, "pid": None, "tid": None, "ts": 1,
             "dur": None, "id": None, "args": {"correlation": None, "device": None,
             "stream": None, "External id": None, "grid": None}},
            {"ph": "X", "cat": "cuda_sync", "name": None, "pid": 0, "tid": 7, "ts": 1,
             "dur": 1, "args": {"cuda_sync_kind": None}},
            {"ph": "X", "cat": None, "name": "x", "ts": 1},
        ]
    }  # fmt: skip
    tl = read_kineto(write_trace(tmp_path, doc))
    tl.validate()
    kernel = tl.gpu.iloc[0]
    assert (kernel["name"], kernel["grid"], kernel["block"]) == ("", "", "")
    assert (kernel["device"], kernel["stream"], kernel["correlation"]) == (-1, -1, -1)
    assert (kernel["start_ns"], kernel["end_ns"]) == (1000, 1000)
    assert tl.syncs["kind"].tolist() == ["unknown"]
    assert (tl.syncs["device"].tolist(), tl.syncs["stream"].tolist()) == ([0], [7])


def test_top_level_array_and_empty_events(tmp_path: Path) -> None:
    array = [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 2, "ts": 1.5, "dur": 2}]
    tl = read_kineto(write_trace(tmp_path, array, "array.json"))
    assert tl.cpu_ops["start_ns"].tolist() == [1500]
    assert tl.cpu_ops["end_ns"].tolist() == [3500]
    for doc in (array, {"traceEvents": array}):  # after a UTF-8 byte-order mark
        bom = tmp_path / "bom.json"
        bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode())
        assert load_trace(bom).cpu_ops["end_ns"].tolist() == [3500]
    empty = read_kineto(write_trace(tmp_path, {"traceEvents": []}, "empty.json"))
    empty.validate()
    assert all(len(t) == 0 for t in empty.tables().values())


# ---------------------------------------------------------------------------------------
# Bad input: one-line TraceFormatError, never a traceback.


@pytest.mark.corpus
def test_truncated_gzip_is_a_format_error(tmp_path: Path) -> None:
    data = corpus_file(TRITON).read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated or corrupt gzip"):
        read_kineto(path)


@pytest.mark.corpus
def test_truncated_json_names_the_problem(tmp_path: Path) -> None:
    with gzip.open(corpus_file(TRITON), "rb") as f:
        text = f.read()
    path = tmp_path / "cut.json"
    path.write_bytes(text[: len(text) - 300])
    with pytest.raises(TraceFormatError, match="truncated") as info:
        read_kineto(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ('[{"ph": "X", "cat": "kernel"', "truncated"),
        ('{"traceEvents": 5}', "Expected `array | null`, got `int`"),
        ('{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": "soon"}]}', "bad ts/dur"),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "args": []}]}',
            "traceEvents[0].args",
        ),
        ('{"traceEvents": [{"ph": "X", "ts": 1}, 7]}', "traceEvents[1]"),
        ('{"schemaVersion": 1}', "without a traceEvents array"),
        ('"just a string"', "not a trace"),
        ("[1, 2]", "traceEvents[0]"),
        ('{"traceEvents": [], "baseTimeNanoseconds": "x"}', "baseTimeNanoseconds"),
    ],
)
def test_malformed_json_is_a_format_error(tmp_path: Path, doc: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(doc)
    with pytest.raises(TraceFormatError) as info:
        read_kineto(path)
    assert problem in str(info.value)
    assert str(path) in str(info.value)


# ---------------------------------------------------------------------------------------
# Building blocks.


def test_us_to_ns_is_exact() -> None:
    # Floats arrive as their JSON text; ints as ints; None is an absent field.
    ns, present = us_to_ns(
        ["1712195495519695.8", None, "12.345", 7, "1e3", "-5.5", "4458676522690.655", "0.0004"]
    )
    assert ns.tolist() == [
        1712195495519695800,
        0,
        12345,
        7000,
        1_000_000,
        -5500,
        4458676522690655,
        0,
    ]
    assert present.tolist() == [True, False, True, True, True, True, True, True]
    assert us_to_ns([1683564901550101, 8])[0].tolist() == [1683564901550101000, 8000]
    with pytest.raises(ValueError, match="not a number"):
        us_to_ns(["soon"])
    with pytest.raises(ValueError, match="not a number"):
        us_to_ns([[1]])
    with pytest.raises(ValueError, match="out of range"):
        us_to_ns([2**62])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("cudaLaunchKernel", ("cudaLaunchKernel", "launch", "")),
        ("cudaLaunchKernelExC", ("cudaLaunchKernelExC", "launch", "")),
        ("cuLaunchKernelEx", ("cuLaunchKernelEx", "launch", "driver")),
        ("hipExtModuleLaunchKernel", ("hipExtModuleLaunchKernel", "launch", "")),
        ("cudaGraphLaunch", ("cudaGraphLaunch", "graph_launch", "")),
        ("hipGraphLaunch", ("hipGraphLaunch", "graph_launch", "")),
        ("cudaGraphInstantiateWithFlags", ("cudaGraphInstantiateWithFlags", "graph_build", "")),
        ("cudaStreamBeginCapture_v10000", ("cudaStreamBeginCapture", "graph_build", "")),
        ("cudaStreamGetCaptureInfo_v2", ("cudaStreamGetCaptureInfo", "other", "")),
        ("cudaMemcpyAsync", ("cudaMemcpyAsync", "memcpy", "")),
        ("hipMemcpyWithStream", ("hipMemcpyWithStream", "memcpy", "")),
        ("cudaMemsetAsync", ("cudaMemsetAsync", "memset", "")),
        ("cudaStreamSynchronize", ("cudaStreamSynchronize", "sync", "")),
        ("hipDeviceSynchronize", ("hipDeviceSynchronize", "sync", "")),
        ("cudaEventSynchronize", ("cudaEventSynchronize", "sync", "")),
        ("cudaStreamWaitEvent", ("cudaStreamWaitEvent", "event", "")),
        ("cudaEventQuery", ("cudaEventQuery", "event", "")),
        ("cudaMalloc", ("cudaMalloc", "malloc", "")),
        ("cuMemCreate", ("cuMemCreate", "malloc", "driver")),
        ("cudaHostAlloc", ("cudaHostAlloc", "malloc", "")),
        ("cudaFreeHost", ("cudaFreeHost", "free", "")),
        ("cudaPeekAtLastError", ("cudaPeekAtLastError", "other", "")),
    ],
)
def test_host_call_classification(name: str, expected: tuple[str, str, str]) -> None:
    assert classify_host_call(name) == expected


def test_memcpy_classification() -> None:
    assert classify_memcpy("Memcpy HtoD (Pageable -> Device)") == ("HtoD", "pageable")
    assert classify_memcpy("Memcpy PtoP (Device -> Device)") == ("PtoP", "")
    assert classify_memcpy("Memcpy DtoH (Device -> Pinned)") == ("DtoH", "pinned")


def test_nesting_depth_per_thread() -> None:
    # thread (1, 7): [0,100) > [10,20) > [12,15); [30,40) back at depth 1.
    # thread (1, 8): [5, 6) alone; [5, 5) zero-length twins do not contain each other.
    depth = nesting_depth(
        [1, 1, 1, 1, 1, 1, 1],
        [7, 7, 7, 7, 8, 8, 8],
        [0, 10, 12, 30, 5, 9, 9],
        [100, 20, 15, 40, 6, 9, 9],
    )
    assert depth.tolist() == [0, 1, 2, 1, 0, 0, 0]
    assert nesting_depth([], [], [], []).dtype == np.int64


@pytest.mark.corpus
@pytest.mark.parametrize("chunk_bytes", [kineto.CHUNK_BYTES, 300])
def test_syntax_error_position_is_the_file_byte(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk_bytes: int
) -> None:
    # GIVEN the triton trace's JSON with "@" written just after the "{" found at or past
    # byte 9000 (an object key must follow there)
    with gzip.open(corpus_file(TRITON), "rb") as f:
        text = f.read()
    at = text.index(b"{", 9000) + 1
    path = tmp_path / "bad.json"
    path.write_bytes(text[:at] + b"@" + text[at + 1 :])
    monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(kineto, "READ_BYTES", 100)
    # THEN the error names that byte, whether the file was read whole or in chunks
    with pytest.raises(TraceFormatError, match=rf"\(byte {at}\)$"):
        read_kineto(path)


@functools.cache
def _stacks_trace(spaced: bool) -> tuple[bytes, bytes]:
    """A real stacks trace's JSON (encoder_infer, with_stack=True), compact as stored here
    or spaced as the profiler writes it, and the text that opens a Python frame's name."""
    from conftest import SAMPLES

    source = SAMPLES / "validation/unannotated/encoder_infer/trace.stacks.json.gz"
    with gzip.open(source, "rb") as f:
        text = f.read()
    frame = b'"cat":"python_function","name":"'
    if spaced:
        text = (
            text.replace(b'"ph":"X",', b'"ph": "X", ')
            .replace(frame, frame.replace(b":", b": "))
            .replace(b'","pid":', b'", "pid": ')
        )
        frame = frame.replace(b":", b": ")
    return text, frame


@functools.cache
def _stacks_timeline(spaced: bool) -> Timeline:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "clean.json"
        path.write_bytes(_stacks_trace(spaced)[0])
        return read_kineto(path, workers=1)


#: Python frame names as PyTorch's profiler has written them, unescaped.
UNESCAPED_FRAMES = {
    # source text with quotes and a newline (pytorch/pytorch#113001)
    "source": b'_lib = torch.library.Library("_inductor_test", "IMPL")\n(1): <module>',
    # dynamo's dict-like co_filename (pytorch/kineto#1459)
    "dynamo": b'{"device": "cpu", "dtype": "float32"}(12): run',
    # a Windows path (pytorch/pytorch#98432)
    "windows": b"C:\\Users\\me\\torch\\cuda\\__init__.py(219): _lazy_init",
    # bytes that are not UTF-8 (pytorch/pytorch#136180)
    "bad_utf8": b"torch/_inductor/config.py(0): \xff\xfe",
}


@pytest.mark.parametrize("chunk_bytes", [None, 65536])
@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("kind", sorted(UNESCAPED_FRAMES))
def test_unescaped_python_frame_names_are_read_as_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    spaced: bool,
    chunk_bytes: int | None,
) -> None:
    # GIVEN the stacks trace with an unescaped name put before three Python frames' names
    text, frame = _stacks_trace(spaced)
    raw = UNESCAPED_FRAMES[kind]
    broken, at = text, 0
    for _ in range(3):
        at = broken.index(frame, at + 1) + len(frame)
        broken = broken[:at] + raw + broken[at:]
    path = tmp_path / "frames.json"
    path.write_bytes(broken)
    if chunk_bytes is not None:  # read in many small chunks
        monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk_bytes)
        monkeypatch.setattr(kineto, "READ_BYTES", chunk_bytes)
    # WHEN read
    tl = read_kineto(path, workers=1)
    original = _stacks_timeline(spaced)
    # THEN every event is there, the three names read as their raw text, and a note says so
    assert len(tl.python) == len(original.python) == 67895
    assert len(tl.kernels) == len(original.kernels)
    assert len(tl.cpu_ops) == len(original.cpu_ops)
    name = raw.decode("utf-8", errors="replace")
    repaired = [n for n in tl.python["name"] if n.startswith(name)]
    assert len(repaired) == 3
    assert set(tl.python["name"]) - set(repaired) <= set(original.python["name"])
    assert tl.meta.notes == (
        "3 Python frame names written unescaped by the profiler (pytorch/pytorch#113001) "
        "read as their raw text",
    )


@pytest.mark.parametrize("chunk_bytes", [None, 65536])
def test_a_break_after_repaired_frames_names_its_own_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int | None
) -> None:
    # GIVEN 40 unescaped frame names (each re-escaped longer), then a junk byte past them
    text, frame = _stacks_trace(spaced=False)
    at = 0
    for _ in range(40):
        at = text.index(frame, at + 1) + len(frame)
        text = text[:at] + UNESCAPED_FRAMES["dynamo"] + text[at:]
    kernel = text.index(b'"cat":"kernel","name":"', len(text) // 2)
    junk = text.index(b"{", text.index(b'"args":', kernel)) + 1
    path = tmp_path / "frames.json"
    path.write_bytes(text[:junk] + b"@" + text[junk + 1 :])
    if chunk_bytes is not None:
        monkeypatch.setattr(kineto, "CHUNK_BYTES", chunk_bytes)
        monkeypatch.setattr(kineto, "READ_BYTES", chunk_bytes)
    # THEN the error names the junk's byte in the file as it is, not as repaired
    with pytest.raises(TraceFormatError, match=rf"\(byte {junk}\)$"):
        read_kineto(path, workers=1)


@pytest.mark.parametrize("spaced", [False, True])
def test_a_broken_python_frame_that_is_not_its_name_says_what_broke(
    tmp_path: Path, spaced: bool
) -> None:
    # GIVEN the stacks trace whose first Python frame's args object opens on a stray quote
    # (no name to repair: the profiler's own bug never breaks there)
    text, frame = _stacks_trace(spaced)
    start = text.index(frame)
    args = text.index(b'"args":', start)
    at = text.index(b"{", args) + 1
    path = tmp_path / "frames.json"
    path.write_bytes(text[:at] + b'"' + text[at:])
    # WHEN read: one line naming the position, the kind of event and what to do
    with pytest.raises(TraceFormatError) as info:
        read_kineto(path)
    message = str(info.value)
    assert "\n" not in message
    assert "(byte " in message
    assert message.endswith(
        ", inside a python_function event: PyTorch's profiler writes some Python frame names "
        "unescaped (pytorch/pytorch#113001); record without with_stack "
        "(`traceinspect profile --no-stacks`)"
    )
    # and the same break in a kernel's name says nothing about Python frames
    kernel = text.index(b'"cat":"kernel","name":"') + len(b'"cat":"kernel","name":"')
    path.write_bytes(text[:kernel] + b'f("x")' + text[kernel:])
    with pytest.raises(TraceFormatError) as info:
        read_kineto(path)
    assert "python_function" not in str(info.value)
    assert "(byte " in str(info.value)
