"""A two-GPU DDP run with NCCL, recorded on two H200s (`sample_traces/nsys/ddp_step.py`, 12
steps `train_step` > `forward` / `backward` / `optimizer` per rank) three ways in one lease:
unprofiled, under `nsys profile torchrun --nproc-per-node 2` (`ddp_nccl.sqlite.gz`, trimmed
to the steps) and under torch.profiler (`ddp_nccl.rank{0,1}.kineto.json.gz`); the step times
of each are in `ddp_nccl.latencies.jsonl` (p50 4.2 ms unprofiled, 5.5 ms under nsys, 5.4–5.8 ms
under torch.profiler).

`loss.backward()` launches from the autograd engine's thread and its all-reduce runs as NCCL
kernels: `backward` must hold them, per process, and they are communication, not compute.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from conftest import sample_file

import traceinspect
from traceinspect.analysis.result import TraceAnalysis

NSYS = "nsys/ddp_nccl.sqlite.gz"
RANKS = ("nsys/ddp_nccl.rank0.kineto.json.gz", "nsys/ddp_nccl.rank1.kineto.json.gz")
STEPS = 12
#: Kernels per step and region, the same in every process and every recording.
KERNELS = {"train_step": 102, "forward": 34, "backward": 65, "optimizer": 3}


@cache
def analysis(name: str) -> TraceAnalysis:
    return traceinspect.analyze(sample_file(name))


def verdicts(name: str) -> dict[tuple[str, int], str]:
    return {
        (r.region.name, r.region.process): r.verdict
        for r in analysis(name).region_results
        if r.region.name in KERNELS
    }


def test_nsys_export_keeps_each_process_and_its_gpu_apart() -> None:
    timeline = traceinspect.load(sample_file(NSYS))
    assert [d.name for d in timeline.meta.devices] == ["NVIDIA H200", "NVIDIA H200"]
    assert timeline.gpu.groupby(["pid", "device"]).size().to_dict() == {
        (751, 0): 1512,
        (752, 1): 1512,
    }
    # the all-reduce kernels are marked as collectives: 8 per step and process
    assert int(timeline.gpu["collective"].sum()) == 2 * STEPS * 8
    # NCCL's own NVTX ranges are communication and library activity, never user regions
    sources = timeline.annotations.groupby("source").size().to_dict()
    assert sources == {"collective": 192, "library": 4, "nvtx": 4 * STEPS * 2}
    names = {r.region.name for r in analysis(NSYS).region_results}
    assert not any(name.startswith("nccl") for name in names)


@pytest.mark.parametrize("name", [NSYS, *RANKS])
def test_every_region_holds_its_kernels_in_every_process(name: str) -> None:
    found = {
        (r.region.name, r.region.process): (r.region.occurrences, r.kernels)
        for r in analysis(name).region_results
        if r.region.name in KERNELS
    }
    processes = {p for _, p in found}
    assert len(processes) == (2 if name == NSYS else 1)
    for (region, _), (occurrences, kernels) in found.items():
        assert occurrences == STEPS
        assert kernels == KERNELS[region], region  # backward: the autograd thread's launches


@pytest.mark.parametrize("name", [*RANKS, "nsys/ddp_gloo.rank0.kineto.json.gz"])
def test_each_ranks_own_trace_steps_by_its_train_step_ranges(name: str) -> None:
    # GIVEN one rank's Kineto trace, its 12 train_step ranges holding every GPU activity
    result = analysis(name)
    regions = {r.region.name: r.region for r in result.region_results}
    # THEN they are its steps: the step search cut rank 0's loop elsewhere, each step
    # starting at the optimizer (NCCL: 4 repeats of 135 calls and 1 warm-up; gloo: 7 of 143,
    # confidence 14 %), and called what came before them the startup, backward inside it
    assert result.step is not None and result.step.region.name == "train_step"
    assert result.step.region.occurrences == STEPS
    assert "step (detected)" not in regions and "startup" not in regions
    assert "whole trace" not in regions
    assert regions["backward"].depth == regions["forward"].depth == 1


@pytest.mark.parametrize("name", [NSYS, *RANKS])
def test_backward_reads_as_its_step_and_forward_launch_bound(name: str) -> None:
    found = verdicts(name)
    for (region, process), verdict in found.items():
        if region == "backward":  # waiting in the all-reduce, or setting the pace
            assert verdict == found[("train_step", process)]
        if region == "forward":
            assert verdict == "launch-bound"


def test_the_rank_that_waits_reads_communication_bound_under_both_profilers() -> None:
    # One rank's step waits in the all-reduce for the other (which one varies run to run):
    # that step and its backward are communication-bound; the other rank's host sets the
    # pace (its host gaps fill two thirds of its simulated backward, whose all-reduce
    # kernels find the first rank waiting): launch-bound, under either profiler.
    for region in ("train_step", "backward"):
        nsys = sorted(v for (r, _), v in verdicts(NSYS).items() if r == region)
        kineto = sorted(verdicts(name)[(region, -1)] for name in RANKS)
        assert nsys == kineto == ["communication-bound", "launch-bound"], region


def test_recorded_step_times() -> None:
    rows = [
        json.loads(line)
        for line in sample_file("nsys/ddp_nccl.latencies.jsonl").read_text().splitlines()
    ]
    p50 = {(r["mode"], r["rank"]): r["step_p50_ns"] / 1e3 for r in rows}
    assert all(r["backend"] == "nccl" for r in rows)
    assert p50[("unprofiled", 0)] == pytest.approx(4229.15)
    assert p50[("nsys", 1)] == pytest.approx(5537.912)
    assert p50[("torch-profiler", 0)] == pytest.approx(5774.093)
