"""The verdict against the saving it predicts, communication-bound regions, and measured eager
times per region (``--eager-us NAME=US``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import sample_file

from traceinspect.analysis.verdict import RegionShape, decide
from traceinspect.cli import main
from traceinspect.commands.analyze import parse_eager_us
from traceinspect.errors import UsageError


def shape(**changes: float) -> RegionShape:
    """A region of 100 short kernels whose profiled window is mostly waiting on launches."""
    values: dict[str, object] = {
        "occurrences": 5,
        "activities": 100,
        "window_ns": 1_000_000.0,
        "busy_share": 0.2,
        "idle_share": {"host_launch": 0.7, "sync": 0.0, "other": 0.1},
        "median_activity_ns": 2_000.0,
        "gpu_per_activity_ns": 2_000.0,
        "graph_share": 0.0,
        "median_queue_depth": 0.0,
        "wall_ns": 1_100_000.0,
    }
    values.update(changes)
    return RegionShape(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Unprofiled:
    window_ns: int
    busy_share: float
    idle_share: dict[str, float]
    long_host_share: float = 0.0


@dataclass(frozen=True)
class Saving:
    saving_frac: float
    eager_ns: int = 500_000
    graphed_ns: int = 450_000
    eager_source: str = "trace-deflated"
    parts: dict[str, int] = field(default_factory=lambda: {"gpu_work": 200_000})


def test_profiled_launch_gaps_alone_do_not_make_a_region_launch_bound() -> None:
    # GIVEN a region whose profiled window is 70 % launch gaps
    assert decide(shape())[0] == "launch-bound"
    # WHEN, without the profiler, the host keeps ahead (5 % launch gaps, GPU busy 85 %)
    unprofiled = Unprofiled(240_000, 0.85, {"host_launch": 0.05, "sync": 0.0, "other": 0.1})
    verdict, evidence = decide(shape(), unprofiled=unprofiled)
    # THEN it is not launch-bound, and the evidence gives both views
    assert verdict == "mixed"
    assert evidence[0].startswith("without the profiler (simulated): GPU busy 85% of its 240.0")
    assert evidence[1].startswith("profiled trace: GPU busy 20% of its 1,000.0 µs window")


def test_long_host_gaps_are_weighed_in_the_simulated_run_when_there_is_one() -> None:
    # GIVEN a region whose profiled window is 70 % launch gaps, 44 % of it in gaps > 200 µs
    # (the profiler's inflation — Python stacks most — stretched the host's launch work)
    profiled = shape(long_host_share=0.44)
    assert decide(profiled)[0] == "mixed"  # profiled alone: host work, not launch cost
    # WHEN the simulated unprofiled run has 76 % launch gaps and none of them that long
    unprofiled = Unprofiled(1_725_000, 0.24, {"host_launch": 0.76, "sync": 0.0, "other": 0.0})
    verdict, evidence = decide(profiled, unprofiled=unprofiled)
    # THEN it is launch-bound, and the evidence keeps the profiled figure beside the simulated
    assert verdict == "launch-bound"
    assert (
        "profiled trace: 44% of window in host gaps > 200 µs, 0% without the profiler"
        " (simulated)" in evidence
    )
    # ... while long gaps that remain without the profiler still mean host work
    busy_host = Unprofiled(
        1_725_000, 0.24, {"host_launch": 0.76, "sync": 0.0, "other": 0.0}, long_host_share=0.4
    )
    verdict, evidence = decide(shape(long_host_share=0.02), unprofiled=busy_host)
    assert verdict == "mixed"
    assert evidence[-1] == (
        "without the profiler (simulated): 40% of window in host gaps > 200 µs"
        " (host work, not launch cost)"
    )


def test_a_launch_bound_verdict_needs_a_ten_percent_saving() -> None:
    verdict, evidence = decide(shape(), saving=Saving(saving_frac=0.04))
    assert verdict == "mixed"
    assert evidence[0].startswith(
        "looks launch-bound (host_launch gaps 70% of the profiled window), yet replay would"
        " save only 4%"
    )
    assert decide(shape(), saving=Saving(saving_frac=0.12))[0] == "launch-bound"


def test_a_compute_bound_verdict_cannot_save_more_than_a_quarter() -> None:
    busy = shape(
        busy_share=0.95,
        idle_share={"host_launch": 0.02},
        gpu_per_activity_ns=50_000.0,
        median_activity_ns=50_000.0,
    )
    assert decide(busy, saving=Saving(saving_frac=0.2))[0] == "compute-bound"
    verdict, evidence = decide(busy, saving=Saving(saving_frac=0.4))
    assert verdict == "launch-bound"
    assert evidence[0].startswith("the GPU looks busy (95% of the profiled window)")


def test_a_mixed_verdict_cannot_save_a_fifth() -> None:
    # GIVEN holdout10's EMA step as the simulated run saw it: GPU busy 86 %, launch gaps 14 %
    unprofiled = Unprofiled(975_600, 0.86, {"host_launch": 0.14, "sync": 0.0, "other": 0.0})
    profiled = shape(busy_share=0.67, idle_share={"host_launch": 0.29, "other": 0.04})
    assert decide(profiled, unprofiled=unprofiled)[0] == "mixed"
    # WHEN replay is predicted to save under a fifth, it stays mixed
    assert decide(profiled, unprofiled=unprofiled, saving=Saving(0.19))[0] == "mixed"
    # THEN from a fifth (24 % predicted; replay measured 37 %) it reads launch-bound, and
    # says why
    verdict, evidence = decide(profiled, unprofiled=unprofiled, saving=Saving(0.24))
    assert verdict == "launch-bound"
    assert evidence[0].startswith(
        "neither the host's gaps nor the GPU's work dominate the window, yet replay would"
        " save 24%: the eager run is longer than its GPU work"
    )
    assert evidence[1].startswith("without the profiler (simulated): GPU busy 86%")
    # AND a compute-bound region keeps its verdict up to a quarter
    busy = shape(
        busy_share=0.97,
        idle_share={"host_launch": 0.02, "other": 0.01},
        median_activity_ns=200_000.0,
        gpu_per_activity_ns=200_000.0,
    )
    assert decide(busy)[0] == "compute-bound"
    assert decide(busy, saving=Saving(0.24))[0] == "compute-bound"
    assert decide(busy, saving=Saving(0.26))[0] == "launch-bound"


def test_collective_dominated_region_is_communication_bound() -> None:
    comm = shape(
        busy_share=0.95,
        idle_share={"host_launch": 0.03, "other": 0.02},
        gpu_per_activity_ns=50_000.0,
        collective_share=0.8,
    )
    verdict, evidence = decide(comm)
    assert verdict == "communication-bound"
    assert "collective kernels 80% of GPU busy time" in evidence
    # AND a GPU waiting on another stream's collective (dependency gaps) stays so
    waiting = shape(
        busy_share=0.06,
        idle_share={"host_launch": 0.05, "dependency": 0.81, "other": 0.08},
        gpu_per_activity_ns=80_000.0,
        collective_share=0.95,
    )
    assert decide(waiting)[0] == "communication-bound"


def test_collectives_amid_host_gaps_do_not_make_a_region_communication_bound() -> None:
    # GIVEN TorchRec's sparse-data distribution as HTA's trace shows it: collectives 61 % of
    # the GPU's busy time, but the GPU busy 6 % of the simulated window, host gaps the rest
    profiled = shape(
        busy_share=0.38,
        idle_share={"host_launch": 0.15, "sync": 0.09, "dependency": 0.32, "other": 0.06},
        gpu_per_activity_ns=95_900.0,
        collective_share=0.61,
    )
    unprofiled = Unprofiled(153_600_000, 0.06, {"host_launch": 0.94, "sync": 0.0, "other": 0.0})
    # THEN the host sets its pace: not communication-bound
    verdict, evidence = decide(profiled, unprofiled=unprofiled)
    assert verdict == "launch-bound"
    assert "collective kernels 61% of GPU busy time" in evidence
    # AND with the host's gaps under half the window it is
    quiet = Unprofiled(20_000_000, 0.55, {"host_launch": 0.45, "sync": 0.0, "other": 0.0})
    assert decide(profiled, unprofiled=quiet)[0] == "communication-bound"


def test_eager_us_takes_a_step_time_and_region_times() -> None:
    assert parse_eager_us(None) == (None, {})
    assert parse_eager_us(["2940", "attention=900", "mlp=1.5e3"]) == (
        2940.0,
        {"attention": 900.0, "mlp": 1500.0},
    )
    # a name may itself hold '=': the number is after the last one
    assert parse_eager_us(["a=b=12"]) == (None, {"a=b": 12.0})
    for bad in ("0", "-3", "attention=", "=12", "x=nan", "fast"):
        with pytest.raises(UsageError):
            parse_eager_us([bad])


def test_cli_eager_us_per_region(tmp_path: Path) -> None:
    # GIVEN the mixed H200 sample and a measured eager time for its attention region only
    out = tmp_path / "r.json"
    trace = sample_file("mixed.eager.json.gz")
    assert main(["analyze", str(trace), "--eager-us", "attention=900", "--json", str(out)]) == 0
    regions = {r["name"]: r for r in json.loads(out.read_text())["regions"]}
    attention = regions["attention"]["estimate"]
    # THEN that region's saving is measured, the others' still simulated from the trace
    assert attention["eager_source"] == "measured"
    assert attention["eager_us"] == 900.0
    assert attention["saving_low_frac"] == pytest.approx(1 - attention["high_us"] / 900, abs=1e-4)
    assert regions["mlp"]["estimate"]["eager_source"] == "trace-deflated"
    assert main(["analyze", str(trace), "--eager-us", "attention=x"]) == 2
