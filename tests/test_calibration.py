"""Calibration profiles: reading, validation, interpolation, and which one a trace gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import traceinspect.calibration as calibration
from traceinspect.calibration import (
    builtin_calibrations,
    calibration_for,
    load_calibration,
    slug,
)
from traceinspect.errors import TraceFormatError
from traceinspect.model import DeviceInfo, Timeline, TraceMeta


def profile(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": 1,
        "device_name": "NVIDIA H200",
        "torch": "2.5.1",
        "cuda": "12.4",
        "driver": "550.54",
        "measured_at": "2026-11-29T10:00:00Z",
        "eager_launch_host_ns": 4_800.4,
        "eager_launch_host_ns_profiled": 9_700,
        "graph_launch_host_ns": {"1": 2_500, "1000": 12_500},
        "graph_launch_latency_ns": 4_100,
        "graph_node_overhead_ns": 920,
        "node_overhead_table": [
            {
                "nodes": 10,
                "kernel_ns": 2_000,
                "graph_gpu_ns": 30_000,
                "graph_wall_ns": 40_000,
                "per_node_ns": 1_000,
            },
            {
                "nodes": 100,
                "kernel_ns": 2_000,
                "graph_gpu_ns": 290_000,
                "graph_wall_ns": 300_000,
                "per_node_ns": 900,
            },
            {
                "nodes": 100,
                "kernel_ns": 200_000,
                "graph_gpu_ns": 2e7,
                "graph_wall_ns": 2e7,
                "per_node_ns": -30,
            },
        ],
        "sync_ns": 1_800,
        "htod_bandwidth_gbps": 25.0,
    }
    data.update(overrides)
    return data


def write(tmp_path: Path, data: object, name: str = "nvidia-h200.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def meta(*names: str) -> Timeline:
    devices = tuple(DeviceInfo(id=i, name=n) for i, n in enumerate(names))
    return Timeline(meta=TraceMeta(path="t", format="kineto", generation="kineto", devices=devices))


def test_load_reads_every_field(tmp_path: Path) -> None:
    cal = load_calibration(write(tmp_path, profile()))
    assert cal.name == "nvidia-h200"
    assert cal.source == str(tmp_path / "nvidia-h200.json")
    assert cal.eager_launch_host_ns == 4_800
    assert cal.eager_launch_host_ns_profiled == 9_700
    assert cal.graph_launch_host_ns == ((1, 2_500), (1000, 12_500))
    assert cal.graph_launch_host_for(1) == 2_500
    assert cal.graph_launch_host_for(500) == 7_495  # 2500 + 499/999 × 10000
    assert cal.graph_launch_latency_ns == 4_100
    assert cal.sync_ns == 1_800
    assert cal.versions["torch"] == "2.5.1"
    assert cal.extra == {"htod_bandwidth_gbps": 25.0}
    assert not cal.is_fallback
    # the 100-node row wins for 2 µs kernels (converged); negative per-node clamps to 0;
    # every node adds graph_node_extra_ns, 100 ns by default (the profile does not state it),
    # and a kernel after a memcpy/memset node costs at least graph_copy_transition_ns, 2 µs
    assert cal.graph_node_extra_ns == calibration.DEFAULT_GRAPH_NODE_EXTRA_NS == 100
    assert cal.graph_copy_transition_ns == calibration.DEFAULT_GRAPH_COPY_TRANSITION_NS == 2_000
    assert cal.node_overhead_for([2_000, 200_000]).tolist() == [1_000.0, 100.0]


def test_optional_fields_take_documented_defaults(tmp_path: Path) -> None:
    data = profile(graph_launch_host_ns=3_000)
    for key in ("eager_launch_host_ns_profiled", "node_overhead_table"):
        del data[key]
    cal = load_calibration(write(tmp_path, data))
    assert cal.eager_launch_host_ns_profiled == 9_600  # 2 × 4800 (unprofiled, rounded)
    assert cal.graph_launch_host_for(77) == 3_000
    # graph_node_overhead_ns + the 100 ns graph_node_extra_ns default, for every size
    assert cal.node_overhead_for([1_000, 10**8]).tolist() == [1_020.0, 1_020.0]
    assert cal.copy_launch_host_ns == calibration.DEFAULT_COPY_LAUNCH_HOST_NS
    # no copy_warm_host_ns: a warm copy costs an eager operator launch
    assert cal.copy_warm_host_ns == 0 and cal.warm_copy_host_ns == 4_800
    assert cal.spread_frac == calibration.DEFAULT_SPREAD_FRAC


def test_the_profilers_cost_on_a_bare_operator_is_evidence_not_the_eager_models(
    tmp_path: Path,
) -> None:
    # GIVEN a profile as `traceinspect calibrate` writes it: what the profiler added to a bare
    # x.view(-1) and x.add_(1) on one H200 lease
    bare = {
        "profiler_bare_op_ns": 3_000,
        "profiler_bare_call_ns": 579,
        "profiler_bare_op_shapes_ns": 0,
        "profiler_bare_python_ns": 0,
    }
    cal = load_calibration(write(tmp_path, profile(**bare)))
    # THEN the eager model keeps its fitted costs, and the measurements stay as evidence
    assert cal.profiler_cost == calibration.DEFAULT_PROFILER_COST
    assert cal.profiler_cost.op_ns == 24_000 and cal.profiler_cost.floor_frac == 0.45
    assert {k: cal.extra[k] for k in bare} == {k: float(v) for k, v in bare.items()}
    # AND a profile that states the model's costs (a fit of one's own) still sets them
    own = load_calibration(write(tmp_path, profile(profiler_op_ns=12_000, profiler_floor_frac=0.3)))
    assert (own.profiler_cost.op_ns, own.profiler_cost.floor_frac) == (12_000, 0.3)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON (line 1"),
        ("[1, 2]", "calibration must be a JSON object"),
        (json.dumps(profile(schema_version=9)), "schema_version 9"),
        (json.dumps({"schema_version": 1, "device_name": "X"}), "missing eager_launch_host_ns"),
        (json.dumps(profile(sync_ns=-1)), "sync_ns must be a non-negative number"),
        (json.dumps(profile(sync_ns="fast")), "sync_ns must be a non-negative number"),
        (json.dumps(profile(graph_launch_host_ns={"many": 3})), "is not a node count"),
        (json.dumps(profile(node_overhead_table=[{"nodes": 1}])), "node_overhead_table[0]"),
        (json.dumps(profile(spread_frac=2)), "spread_frac must be"),
    ],
)
def test_bad_profiles_fail_with_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(TraceFormatError) as info:
        load_calibration(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ")
    assert message in text
    assert "\n" not in text


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="no such calibration file"):
        load_calibration(tmp_path / "nope.json")
    with pytest.raises(TraceFormatError, match="is a directory"):
        load_calibration(tmp_path)


def test_slug() -> None:
    assert slug("NVIDIA H200") == "nvidia-h200"
    assert slug("NVIDIA A100-SXM4-80GB") == "nvidia-a100-sxm4-80gb"


def test_calibration_for_matches_device_else_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, profile())
    write(tmp_path, profile(device_name="NVIDIA A100-SXM4-80GB"), "nvidia-a100-sxm4-80gb.json")
    monkeypatch.setattr(calibration, "BUILTIN_DIR", tmp_path)
    assert set(builtin_calibrations()) == {"nvidia-h200", "nvidia-a100-sxm4-80gb"}

    h200 = calibration_for(meta("NVIDIA H200"))
    assert h200.name == "nvidia-h200" and h200.source == "built-in" and not h200.is_fallback
    assert calibration_for(meta("NVIDIA A100-SXM4-80GB")).name == "nvidia-a100-sxm4-80gb"

    other = calibration_for(meta("NVIDIA GeForce RTX 3080"))
    assert other.name == "nvidia-h200" and other.is_fallback
    assert other.fallback_note == (
        "trace device 'NVIDIA GeForce RTX 3080' has no profile: generic fallback measured on "
        "NVIDIA H200"
    )
    assert calibration_for(meta()).fallback_note.startswith("trace names no GPU")

    # another form of a profiled model (PCIe beside SXM) takes that model's profile, noted
    pcie = calibration_for(meta("NVIDIA A100-PCIE-40GB"))
    assert pcie.name == "nvidia-a100-sxm4-80gb" and pcie.is_fallback
    assert pcie.fallback_note == (
        "trace device 'NVIDIA A100-PCIE-40GB' has no profile: using the one measured on "
        "NVIDIA A100-SXM4-80GB (same family)"
    )
    # a name whose model word differs does not: the H20 is not an H200
    assert calibration_for(meta("NVIDIA H20")).fallback_note.endswith(
        "generic fallback measured on NVIDIA H200"
    )

    explicit = write(tmp_path, profile(sync_ns=5), "mine.json")
    chosen = calibration_for(meta("NVIDIA H200"), explicit)
    assert chosen.name == "mine" and chosen.sync_ns == 5 and chosen.source == str(explicit)


def test_builtin_h200_profile_and_the_values_the_estimator_derives() -> None:
    # The profile measured on the project's H200 (traceinspect/calibration/nvidia-h200.json),
    # with every unprofiled timing (launch loops, sync, replays, copy host times) taken before
    # the first profiler session of the process
    cal = builtin_calibrations()["nvidia-h200"]
    assert cal.device_name == "NVIDIA H200" and cal.source == "built-in"
    assert cal.eager_launch_host_ns == 6_429 and cal.eager_launch_host_ns_profiled == 10_027
    assert cal.sync_ns == 4_356
    # replay() host time from graph_launch_host_table: 1, 10, 100, 1000 nodes
    assert cal.graph_launch_host_ns == ((1, 2_970), (10, 3_022), (100, 3_060), (1000, 6_111))
    assert cal.graph_launch_host_for(55) == 3_041  # 3022 + 45/90 × 38
    # per-node overhead from the 1000-node rows: 0.83 µs → 186, 14.3 µs → 390, 91.7 µs → 415,
    # each plus the 100 ns every node of a real graph adds (graph_node_extra_ns default);
    # a kernel after a copy node: 2 µs where that is more (graph_copy_transition_ns default)
    assert cal.graph_node_extra_ns == 100 and cal.graph_copy_transition_ns == 2_000
    assert cal.node_overhead_for([832, 14_336, 91_712]).tolist() == [286.0, 490.0, 515.0]
    # fixed cost of a synchronized replay: 9,266 (1-node wall − kernel) − 186 (its node)
    assert cal.replay_fixed_ns == 9_080
    assert cal.replay_latency_ns == 9_080 - 4_356
    # input copy: 9.9 µs of host as the first call after a synchronize, 9.2 µs right after
    # another CUDA call (the medians of the 64 copy probes of `traceinspect profile` on two
    # H200 machines; the calibration's own machine timed 5.8 and 5.6), 800 ns on the GPU
    # (the smallest copy_table row, 4 KiB)
    assert (cal.copy_launch_host_ns, cal.copy_gpu_ns) == (9_900, 800)
    assert cal.warm_copy_host_ns == cal.copy_warm_host_ns == 9_170
    assert cal.copy_device_ns(64 * 1024 * 1024) == 31_565  # at 2,126,039 bytes/µs
    h200 = calibration_for(meta("NVIDIA H200"))
    assert h200 == cal


def test_builtin_h100_profile_is_chosen_for_every_h100() -> None:
    # The H100 profile: the mean of two `traceinspect calibrate` runs on one H100 SXM lease
    # (sample_traces/validation/calibrations/h100-2026-12-02-a/-b.json), the input copy's host
    # cost the median of the 112 copy probes of h100_holdout17/18, as the H200's is
    cal = calibration_for(meta("NVIDIA H100 80GB HBM3"))
    assert cal.name == "nvidia-h100-80gb-hbm3" and not cal.is_fallback
    assert cal.eager_launch_host_ns == 9_095  # 7,919 and 10,271 ns measured
    assert cal.sync_ns == 6_704
    assert (cal.copy_launch_host_ns, cal.warm_copy_host_ns) == (7_165, 6_845)
    nvl = calibration_for(meta("NVIDIA H100 NVL"))
    assert nvl.name == "nvidia-h100-80gb-hbm3" and nvl.is_fallback
    assert calibration_for(meta("NVIDIA H200")).name == "nvidia-h200"
