"""``diff`` warns when the two traces are not one workload, and shows names whole on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import sample_file
from typer.testing import CliRunner

from traceinspect.analysis.diff import SAME_WORKLOAD_MIN_SIMILARITY, kernel_similarity
from traceinspect.cli import app
from traceinspect.parse import load_trace

WORKLOADS = ("tiny_mlp", "decode_step", "convnet_b1", "big_gemm", "mixed", "two_streams")


def test_eager_and_graphed_of_one_workload_have_the_same_kernel_mix() -> None:
    for name in WORKLOADS:
        eager = load_trace(sample_file(f"{name}.eager.json.gz"))
        graphed = load_trace(sample_file(f"{name}.graphed.json.gz"))
        sim = kernel_similarity(eager, graphed)
        assert sim.by_count == pytest.approx(1.0), name
        assert sim.same_workload
    # by time, two_streams' graphed tanh kernel runs longer (16% -> 31% of kernel time)
    two = kernel_similarity(
        load_trace(sample_file("two_streams.eager.json.gz")),
        load_trace(sample_file("two_streams.graphed.json.gz")),
    )
    assert two.by_time == pytest.approx(0.740, abs=0.001)


def test_different_workloads_are_told_apart() -> None:
    mixed = load_trace(sample_file("mixed.eager.json.gz"))
    gemm = load_trace(sample_file("big_gemm.graphed.json.gz"))
    sim = kernel_similarity(mixed, gemm)
    # one shared GEMM dominates both by time, but the launches hardly overlap
    assert sim.by_time == pytest.approx(0.648, abs=0.001)
    assert sim.by_count == pytest.approx(0.0139, abs=0.0001)
    assert sim.by_count < SAME_WORKLOAD_MIN_SIMILARITY
    b1 = load_trace(sample_file("convnet_b1.eager.json.gz"))
    b64 = load_trace(sample_file("convnet_b64.graphed.json.gz"))
    assert kernel_similarity(b1, b64).by_count == pytest.approx(0.638, abs=0.001)


def test_cli_diff_of_unrelated_traces_warns(tmp_path: Path) -> None:
    out = tmp_path / "diff.json"
    result = CliRunner().invoke(
        app,
        ["diff", str(sample_file("mixed.eager.json.gz")),
         str(sample_file("big_gemm.graphed.json.gz")), "--json", str(out)],
        env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    assert "kernel mix alike: 1% by launches, 65% by time" in result.stdout
    assert (
        "warning: these traces do not look like the same workload: their kernel mixes are 1% "
        "alike by launches and 65% by time"
    ) in result.stdout
    data = json.loads(out.read_text())
    assert data["kernel_similarity"]["same_workload"] is False
    assert data["kernel_similarity"]["by_count"] == pytest.approx(0.0139, abs=0.0001)
    assert len(data["warnings"]) == 1


def test_cli_diff_of_one_workload_does_not_warn() -> None:
    result = CliRunner().invoke(
        app,
        ["diff", str(sample_file("mixed.eager.json.gz")),
         str(sample_file("mixed.graphed.json.gz"))],
        env={"COLUMNS": "100"},
    )
    assert result.exit_code == 0
    assert "kernel mix alike: 100% by launches, 99% by time" in result.stdout
    assert "warning" not in result.stdout


def test_cli_diff_full_names() -> None:
    # GIVEN two traces whose kernel lists differ by long templated names
    args = ["diff", str(sample_file("mixed.eager.json.gz")),
            str(sample_file("big_gemm.graphed.json.gz"))]
    runner = CliRunner()
    short = runner.invoke(app, args, env={"COLUMNS": "100"}).stdout
    full = runner.invoke(app, [*args, "--full-names"], env={"COLUMNS": "100"}).stdout
    name = next(
        n for n in json.loads(
            runner.invoke(app, [*args, "--json", "-"], env={"COLUMNS": "100"}).stdout
        )["kernels_only_in_eager"]
        if "softmax_warp_forward" in n
    )
    assert len(name) > 100
    # THEN the default output shortens it, --full-names prints it whole
    assert name not in short.replace("\n", "")
    assert "softmax_warp_forward<…>(…)" in short
    assert name in full.replace("\n", "")
