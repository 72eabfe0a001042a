"""The committed samples: present, small, and their measurements well-formed and plausible.

The numbers below were recorded on an NVIDIA H200 (torch 2.11.0+cu130, 2026-11-29) by
sample_traces/record_gpu.sh; re-recording changes the timings but not the counts.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SAMPLES, sample_file

WORKLOADS = (
    "tiny_mlp",
    "decode_step",
    "convnet_b1",
    "convnet_b64",
    "big_gemm",
    "mixed",
    "two_streams",
    "host_sync",
)
# Kernels per step, the same eager and graphed (counted in the Kineto traces).
KERNELS_PER_STEP = {
    "tiny_mlp": 96,  # 48 x (addmm + relu)
    "decode_step": 168,  # 8 layers x 21
    "convnet_b1": 108,
    "convnet_b64": 113,  # cuDNN picks other conv algorithms at batch 64
    "big_gemm": 12,  # 12 chained matmuls
    "mixed": 73,
    "two_streams": 33,  # 2 branches x 8 x (matmul + tanh) + the join's add
    "host_sync": 86,
}
GRAPHS_PER_STEP = {"mixed": 2, "host_sync": 2}  # one graph per region / split at the sync
INPUT_TENSORS = {"decode_step": 2}  # the token and its cache position; 1 elsewhere
NSYS_FILES = (
    "tiny_mlp.eager",
    "tiny_mlp.graphed.node",
    "tiny_mlp.graphed.graph",
    "mixed.eager",
    "mixed.graphed.node",
    "big_gemm.eager",
    "decode_step.graphed.node",
    "two_streams.eager",
    "host_sync.eager",
)
MAX_FILE_BYTES = 1_000_000  # each committed sample stays under 1 MB
MAX_TOTAL_BYTES = 15_000_000  # sample_traces/ without validation/
PROFILED_STEPS = 5  # active steps of the torch.profiler schedule in record.py
STAT_KEYS = ("p50_us", "p95_us", "mean_us", "min_us")


@pytest.fixture(scope="module")
def latencies() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(sample_file("latencies.json").read_text())
    return data


def _kineto_events(name: str) -> list[dict[str, Any]]:
    with gzip.open(sample_file(name), "rt") as f:
        events: list[dict[str, Any]] = json.load(f)["traceEvents"]
    return events


def test_every_sample_is_present_and_small() -> None:
    names = [f"{w}.{mode}.json.gz" for w in WORKLOADS for mode in ("eager", "graphed")]
    names += [f"nsys/{n}.sqlite.gz" for n in NSYS_FILES]
    sizes = {n: sample_file(n).stat().st_size for n in names}
    assert all(1_000 < size < MAX_FILE_BYTES for size in sizes.values()), sizes
    # validation/ has its own bound (tests/test_validation_data.py: 25 MB).
    total = sum(
        p.stat().st_size
        for p in SAMPLES.rglob("*")
        if p.is_file() and "validation" not in p.relative_to(SAMPLES).parts
    )
    assert total < MAX_TOTAL_BYTES


def test_conditions_name_the_gpu_and_versions(latencies: dict[str, Any]) -> None:
    cond = latencies["conditions"]
    assert latencies["schema_version"] == 1
    assert cond["gpu"] == "NVIDIA H200"
    assert cond["torch"] == "2.11.0+cu130"
    assert cond["cuda"] == "13.0"
    assert cond["driver"] == "580.159.04"
    assert dt.datetime.fromisoformat(cond["date"]).date() == dt.date(2026, 11, 29)
    assert cond["smoke"] is False
    assert (cond["warmup_steps"], cond["min_timed_steps"]) == (20, 100)
    assert cond["profiler"]["schedule"] == {"wait": 1, "warmup": 2, "active": PROFILED_STEPS}


@pytest.mark.parametrize("workload", WORKLOADS)
def test_latency_fields_are_consistent(latencies: dict[str, Any], workload: str) -> None:
    entry = latencies["workloads"][workload]
    assert entry["errors"] == {}
    assert entry["description"]
    for mode in ("eager", "graphed"):
        res = entry[mode]
        for prefix in ("wall", "event_span", "profiled_wall"):
            p50, p95, mean, low = (res[f"{prefix}_{k}"] for k in STAT_KEYS)
            assert 0 < low <= p50 <= p95, (mode, prefix)
            assert low <= mean
        assert res["wall_n"] >= 100  # at least 100 timed steps (none hit the time cap first)
        assert res["profiled_wall_n"] == PROFILED_STEPS
        assert res["profiler_step_events"] == PROFILED_STEPS
        assert res["kernels_per_step"] == KERNELS_PER_STEP[workload]
        assert res["trace"] == f"{workload}.{mode}.json.gz"
    graphed = entry["graphed"]
    assert graphed["graph_count"] == GRAPHS_PER_STEP.get(workload, 1)
    assert graphed["graph_launches_per_step"] == GRAPHS_PER_STEP.get(workload, 1)
    # Every kernel of a graphed step carries the correlation id of a graph launch.
    assert graphed["kernels_from_graph_launch_per_step"] == KERNELS_PER_STEP[workload]
    assert graphed["max_abs_diff_vs_eager"] == 0.0
    assert graphed["capture_us"] > 0 and graphed["first_replay_us"] > 0
    # The graphed step copies its inputs into the static buffers: one more memcpy each.
    extra = INPUT_TENSORS.get(workload, 1)
    assert graphed["memcpy_per_step"] == entry["eager"]["memcpy_per_step"] + extra
    eager_p50, graphed_p50 = entry["eager"]["wall_p50_us"], graphed["wall_p50_us"]
    assert entry["saving_pct"] == pytest.approx(
        100 * (eager_p50 - graphed_p50) / eager_p50, abs=0.01
    )


def test_workloads_land_in_their_regimes(latencies: dict[str, Any]) -> None:
    w = latencies["workloads"]
    assert w["tiny_mlp"]["saving_pct"] == pytest.approx(86.15, abs=0.01)  # launch-bound
    assert w["big_gemm"]["saving_pct"] == pytest.approx(-1.67, abs=0.01)  # compute-bound
    assert abs(w["convnet_b64"]["saving_pct"]) < 5 < w["convnet_b1"]["saving_pct"]
    # Launch-bound: the GPU is busy for under a fifth of the eager step.
    tiny = w["tiny_mlp"]["eager"]
    assert tiny["kernel_time_per_step_us"] < 0.2 * tiny["wall_p50_us"]
    # The profiler inflates a launch-bound eager step (1494.5 -> 3865.8 us).
    assert tiny["profiled_wall_p50_us"] > 2 * tiny["wall_p50_us"]


def test_whole_host_sync_step_cannot_be_captured(latencies: dict[str, Any]) -> None:
    whole = latencies["workloads"]["host_sync"]["whole_step_capture"]
    assert whole["captured"] is False
    assert "operation not permitted when stream is capturing" in whole["error_context"]
    assert whole["cuda_usable_after"] is True


@pytest.mark.parametrize("workload", ["tiny_mlp", "mixed", "host_sync"])
def test_kineto_traces_hold_the_recorded_counts(workload: str) -> None:
    eager = _kineto_events(f"{workload}.eager.json.gz")
    graphed = _kineto_events(f"{workload}.graphed.json.gz")
    for events in (eager, graphed):
        steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
        assert len(steps) == PROFILED_STEPS
        kernels = [e for e in events if e.get("cat") == "kernel"]
        assert len(kernels) == PROFILED_STEPS * KERNELS_PER_STEP[workload]
        regions = {e["name"] for e in events if e.get("cat") == "user_annotation"}
        assert "step" in regions
    launches = [e for e in graphed if e.get("name") == "cudaGraphLaunch"]
    assert len(launches) == PROFILED_STEPS * GRAPHS_PER_STEP.get(workload, 1)
    assert not any(e.get("name") == "cudaGraphLaunch" for e in eager)


def test_mixed_marks_both_regions() -> None:
    names = [e["name"] for e in _kineto_events("mixed.eager.json.gz")]
    assert names.count("attention") >= PROFILED_STEPS
    assert names.count("mlp") >= PROFILED_STEPS


def _nsys_db(name: str, tmp_path: Path) -> sqlite3.Connection:
    target = tmp_path / Path(name).name.removesuffix(".gz")
    with gzip.open(sample_file(name), "rb") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return sqlite3.connect(target)


@pytest.mark.parametrize("name", NSYS_FILES)
def test_nsys_exports_have_five_step_ranges(name: str, tmp_path: Path) -> None:
    db = _nsys_db(f"nsys/{name}.sqlite.gz", tmp_path)
    (steps,) = db.execute("select count(*) from NVTX_EVENTS where text = 'step'").fetchone()
    assert steps == 5
    tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
    (graph_kernels,) = db.execute(
        "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where graphNodeId is not null"
    ).fetchone()
    if name.endswith(".node"):  # every node recorded as its own kernel
        assert graph_kernels > 0
    else:  # eager, or graphs recorded whole (--cuda-graph-trace=graph)
        assert graph_kernels == 0
    if name.endswith(".graph"):
        assert "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables


def test_nsys_tiny_mlp_graph_trace_modes(tmp_path: Path) -> None:
    # 3 warm-up + 5 step replays of a 96-kernel graph.
    node = _nsys_db("nsys/tiny_mlp.graphed.node.sqlite.gz", tmp_path)
    (in_graph,) = node.execute(
        "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL where graphNodeId is not null"
    ).fetchone()
    assert in_graph == 8 * KERNELS_PER_STEP["tiny_mlp"]
    whole = _nsys_db("nsys/tiny_mlp.graphed.graph.sqlite.gz", tmp_path)
    (graphs,) = whole.execute("select count(*) from CUPTI_ACTIVITY_KIND_GRAPH_TRACE").fetchone()
    assert graphs == 8


def test_calibration_is_complete() -> None:
    path = ROOT / "traceinspect" / "calibration" / "nvidia-h200.json"
    cal = json.loads(path.read_text())
    assert cal["schema_version"] == 1 and cal["device_name"] == "NVIDIA H200"
    assert cal["quick"] is False
    scalars = (
        "eager_launch_host_ns",
        "eager_launch_host_ns_profiled",
        "sync_ns",
        "graph_launch_host_ns",
        "graph_launch_latency_ns",
        "graph_node_overhead_ns",
        "graph_node_gpu_ns",
        "copy_fixed_ns",
        "copy_bandwidth_bytes_per_us",
    )
    assert all(type(cal[k]) is int and cal[k] > 0 for k in scalars)
    # Measured 2026-11-29: 6.8 us per eager launch, 13.9 us under the profiler.
    assert 1_000 < cal["eager_launch_host_ns"] < cal["eager_launch_host_ns_profiled"]
    # A replayed tiny node costs far less GPU time than an eager launch costs the host.
    assert cal["graph_node_gpu_ns"] < cal["eager_launch_host_ns"] / 2
    table = cal["node_overhead_table"]
    assert [(r["size"], r["nodes"]) for r in table] == [
        (s, n) for s in ("tiny", "medium", "large") for n in (1, 10, 100, 1000)
    ]
    for row in table:
        per_node = (row["graph_gpu_ns"] - row["nodes"] * row["kernel_ns"]) / row["nodes"]
        assert row["per_node_ns"] == round(per_node)
        assert row["graph_wall_ns"] >= row["graph_host_ns"]
    assert [r["bytes"] for r in cal["copy_table"]] == [4096, 1 << 20, 64 << 20]
    assert [r["nodes"] for r in cal["graph_launch_host_table"]] == [1, 10, 100, 1000]


def test_calibrate_imports_without_torch() -> None:
    code = (
        "import sys, traceinspect.collect.calibrate as c; "
        "assert 'torch' not in sys.modules; assert callable(c.measure) and callable(c.write)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
