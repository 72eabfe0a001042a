"""Step detection on real traces with their annotations stripped: the detector must find the
steps the annotations marked (count, and boundaries within one activity), and the detected
step must get the diagnosis the annotated step got."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_file, sample_file
from stripped import strip_kineto, strip_nsys

from traceinspect.analysis.arrays import index_timeline
from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.regions import Region, find_regions
from traceinspect.analysis.result import TraceAnalysis
from traceinspect.analysis.steps import StepDetection, detect_steps
from traceinspect.model import Timeline
from traceinspect.parse import load_trace

SAMPLES = (
    "tiny_mlp",
    "decode_step",
    "convnet_b1",
    "convnet_b64",
    "big_gemm",
    "mixed",
    "two_streams",
    "host_sync",
)


@pytest.fixture(scope="module")
def stripped_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stripped")


@cache
def _load(path: str) -> Timeline:
    return load_trace(Path(path))


def _stripped(source: Path, dest: Path) -> Timeline:
    out = strip_nsys(source, dest) if ".sqlite" in source.name else strip_kineto(source, dest)
    timeline = _load(str(out))
    assert not (timeline.annotations["source"] != "gpu_user_annotation").any()
    return timeline


def _detect(timeline: Timeline) -> StepDetection:
    found = detect_steps(timeline, index_timeline(timeline))
    assert found is not None
    return found


def _annotated(timeline: Timeline, name: str) -> Region:
    regions = find_regions(timeline, index_timeline(timeline))
    return next(r for r in regions if r.name == name)


def _ends(rows: list[np.ndarray]) -> tuple[list[int], list[int]]:
    return [int(r[0]) for r in rows], [int(r[-1]) for r in rows]


@pytest.mark.parametrize("name", SAMPLES)
def test_stripped_kineto_samples_give_back_their_profiler_steps(
    name: str, stripped_dir: Path
) -> None:
    # GIVEN an H200 trace of 5 profiler steps, with ProfilerStep and every record_function
    # removed from the file
    source = sample_file(f"{name}.eager.json.gz")
    annotated = _annotated(_load(str(source)), "ProfilerStep")
    # WHEN the steps are detected
    found = _detect(_stripped(source, stripped_dir))
    # THEN they are the 5 profiler steps, each starting and ending at the same activity
    assert found.occurrences == annotated.occurrences == 5
    assert _ends(found.rows) == _ends(annotated.rows)
    assert found.identical == 5
    assert found.gpu_share == pytest.approx(1.0)
    assert 0.85 <= found.confidence <= 0.94  # 5 identical repeats: 1 - 0.5**4 at most


@pytest.mark.parametrize(
    ("name", "detected", "warmup"),
    [
        # the NVTX `step` ranges come after an NVTX `warmup` range of 3 iterations; the
        # detector finds the iterations of the warm-up that launch what the steps launch
        ("tiny_mlp.eager", 6, 1),
        ("big_gemm.eager", 5, 0),
        ("mixed.eager", 7, 2),
        ("two_streams.eager", 7, 2),
        ("host_sync.eager", 7, 2),
        ("mixed.graphed.node", 5, 0),
        ("tiny_mlp.graphed.node", 6, 1),
        ("tiny_mlp.graphed.graph", 5, 0),
        ("decode_step.graphed.node", 6, 1),
    ],
)
def test_stripped_nsys_samples_give_back_their_nvtx_steps(
    name: str, detected: int, warmup: int, stripped_dir: Path
) -> None:
    source = sample_file(f"nsys/{name}.sqlite.gz")
    annotated = _annotated(_load(str(source)), "step")
    found = _detect(_stripped(source, stripped_dir))
    assert found.occurrences == detected
    # Every NVTX step is a detected step, activity for activity ...
    assert _ends(found.rows[warmup:]) == _ends(annotated.rows)
    # ... and the others are the last warm-up iterations, inside the `warmup` range.
    warm = _annotated(_load(str(source)), "warmup")
    for start in found.start_ns[:warmup]:
        assert warm.start_ns[0] <= start < warm.end_ns[0]


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "steps"),
    [
        ("HolisticTraceAnalysis__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 5),
        ("kineto__tb_plugin_resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz", 6),
    ],
)
def test_stripped_corpus_traces_give_back_their_profiler_steps(
    name: str, steps: int, stripped_dir: Path
) -> None:
    # V100 traces recorded by others (2021 format; ns timestamps), ProfilerStep stripped.
    source = corpus_file(name)
    annotated = _annotated(_load(str(source)), "ProfilerStep")
    found = _detect(_stripped(source, stripped_dir))
    assert found.occurrences == annotated.occurrences == steps
    assert _ends(found.rows) == _ends(annotated.rows)


@pytest.mark.corpus
def test_stripped_a100_rank_trace_boundaries_within_one_activity_but_the_first(
    stripped_dir: Path,
) -> None:
    # A100 training rank (HTA): 5 profiler steps of ~1,370 activities. The first step's
    # first 4 activities were launched before its first launch that repeats in every step.
    source = corpus_file("HolisticTraceAnalysis__negative_queue_length_values_check__rank0.json.gz")
    annotated = _annotated(_load(str(source)), "ProfilerStep")
    found = _detect(_stripped(source, stripped_dir))
    assert found.occurrences == annotated.occurrences == 5
    first, last = _ends(found.rows)
    ann_first, ann_last = _ends(annotated.rows)
    assert np.abs(np.subtract(first[1:], ann_first[1:])).max() <= 1
    assert np.abs(np.subtract(last, ann_last)).max() <= 1


def test_detected_step_gets_the_diagnosis_of_the_annotated_step(stripped_dir: Path) -> None:
    # GIVEN mixed (launch-bound attention + compute-bound GEMMs), annotated and stripped
    source = sample_file("mixed.eager.json.gz")
    annotated = diagnose(_load(str(source)))
    stripped = diagnose(_stripped(source, stripped_dir))
    # THEN the stripped trace reports the whole trace and the detected step under it
    assert [(r.region.name, r.region.source, r.region.depth) for r in stripped.region_results] == [
        ("whole trace", "whole_trace", 0),
        ("step (detected)", "detected", 1),
    ]
    step = stripped.region_results[1]
    profiler_step = next(r for r in annotated.region_results if r.region.name == "ProfilerStep")
    # ... with the annotated step's verdict, replay estimate and capture blockers
    assert step.verdict == profiler_step.verdict == "launch-bound"
    assert step.estimate.graphed_ns == profiler_step.estimate.graphed_ns
    assert step.estimate.graphed_ns == pytest.approx(2_145_628, abs=1000)
    assert [b.kind for b in step.capture.blockers] == [
        b.kind for b in profiler_step.capture.blockers
    ]
    assert step.capture.verdict == "capturable after changes"
    assert step.wall_ns == pytest.approx(profiler_step.wall_ns, rel=0.01)


def test_annotated_steps_are_not_detected_again() -> None:
    # NVTX `step` ranges mark what the detector finds: the report keeps its regions.
    timeline = _load(str(sample_file("nsys/mixed.eager.sqlite.gz")))
    regions = find_regions(timeline, index_timeline(timeline))
    assert "detected" not in {r.source for r in regions}
    assert {r.name for r in regions} >= {"step", "warmup", "attention", "mlp"}


def test_no_steps_in_a_trace_without_repeats() -> None:
    # One cudaGraphLaunch fanning out to 425 kernels: nothing repeats that carries GPU time.
    timeline = _load(str(corpus_file("TraceLens__vllm_decode_full__graph_execution.json.gz")))
    assert detect_steps(timeline, index_timeline(timeline)) is None


def test_an_extra_call_every_five_steps_does_not_break_the_steps(stripped_dir: Path) -> None:
    # GIVEN the stripped decode_step trace (5 steps and a final cudaDeviceSynchronize) tiled
    # 8 times back to back: every fifth step is followed by one extra call
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from step_detection import tiled

    source = _stripped(sample_file("decode_step.eager.json.gz"), stripped_dir)
    found = _detect(tiled(source, 8))
    # THEN all 40 steps are found; the 7 followed by another copy's step hold the extra call
    assert found.occurrences == 40
    assert found.launches_per_step == 177
    assert found.identical == 33
    lengths = [len(r) for r in found.rows]
    assert lengths == [176] * 40


# -- unannotated H200 scripts recorded through `traceinspect profile` ------------------------

UNANNOTATED = Path(__file__).resolve().parents[1] / "sample_traces" / "validation"


def _measured_ns(name: str, mode: str) -> int:
    """The --mark run's measured unprofiled step p50 (``mode``: eager or graphed), read as
    ``bench/validation_table.py`` reads it: its least disturbed timing round (these runs
    traced the candidate between rounds, which slowed the later ones)."""
    sys.path.insert(0, str(UNANNOTATED.parents[1] / "bench"))
    from validation_table import _unprofiled_p50

    results = json.loads((UNANNOTATED / "unannotated" / name / "mark.results.json").read_text())
    (row,) = [r for r in results["rows"] if r["mode"] == mode]
    return int(_unprofiled_p50(row, results))


@cache
def _diagnosed(name: str, trace: str) -> TraceAnalysis:
    return diagnose(_load(str(UNANNOTATED / "unannotated" / name / f"{trace}.json.gz")))


#: Eager step simulated from the trace without and with Python stacks (µs), and the --mark
#: run's measured eager p50 (its least disturbed round). With the built-in profiler costs
#: (a stretch keeps 45 % of itself once 24 µs per operator and 1 µs per CUDA call would take
#: more, 1.05 µs per Python call) every one is within 12 % of the measured step (the
#: optimizer loop with stacks -12.0 %, the encoder without +11.1 %; within 11 % with 30 µs,
#: no per-call cost, a 40 % floor and 1 µs per Python call, fitted on fewer recordings);
#: before, against the pooled rounds, the stacks traces read decode 1,917.8, lstm 1,733.7,
#: MLP 2,682.2, optimizer 16,244.9, encoder 1,817.9, conv 4,269.9.
EAGER_US = {
    "decode_gpt": (2053.4, 1902.4, 1967.0),
    "lstm_loop": (1849.8, 1711.3, 1853.8),
    "mlp_train": (2089.3, 2323.4, 2295.4),
    "optimizer_loop": (17635.7, 15541.6, 17664.2),
    "encoder_infer": (1642.3, 1485.1, 1477.9),
    "conv_loop": (4320.9, 4265.7, 4644.1),
}


@pytest.mark.parametrize(
    ("name", "trace", "steps", "verdict", "graphed_us", "measured_us", "body"),
    [
        # script steps (in the trace: trimmed traces keep the first K), the verdict replay
        # bears out, the graphed estimate and the --mark run's measured graphed step
        ("decode_gpt", "trace", 24, "launch-bound", 393.4, 444.6, None),
        ("decode_gpt", "trace.stacks", 13, "launch-bound", 392.0, 444.6, "decode_step"),
        ("lstm_loop", "trace", 20, "launch-bound", 529.0, 554.9, None),
        ("lstm_loop", "trace.stacks", 20, "launch-bound", 528.7, 554.9, "run_sequence"),
        ("mlp_train", "trace", 20, "launch-bound", 1009.9, 1022.4, None),
        ("mlp_train", "trace.stacks", 20, "launch-bound", 1012.7, 1022.4, "train_step"),
        ("optimizer_loop", "trace", 8, "launch-bound", 3419.6, 3953.6, None),
        ("optimizer_loop", "trace.stacks", 4, "launch-bound", 3418.3, 3953.6, "update"),
        ("encoder_infer", "trace", 20, "launch-bound", 489.6, 483.7, None),
        ("encoder_infer", "trace.stacks", 13, "launch-bound", 482.0, 483.7, "forward"),
        ("conv_loop", "trace", 20, "compute-bound", 4297.5, 4526.1, None),
        ("conv_loop", "trace.stacks", 20, "compute-bound", 4290.3, 4526.1, "forward"),
    ],
)
def test_unannotated_scripts_get_their_steps(
    name: str,
    trace: str,
    steps: int,
    verdict: str,
    graphed_us: float,
    measured_us: float,
    body: str | None,
) -> None:
    # GIVEN a plain PyTorch script (no traceinspect, no record_function) recorded on the
    # H200 by `traceinspect profile`, weight upload and warm-up included
    # WHEN it is diagnosed
    diagnosis = _diagnosed(name, trace)
    by_name = {r.region.name: r for r in diagnosis.region_results}
    step = by_name["step (detected)"]
    found = step.region.detection
    assert found is not None
    # THEN the steps are found: steady ones plus the warm-up moved to `startup`, ±1
    assert abs(found.occurrences + found.warmup_steps - steps) <= 1
    assert "startup" in by_name
    assert by_name["startup"].region.occurrences == 1
    # ... with the verdict replay bears out, with Python stacks as without
    assert step.verdict == verdict
    # ... and a graphed estimate at most 11 % under the measured graphed step and never more
    # than 2 % over it (-7.7 % to +0.1 %): these steps were timed in the process that had
    # run the profiler, whose replays run slower than a fresh process's (25-39 % on
    # holdout2_fresh), while the built-in calibration's replays were timed before any
    # profiler session; the measurement lies inside the estimate's range. The optimizer
    # loop, a graph of 2,201 nodes charged 100 ns each on top of the calibration (fitted on
    # fresh-process replays), is 13.6 % under (8.0 % with 200 ns per node); the GPT decode
    # loop 12.7-12.9 % (10.1-10.7 % while its KV-cache copy nodes were each charged a 2 µs
    # hand-off, which no device-to-device copy node shows in a profiled replay)
    measured_ns = _measured_ns(name, "graphed")
    assert measured_ns == pytest.approx(measured_us * 1000, abs=100)
    assert step.estimate.graphed_ns / 1000 == pytest.approx(graphed_us, abs=0.2)
    lowest = {"optimizer_loop": -0.14, "decode_gpt": -0.13}.get(name, -0.11)
    assert lowest <= graphed_us / measured_us - 1 <= 0.02
    assert step.estimate.low_ns <= measured_ns <= step.estimate.high_ns
    # ... and the eager step simulated from the trace
    eager_us = EAGER_US[name][1 if trace == "trace.stacks" else 0]
    assert step.estimate.eager_ns / 1000 == pytest.approx(eager_us, abs=0.2)
    # ... and, where the trace has Python stacks, the loop's body is named
    if body is None:
        assert found.source is None
    else:
        assert found.source is not None
        assert found.source.body.split(": ")[-1] == body
        assert found.source.loop.endswith(": main")


@pytest.mark.parametrize("name", sorted(EAGER_US))
def test_python_stacks_cost_comes_off_the_eager_time(name: str) -> None:
    # GIVEN one script recorded without and with Python stacks: its traced step is up to
    # 47 % longer with them (encoder 3,133 -> 4,590 µs: 1,680 recorded Python calls a step)
    without_stacks, with_stacks, measured = EAGER_US[name]
    assert _measured_ns(name, "eager") == pytest.approx(measured * 1000, abs=100)
    # THEN the eager step simulated from both comes out alike (within 20 %: the two
    # recordings are separate runs; the encoder read +37 % before)
    assert abs(with_stacks / without_stacks - 1) <= 0.20
    # ... and the error against the measured eager step is no worse with stacks than
    # without them, within 12 points (with stacks: conv -8, decode -3, encoder +0.5, LSTM -8,
    # MLP +1, optimizer -12 %; without: -7, +4, +11, -0.2, -9, -0.2 %). Within 5 points
    # with the costs fitted on fewer recordings (30 µs an operator, no cost per CUDA call,
    # a 40 % floor): the cost per CUDA call fitted on the 553 fresh-process recordings,
    # none with stacks, takes more off the LSTM and optimizer loops' stacks traces
    assert abs(with_stacks / measured - 1) <= abs(without_stacks / measured - 1) + 0.12


def test_the_encoders_profiled_long_host_gaps_are_the_profilers() -> None:
    # GIVEN the encoder script recorded with Python stacks: the profiled step has 44 % of
    # its GPU window in host gaps over 200 µs (the Python tracer stretched them)
    step = _diagnosed("encoder_infer", "trace.stacks").region("step (detected)")
    assert step.shape is not None
    assert step.shape.long_host_share == pytest.approx(0.440, abs=0.005)
    # WHEN the same step is simulated without the profiler, no host gap stays that long
    assert step.estimate is not None and step.estimate.unprofiled is not None
    assert step.estimate.unprofiled.long_host_share == 0.0
    assert step.estimate.unprofiled.idle_share["host_launch"] == pytest.approx(0.711, abs=0.005)
    # THEN the step is launch-bound (measured: replay saves 67 %: 1,477.9 -> 483.7 µs;
    # predicted 68 %: 1,485.1 -> 482.0 µs), the evidence keeping the profiled figure beside
    # the simulated one
    assert step.verdict == "launch-bound"
    assert step.estimate.saving_frac == pytest.approx(0.678, abs=0.005)
    assert (
        "profiled trace: 44% of window in host gaps > 200 µs, 0% without the profiler"
        " (simulated)" in step.evidence
    )


def test_terminal_json_and_html_say_the_step_was_detected_and_how_surely(
    stripped_dir: Path,
) -> None:
    from rich.console import Console

    from traceinspect.report.html import page_data
    from traceinspect.report.json_report import report_data
    from traceinspect.report.terminal import render_diagnosis

    timeline = _stripped(sample_file("host_sync.eager.json.gz"), stripped_dir)
    report = report_data(diagnose(timeline))
    (step,) = [r for r in report["regions"] if r["source"] == "detected"]
    detection = step["detection"]
    assert (step["name"], detection["repeats"], detection["launches_per_step"]) == (
        "step (detected)",
        5,
        89,
    )
    assert detection["identical"] == 5
    assert detection["confidence"] == pytest.approx(0.93, abs=0.02)
    assert detection["loop"] is None  # no Python stacks in this trace
    console = Console(record=True, width=200)
    render_diagnosis(report, console)
    text = console.export_text()
    assert "step (detected): detected without annotations: 5 repeats of a 89-call launch" in text
    assert f"confidence {detection['confidence'] * 100:.0f} %" in text
    page = page_data(timeline, report)
    row = [r[0]["text"] for r in page["regions"]["rows"]].index("step (detected)")
    sections = page["regions"]["details"][row]["sections"]
    assert sections[0]["title"].startswith("Found by step detection")
    assert sections[0]["items"] == [detection["summary"]]


def test_the_detected_step_is_the_step_of_per_rank_tables_and_measured_eager_times() -> None:
    from traceinspect.analysis.regions import step_region
    from traceinspect.report.ranks import step_diagnosis

    timeline = _load(str(UNANNOTATED / "unannotated" / "lstm_loop" / "trace.json.gz"))
    regions = find_regions(timeline, index_timeline(timeline))
    detected = next(r for r in regions if r.source == "detected" and r.name == "step (detected)")
    assert step_region(regions) is detected
    # --eager-us (the --mark run's unprofiled eager step: 2,268.2 µs) applies to it
    analysis = diagnose(timeline, eager_unprofiled_ns=2_268_200)
    assert analysis.step is not None
    assert analysis.step.region.name == "step (detected)"
    assert analysis.step.estimate.eager_ns == 2_268_200
    saving = 1 - analysis.step.estimate.graphed_ns / analysis.step.estimate.eager_ns
    assert saving == pytest.approx(0.762, abs=0.01)  # measured: 75.5 %
    row = step_diagnosis(analysis)
    assert row is not None
    assert (row["region"], row["occurrences"], row["verdict"]) == (
        "step (detected)",
        18,
        "launch-bound",
    )


def test_a_recursive_loop_body_does_not_break_step_detection() -> None:
    """H200 ``holdout7/graph_sage_b1`` recorded by ``traceinspect profile`` (the head of its
    whole-run trace, trimmed after the first step): its startup moves the model to the GPU
    through the recursive ``Module._apply``, whose nested calls the loop finder took as the
    loop's body calls. Nested calls gave repeated and empty steps, and analyze stopped on an
    IndexError. A step is one outermost body call that launched something."""
    from traceinspect.analysis.arrays import index_timeline
    from traceinspect.analysis.regions import find_regions
    from traceinspect.parse import load_trace

    trace = sample_file("validation/holdout7/graph_sage_b1/trace.head.json.gz")
    timeline = load_trace(trace)
    regions = find_regions(timeline, index_timeline(timeline))
    assert [r.name for r in regions] == ["step"]
