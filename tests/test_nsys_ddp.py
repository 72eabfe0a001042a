"""A two-process DDP run recorded on an H200 with `nsys profile torchrun --nproc-per-node 2`
(sample_traces/nsys/ddp_step.py; one GPU, so the ranks all-reduce through gloo), read against
the PyTorch-profiler trace of rank 0 of the same script.

Each process marks 12 steps `train_step` > `forward` / `backward` / `optimizer` on its main
thread (pids 695 and 696); `loss.backward()`'s kernels are launched by the autograd engine's
thread (tids 724 and 723): 456 kernel launches on each main thread, 672 on each autograd
thread (counted in CUPTI_ACTIVITY_KIND_RUNTIME).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from conftest import sample_file

from traceinspect.analysis.arrays import index_timeline
from traceinspect.analysis.regions import Region, find_regions
from traceinspect.model import Timeline
from traceinspect.parse import load_trace

NSYS = "nsys/ddp_gloo.sqlite.gz"
KINETO_RANK0 = "nsys/ddp_gloo.rank0.kineto.json.gz"
STEPS = 12


@cache
def timeline(name: str) -> Timeline:
    return load_trace(sample_file(name))


@cache
def regions(name: str) -> dict[tuple[str, int], Region]:
    tl = timeline(name)
    return {(r.name, r.process): r for r in find_regions(tl, index_timeline(tl))}


def kernels_per_occurrence(name: str, region: Region) -> set[int]:
    kind = timeline(name).gpu["kind"].to_numpy()
    return {int((kind[rows] == "kernel").sum()) for rows in region.rows}


def test_the_export_names_its_processes_device_and_threads() -> None:
    tl = timeline(NSYS)
    assert [d.name for d in tl.meta.devices] == ["NVIDIA H200"]
    assert tl.meta.profiler["processes"] == "695 python, 696 python"
    assert tl.meta.profiler["cuda_graph_trace"] == "node"
    launches = tl.host[tl.host["kind"] == "launch"].groupby(["pid", "tid"]).size().to_dict()
    assert launches == {(695, 695): 456, (695, 724): 672, (696, 696): 456, (696, 723): 672}
    ann = tl.annotations
    assert ann.groupby(["pid", "name"]).size().to_dict() == {
        (pid, name): STEPS
        for pid in (695, 696)
        for name in ("backward", "forward", "optimizer", "train_step")
    }
    assert (ann["tid"] == ann["pid"]).all()  # every range opened on the main thread


def test_regions_are_per_process_and_backward_holds_the_autograd_threads_kernels() -> None:
    found = regions(NSYS)
    assert set(found) == {
        (name, pid)
        for pid in (695, 696)
        for name in ("train_step", "forward", "backward", "optimizer")
    }
    gpu_pid = timeline(NSYS).gpu["pid"].to_numpy()
    for (_, pid), region in found.items():
        assert region.occurrences == STEPS
        assert set(region.pid.tolist()) == {pid}
        assert set(gpu_pid[np.concatenate(region.rows)].tolist()) == {pid}
    for pid in (695, 696):
        # launched from the autograd thread; read from the range's own thread alone, backward
        # held 1 kernel per step (and train_step 38)
        assert kernels_per_occurrence(NSYS, found[("backward", pid)]) == {57}
        assert kernels_per_occurrence(NSYS, found[("train_step", pid)]) == {94}
        assert kernels_per_occurrence(NSYS, found[("forward", pid)]) == {34}
        assert kernels_per_occurrence(NSYS, found[("optimizer", pid)]) == {3}


def test_the_same_kernels_per_region_as_the_pytorch_profiler_saw() -> None:
    kineto = regions(KINETO_RANK0)
    for name, count in (("train_step", 94), ("forward", 34), ("backward", 57), ("optimizer", 3)):
        assert kernels_per_occurrence(KINETO_RANK0, kineto[(name, -1)]) == {count}
        assert kineto[(name, -1)].occurrences == STEPS
    # c10d's gloo ranges on gloo's own threads are communication there, never regions
    ann = timeline(KINETO_RANK0).annotations
    assert ann.loc[ann["source"] == "collective", "name"].value_counts().to_dict() == {
        "gloo:all_reduce": 96
    }
    assert not any(name.startswith("gloo:") for name, _ in kineto)


@pytest.mark.parametrize("pid", [695, 696])
def test_both_processes_read_launch_heavy_with_a_large_replay_saving(pid: int) -> None:
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.report.json_report import report_data

    report = report_data(diagnose(timeline(NSYS)))
    mine = {r["name"]: r for r in report["regions"] if r["process"] == pid}
    backward = mine["backward"]
    assert backward["kernels"] == 57
    # ~15 ms of a step with 10-11 % of the GPU busy: the all-reduce's copies and the host's
    # launches leave it idle; replayed, the step's GPU work takes ~1.5 ms.
    assert 0.09 < backward["gpu_busy_share"] < 0.12
    assert 0.85 < backward["estimate"]["saving_frac"] < 0.95
    assert backward["verdict"] in ("launch-bound", "sync-bound")
