"""`traceinspect diff` and `traceinspect calibrate`: analysis values and the CLI paths."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import corpus_file
from typer.testing import CliRunner

from traceinspect.analysis.diff import compare_kernels, diff_traces
from traceinspect.calibration import Calibration
from traceinspect.cli import app, main
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, make_table

US = 1_000
CAL = Calibration(
    name="test",
    device_name="Test GPU",
    source="test",
    eager_launch_host_ns=5 * US,
    eager_launch_host_ns_profiled=10 * US,
    graph_launch_host_ns=((1, 2 * US),),
    graph_launch_latency_ns=6_900,  # 4 µs to the GPU + 0.9 µs node + 2 µs sync
    graph_node_overhead_ns=900,
    sync_ns=2 * US,
    spread_frac=0.1,
)
A100_GRAPHS = "HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz"


def step_trace(durations_us: Sequence[int], steps: int = 3, period_us: int = 100) -> Timeline:
    """``steps`` occurrences of a region ``step``, each launching one kernel per duration
    (kernel ``k<i>``), every launch 10 µs after the previous one."""
    gpu: dict[str, list[object]] = {
        "kind": [],
        "name": [],
        "stream": [],
        "start_ns": [],
        "end_ns": [],
        "launch_row": [],
    }
    host: dict[str, list[object]] = {
        "name": [],
        "kind": [],
        "pid": [],
        "tid": [],
        "start_ns": [],
        "end_ns": [],
    }
    ann: dict[str, list[object]] = {
        "name": [],
        "source": [],
        "pid": [],
        "tid": [],
        "start_ns": [],
        "end_ns": [],
        "depth": [],
    }
    for s in range(steps):
        t0 = s * period_us * US
        for i, d in enumerate(durations_us):
            launch = t0 + (1 + 10 * i) * US
            host["name"].append("cudaLaunchKernel")
            host["kind"].append("launch")
            host["pid"].append(1)
            host["tid"].append(1)
            host["start_ns"].append(launch)
            host["end_ns"].append(launch + 5 * US)
            gpu["kind"].append("kernel")
            gpu["name"].append(f"k{i}")
            gpu["stream"].append(7)
            gpu["start_ns"].append(launch + 6 * US)
            gpu["end_ns"].append(launch + 6 * US + d * US)
            gpu["launch_row"].append(len(host["name"]) - 1)
        ann["name"].append(f"step#{s}")
        ann["source"].append("record_function")
        ann["pid"].append(1)
        ann["tid"].append(1)
        ann["start_ns"].append(t0)
        ann["end_ns"].append(t0 + (10 * len(durations_us) + 1) * US)
        ann["depth"].append(0)
    meta = TraceMeta(
        path="synthetic", format="kineto", generation="test", devices=(DeviceInfo(0, "Test GPU"),)
    )
    tl = Timeline(
        meta=meta,
        gpu=make_table("gpu", gpu),
        host=make_table("host", host),
        annotations=make_table("annotations", ann),
    )
    tl.validate()
    return tl


def test_diff_matches_regions_predicts_and_lists_changed_kernels() -> None:
    # GIVEN an eager trace of 3 steps × (1 µs, 2 µs, 3 µs kernels launched 10 µs apart), and a
    # graphed trace of the same steps where k2 takes 4 µs and the kernels run back to back
    eager = step_trace([1, 2, 3])
    graphed = step_trace([1, 2, 4], period_us=100)
    result = diff_traces(eager, graphed, CAL)
    assert [r.name for r in result.regions] == ["step"]
    region = result.regions[0]
    # eager as traced: region 31 µs; last kernel ends at 21 + 6 + 3 = 30 µs → span 31 µs
    assert region.eager.occurrences == 3
    assert region.eager.wall_ns == 31 * US and region.eager.span_ns == 31 * US
    assert region.eager.gpu_busy_ns == 6 * US and region.eager.kernels == 3
    assert region.graphed.gpu_busy_ns == 7 * US and region.graphed.span_ns == 31 * US
    # prediction: input copy (6 µs host, 2 µs GPU → 8 µs), replay at 6 µs, GPU from 10 µs:
    # 3 nodes × 0.9 µs + 6 µs of kernels → 18.7 µs, + 2 µs sync
    assert region.prediction is not None
    assert region.prediction.graphed_ns == 20_700
    assert region.error_frac == pytest.approx(20.7 / 31 - 1)
    # k2 went from 3 to 4 µs: +33 % and +1 µs, beyond both thresholds; k0, k1 unchanged
    assert [(k.name, k.eager_median_ns, k.graphed_median_ns) for k in result.kernels_changed] == [
        ("k2", 3 * US, 4 * US)
    ]
    out = result.to_json()
    assert out["regions"][0]["predicted"]["graphed_us"] == 20.7
    assert out["kernels_changed"][0]["change_frac"] == pytest.approx(1 / 3, abs=1e-4)


def test_small_kernel_changes_are_not_listed() -> None:
    # 1 µs → 1.4 µs is +40 % but only 400 ns: below the absolute threshold
    changed, only_a, only_b = compare_kernels(step_trace([1]), step_trace([1]))
    assert changed == () and only_a == {} and only_b == {}


@pytest.mark.corpus
def test_self_diff_of_a_real_trace_has_no_changes_and_predicts_every_region() -> None:
    path = corpus_file(A100_GRAPHS)
    from traceinspect.parse import load_trace

    tl = load_trace(path)
    result = diff_traces(tl, tl, CAL)
    assert result.kernels_changed == ()
    # every region matches itself; 37 once the 85 nccl:* ranges are communication, not regions
    assert len(result.regions) == 37
    steps = next(r for r in result.regions if r.name == "ProfilerStep")
    assert steps.eager.occurrences == 5
    # 1,075 kernels per step; 70 cudaGraphLaunch over 5 steps = 14 per step
    assert steps.eager.kernels == 1075 and steps.eager.graph_launches == 14
    assert steps.prediction is not None
    # the step's GPU work replayed is far shorter than the traced (NCCL-wait-bound) step
    assert steps.prediction.graphed_ns < steps.eager.span_ns / 3


def test_cli_diff_writes_json_and_refuses_to_overwrite(tmp_path: Path) -> None:
    from conftest import sample_file

    eager = sample_file("host_sync.eager.json.gz")
    graphed = sample_file("host_sync.graphed.json.gz")
    cal = tmp_path / "cal.json"
    cal.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "device_name": "NVIDIA H200",
                "eager_launch_host_ns": 5000,
                "graph_launch_host_ns": 2500,
                "graph_launch_latency_ns": 8000,
                "graph_node_overhead_ns": 900,
                "sync_ns": 2500,
            }
        )
    )
    out = tmp_path / "diff.json"
    runner = CliRunner()
    args = ["diff", str(eager), str(graphed), "--calibration", str(cal), "--json", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["calibration"]["name"] == "cal"
    names = [r["name"] for r in data["regions"]]
    assert names == ["ProfilerStep", "step", "prepare", "check", "refine"]
    step = data["regions"][1]
    # the .item() splits the step into two graphs around one host sync
    assert step["predicted"]["graph"]["graphs"] == 2
    assert step["predicted"]["graph"]["host_syncs"] == 1
    assert step["predicted"]["calibration"] == "cal"
    assert "step" in result.output
    # again without --force: one line, exit 2, file untouched
    assert main(args) == 2


def test_cli_calibrate_without_cuda_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: calibrate would run")
    out = tmp_path / "h.json"
    assert main(["calibrate", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "traceinspect: calibrate: calibration needs a CUDA GPU; torch.cuda.is_available() is False"
    )
    assert not out.exists()
    out.write_text("{}")
    assert main(["calibrate", "--out", str(out)]) == 2
    assert "already exists (use --force to overwrite)" in capsys.readouterr().err


def test_diff_of_the_two_streams_samples() -> None:
    # GIVEN the H200 sample of a fork/join over two side streams, eager and graphed
    from conftest import sample_file

    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    eager = load_trace(sample_file("two_streams.eager.json.gz"))
    graphed = load_trace(sample_file("two_streams.graphed.json.gz"))
    result = diff_traces(eager, graphed, calibration_for(eager))
    # THEN both traces' regions ProfilerStep and step match (branch_a/b exist only in eager:
    # inside a graph they ran at capture)
    assert [r.name for r in result.regions] == ["ProfilerStep", "step"]
    assert result.notes == ("regions only in the eager trace: branch_a, branch_b",)
    step = result.regions[1]
    # eager step as traced: 722.6 µs, 501.0 µs of GPU busy, 33 kernels, no graph launch
    assert (step.eager.span_ns, step.eager.gpu_busy_ns, step.eager.kernels) == (
        722_566,
        500_990,
        33,
    )
    # graphed step: the region ends 111.8 µs in, its GPU work 520.3 µs in; one replay
    assert (step.graphed.wall_ns, step.graphed.span_ns, step.graphed.graph_launches) == (
        111_807,
        520_287,
        1,
    )
    # the prediction from the eager trace: 478.0 µs, −8.1 % from the traced graphed span (the
    # GPU work: every kernel fills the device, so the branches' kernels run one after the
    # other, but for each tanh's last wave (two waves) and the last 10-20 % of a one-wave
    # kernel's run, where the other branch's next kernel starts, the two GEMMs then slowing
    # each other, and each tanh charged LIGHT_BESIDE_NS beside the other branch's kernels,
    # two tanhs side by side sharing the memory bandwidth, each slowed by what the other
    # demands; 473.7 µs, −9.0 %, while both were slowed by their total demand, at most 1.5x;
    # 466.8 µs, −10.3 %, before the sharing; 464.0 µs, −10.8 %, before the charge; 434.0
    # µs, −12.1 %, while the GEMMs did not slow each other, 487.1 µs, −6.4 %, while a
    # one-wave kernel held its room to its end, 501.0 µs, +0.1 %, while every kernel did;
    # + 4.3 µs of node overhead (100 ns extra per node), the rest of it paid while a node
    # waits for room (the two branches' first nodes start in capture order); + an input
    # copy's host 6.8 µs (9.9 µs on the calibrated host, brought to
    # the pace of this trace's, its launch calls a median 5.1 µs) and the replay's latency
    # 4.7 µs + the closing sync 4.4 µs, all cheaper since the calibration was timed before
    # any profiler session; the span was profiled)
    assert step.prediction is not None and step.prediction.graphed_ns == 478_005
    assert step.eager.gpu_busy_ns == 500_990
    assert step.prediction.parts["gpu_work"] == 457_728
    assert step.prediction.parts["node_overhead"] == 4_369
    assert step.error_frac == pytest.approx(-0.0813, abs=1e-4)
    # inside the graph the branches overlap and tanh slows from 4.9 to 15.8 µs (+221 %): the
    # overlap saved nothing, the graphed GPU work ended 520.3 µs in, no sooner than the
    # eager kernels' 501.0 µs end to end (the schedule above saves 37 µs in the tanhs' last
    # waves: the GEMM it starts there got its SMs only as the tanh's blocks ended)
    tanh = result.kernels_changed[0]
    assert "tanh_kernel_cuda" in tanh.name
    assert (tanh.eager_count, tanh.eager_median_ns, tanh.graphed_median_ns) == (80, 4_928, 15_824)


def test_measured_eager_time_applies_to_the_step_region_only() -> None:
    from conftest import sample_file

    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    eager = load_trace(sample_file("mixed.eager.json.gz"))
    graphed = load_trace(sample_file("mixed.graphed.json.gz"))
    # measured unprofiled eager p50 of mixed: 2,939.7 µs
    result = diff_traces(eager, graphed, calibration_for(eager), eager_unprofiled_ns=2_939_740)
    by_name = {r.name: r.prediction for r in result.regions}
    assert set(by_name) == {"ProfilerStep", "step", "attention", "mlp"}
    steps = by_name["ProfilerStep"]
    assert steps is not None and steps.eager_source == "measured"
    assert steps.eager_ns == 2_939_740
    assert steps.saving_ns == 2_939_740 - steps.graphed_ns
    for name in ("step", "attention", "mlp"):
        other = by_name[name]
        assert other is not None and other.eager_source == "trace-deflated"
