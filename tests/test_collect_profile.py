"""`traceinspect profile` on CPU: the script's trace, its exit status, and graph candidates
reported as not measured (CI has no GPU; torch is the CPU build)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from traceinspect.cli import app, main
from traceinspect.collect.replay import ROW_FIELDS
from traceinspect.errors import UsageError
from traceinspect.parse import load_trace

pytest.importorskip("torch")

from traceinspect.commands.profile import run_profile  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "scripts"
MEASURED = [f for f in ROW_FIELDS if f not in ("callable", "bucket", "mode", "in_bucket_set")]
MEASURED.remove("status")
MEASURED.remove("failure")


def _results(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text())
    return data


def _record_function_names(trace: Path) -> list[str]:
    ann = load_trace(trace).annotations
    return ann.loc[ann["source"] == "record_function", "name"].tolist()


@pytest.mark.slow
def test_profile_keeps_argv_exit_status_and_records_regions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a script that records how it was run, then exits 3
    report, out = tmp_path / "seen.json", tmp_path / "out"
    status = run_profile(FIXTURES / "echo_argv.py", [str(report), "3"], out=out)
    # THEN its status is ours, and it ran as __main__ with its own argv under the profiler
    assert status == 3
    seen = json.loads(report.read_text())
    assert seen["argv"][1:] == [str(report), "3"]
    assert seen["name"] == "__main__"
    assert seen["path0"] == str(FIXTURES.resolve())
    assert seen["recording"] is True
    # AND the trace holds the script's regions, one each
    names = _record_function_names(out / "trace.json.gz")
    assert names.count("setup") == 1
    assert names.count("work") == 1
    results = _results(out)
    assert results["script"]["exit_status"] == 3
    assert results["script"]["args"] == [str(report), "3"]
    assert results["activities"] == ["cpu"]
    assert results["rows"] == []
    assert results["analysis"] == "analysis.json"
    assert (out / "analysis.json").is_file()
    assert "CUDA is not available" in capsys.readouterr().err


@pytest.mark.slow
def test_uncaught_exception_still_leaves_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status = run_profile(FIXTURES / "raises.py", [], out=out)
    assert status == 1
    err = capsys.readouterr().err
    assert 'raises.py", line 14, in <module>' in err
    assert "ValueError: boom from the script" in err
    assert "runpy" not in err
    # The region opened before the failure is in the exported trace.
    assert _record_function_names(out / "trace.json.gz") == ["before_failure"]
    script = _results(out)["script"]
    assert (script["exit_status"], script["error_type"]) == (1, "ValueError")
    assert script["error_message"] == "boom from the script"


@pytest.mark.slow
def test_interrupted_script_leaves_a_trace_and_exits_130(tmp_path: Path) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(
        "import traceinspect\nwith traceinspect.region('until_ctrl_c'):\n"
        "    raise KeyboardInterrupt\n"
    )
    out = tmp_path / "out"
    assert run_profile(script, [], out=out) == 130
    assert _record_function_names(out / "trace.json.gz") == ["until_ctrl_c"]
    results = _results(out)
    assert results["script"]["interrupted"] is True
    assert results["analysis"] is None  # not analyzed: the user asked to stop


@pytest.mark.slow
def test_a_candidate_fed_an_edge_list_beside_its_batch(tmp_path: Path) -> None:
    """A candidate whose second argument is a heterogeneous (2, E) edge list (users in row
    0, movies in row 1) beside a batch of queries, with buckets 4 and 8 and a request mix of
    3, 4, 8 and 12. Run with ``traceinspect profile`` on an H100 every row read ok: both
    buckets and its own batch replayed correct, the mix's 3 and 12 ran eagerly, 20 of 200
    requests fell back — where the measured runs' new inputs had rolled the edge list's rows,
    as for ``holdout56``'s GraphSAGE step, its movie row would have indexed past the movies.
    Here (no CUDA): the buckets and batches as registered, every row of nulls."""
    out = tmp_path / "out"
    assert run_profile(FIXTURES / "edge_list_candidate.py", [], out=out) == 0
    rows = _results(out)["rows"]
    assert [(r["callable"], r["bucket"], r["mode"]) for r in rows] == [
        ("score", 4, "eager"),
        ("score", 4, "graphed"),
        ("score", 8, "eager"),
        ("score", 8, "graphed"),
        ("own", 8, "eager"),
        ("own", 8, "graphed"),
    ]
    assert {r["status"] for r in rows} == {"cuda_unavailable"}


@pytest.mark.slow
def test_graph_candidates_on_cpu_are_rows_of_nulls(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_profile(FIXTURES / "tiny_cpu_candidate.py", [], out=out) == 0
    results = _results(out)
    rows = results["rows"]
    # linear: buckets 1, 2, 4; plain: its example's batch of 3; eager and graphed each
    assert [(r["callable"], r["bucket"], r["mode"]) for r in rows] == [
        ("linear", 1, "eager"),
        ("linear", 1, "graphed"),
        ("linear", 2, "eager"),
        ("linear", 2, "graphed"),
        ("linear", 4, "eager"),
        ("linear", 4, "graphed"),
        ("plain", 3, "eager"),
        ("plain", 3, "graphed"),
    ]
    for row in rows:
        assert list(row) == list(ROW_FIELDS)
        assert row["status"] == "cuda_unavailable"
        assert row["failure"]["message"] == "CUDA not available"
        assert {f: row[f] for f in MEASURED} == dict.fromkeys(MEASURED)
    linear = results["candidates"][0]
    assert linear["status"] == "cuda_unavailable"
    assert linear["recommendation"] is None
    registered = linear["request_mix"]["registered_set"]
    # Mix {1: 5, 3: 3, 6: 2} on buckets 1, 2, 4: size 6 falls back (2 of 10 requests);
    # size 3 pads to 4: 3 padded rows of 5*1 + 3*4 computed. Latency and memory unknown.
    assert registered == {
        "buckets": [1, 2, 4],
        "expected_latency_ns": None,
        "fallback_share": 0.2,
        "padding_share": 3 / 17,
        "graph_memory_bytes": None,
    }
    # Nothing measured, nothing decided: each candidate's decision says so
    assert [(d["subject"], d["choice"], d["reasons"]) for d in results["decisions"]] == [
        ("linear", "undecided", ["not measured: CUDA was not available"]),
        ("plain", "undecided", ["not measured: CUDA was not available"]),
    ]
    assert list(out.glob("*.eager.json.gz")) == []  # nothing measured, nothing recorded
    # The script's own region is in the trace; the candidates ran nothing under it.
    assert _record_function_names(out / "trace.json.gz") == ["forward"]


def test_missing_script_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such script"):
        run_profile(tmp_path / "absent.py", [], out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_outputs_are_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = tmp_path / "ok.py"
    script.write_text("x = 1\n")
    assert run_profile(script, [], out=out) == 0
    (out / "mine.txt").write_text("keep")
    with pytest.raises(UsageError, match="--force"):
        run_profile(script, [], out=out)
    (out / "old.b9.eager.json.gz").write_bytes(b"stale")
    assert run_profile(script, [], out=out, force=True) == 0
    assert (out / "mine.txt").read_text() == "keep"  # not ours: untouched
    assert not (out / "old.b9.eager.json.gz").exists()  # ours, from an earlier run: cleared
    assert (out / "trace.json.gz").is_file()


@pytest.mark.slow
def test_cli_passes_arguments_after_double_dash(tmp_path: Path) -> None:
    report, out = tmp_path / "seen.json", tmp_path / "out"
    args = ["profile", str(FIXTURES / "echo_argv.py"), "--out", str(out), "--iters", "5"]
    result = CliRunner().invoke(app, [*args, "--", str(report), "4", "--lr", "-x"])
    assert result.exit_code == 4, result.output
    assert json.loads(report.read_text())["argv"][1:] == [str(report), "4", "--lr", "-x"]


@pytest.mark.slow
def test_subprocess_exit_status_and_default_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the script copied into an empty working folder
    script = tmp_path / "exits5.py"
    script.write_text("import sys\nprint('hello from the script')\nsys.exit(5)\n")
    done = subprocess.run(
        [sys.executable, "-m", "traceinspect", "profile", script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 5, done.stderr
    assert "hello from the script" in done.stdout
    out = tmp_path / "traceinspect-out" / "exits5"
    assert sorted(p.name for p in out.iterdir()) == [
        "analysis.json",
        "results.json",
        "trace.json.gz",
    ]
    # AND a second run refuses to overwrite them (exit 2, one line, no traceback)
    assert main(["profile", str(script), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"traceinspect: {out}: already holds outputs (use --force to overwrite)\n"


def test_predictions_come_from_each_buckets_eager_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    import traceinspect.analysis.diagnose as diagnose_module
    import traceinspect.parse as parse_module
    from traceinspect.collect.replay import new_row
    from traceinspect.commands.profile import _add_predictions

    # GIVEN measured rows for bucket 4, and an estimator that answers from the eager trace
    eager = new_row("mlp", 4, "eager", in_bucket_set=True)
    eager.update(trace="mlp.b4.eager.json.gz", host_p50_ns=400_000)
    graphed = new_row("mlp", 4, "graphed", in_bucket_set=True)
    graphed.update(host_p50_ns=80_000, input_copy_bytes=[4 * 1024 * 4])
    seen: list[tuple[str, int | None, Any]] = []

    def fake_diagnose(
        timeline: str,
        *,
        calibration: Any = None,
        eager_unprofiled_ns: int | None = None,
        input_copy_bytes: Any = None,
    ) -> Any:
        assert calibration is None  # no host costs measured: the built-in profile
        seen.append((timeline, eager_unprofiled_ns, input_copy_bytes))
        estimate = SimpleNamespace(graphed_ns=90_000, low_ns=70_000, high_ns=120_000)
        inner = SimpleNamespace(region=SimpleNamespace(name="mlp", depth=1), estimate=None)
        outer = SimpleNamespace(region=SimpleNamespace(name="mlp", depth=0), estimate=estimate)
        return SimpleNamespace(region_results=[inner, outer])

    monkeypatch.setattr(diagnose_module, "diagnose", fake_diagnose)
    monkeypatch.setattr(parse_module, "load_trace", lambda path: Path(path).name)
    from rich.console import Console

    _add_predictions([eager, graphed], tmp_path, Console(stderr=True))
    # THEN the estimator saw that trace with the unprofiled eager time of the same bucket and
    # the static-input copies the graphed replays made
    assert seen == [("mlp.b4.eager.json.gz", 400_000, {"mlp": [16_384]})]
    assert (graphed["predicted_ns"], graphed["predicted_low_ns"]) == (90_000, 70_000)
    assert graphed["predicted_high_ns"] == 120_000
    assert graphed["prediction_error"] == pytest.approx(90_000 / 80_000 - 1)  # +12.5 %
    assert eager["predicted_ns"] is None  # predictions sit on graphed rows only


def test_fresh_process_timings_replace_the_profiled_process_ones() -> None:
    # GIVEN the H200 rows of holdout3/gru_b8 (timed in the profiled process: graphed 942.6 µs)
    # and a fresh process's rows for the same candidate (the same graph replayed 669.5 µs
    # by itself in a fresh process on that machine)
    from traceinspect.collect.replay import TIMING_FIELDS
    from traceinspect.commands.profile import merge_fresh_timings

    results = json.loads(
        (
            Path(__file__).parents[1] / "sample_traces/validation/holdout3/gru_b8/results.json"
        ).read_text()
    )
    rows = results["rows"]
    fresh = [dict(r) for r in rows]
    fresh[1] = {**fresh[1], "host_p50_ns": 669_500, "round_host_p50_ns": [669_500]}
    fresh[0] = {**fresh[0], "status": "error"}  # a row the fresh process failed keeps its own
    # WHEN merged
    assert merge_fresh_timings(rows, fresh) == 1
    # THEN the graphed row carries the fresh timing, the profiled one as evidence
    eager, graphed = rows
    assert graphed["mode"] == "graphed" and graphed["host_p50_ns"] == 669_500
    assert graphed["in_profiled_process"]["host_p50_ns"] == 942_581
    assert set(graphed["in_profiled_process"]) == set(TIMING_FIELDS)
    assert "in_profiled_process" not in eager and eager["host_p50_ns"] == 2_508_495


def test_fresh_rows_keep_the_copy_cost_of_the_process_that_timed_them() -> None:
    # GIVEN holdout17_rerun/ctr_dense_sparse_8in_b64's probes: the fresh process's (9.8 µs
    # per warm copy) and the profiled process's
    from traceinspect.calibration import builtin_calibrations
    from traceinspect.commands.profile import (
        calibration_with_host_costs,
        host_costs_for_fresh_rows,
    )
    from traceinspect.parse import load_trace

    folder = (
        Path(__file__).parents[1]
        / "sample_traces/validation/holdout17_rerun/ctr_dense_sparse_8in_b64"
    )
    results = json.loads((folder / "results.json").read_text())
    fresh, profiled = results["host_costs"], results["host_costs_in_profiled_process"]
    assert fresh["copy_warm_host_ns"] == 9_800
    # WHEN the fresh process replaced rows and probed: its probe goes with them
    assert host_costs_for_fresh_rows(profiled, fresh, 2) == (fresh, "")
    # WHEN it replaced none: the profiled process's rows keep their own probe
    assert host_costs_for_fresh_rows(profiled, fresh, 0) == (profiled, "")
    # WHEN it replaced rows but its probe failed: no measured cost goes with them, and the
    # notes say so; the prediction then charges the built-in copy cost, not the other
    # process's
    chosen, note = host_costs_for_fresh_rows(profiled, None, 2)
    assert chosen is None and note.startswith("the fresh process measured no copy host cost")
    timeline = load_trace(folder / "step.b64.eager.json.gz")
    assert calibration_with_host_costs(timeline, chosen) is None
    measured = calibration_with_host_costs(timeline, profiled)
    assert measured is not None and measured.copy_host_measured
    assert not builtin_calibrations()["nvidia-h200"].copy_host_measured
    # and with no probe anywhere, nothing to say
    assert host_costs_for_fresh_rows(None, None, 2) == (None, "")


@pytest.mark.slow
def test_the_fresh_process_runs_the_script_again_without_a_profiler() -> None:
    # GIVEN a script with graph candidates, on CPU
    from traceinspect.collect.replay import MeasureOptions
    from traceinspect.commands.profile import fresh_timings
    from traceinspect.sanitize import make_console

    # WHEN timed in a fresh process
    fresh = fresh_timings(
        FIXTURES / "tiny_cpu_candidate.py", [], MeasureOptions(), make_console(stderr=True)
    )
    # THEN its rows come back (here unmeasured: no CUDA), one per candidate, bucket and mode,
    # and no copy host costs (no CUDA to probe)
    assert fresh is not None
    rows, host_costs = fresh
    assert host_costs is None
    assert [(r["callable"], r["bucket"], r["mode"]) for r in rows][:2] == [
        ("linear", 1, "eager"),
        ("linear", 1, "graphed"),
    ]
    assert {r["status"] for r in rows} == {"cuda_unavailable"}


def test_a_prediction_is_made_where_the_candidate_step_is_not_top_level(tmp_path: Path) -> None:
    # GIVEN the eager trace of 3 profiled steps of an H200 GRU loop (holdout3 gru_b8, run with
    # --fresh-timing): the step detector finds the 40-step cell loop inside, so `whole trace`
    # encloses the recorded `step` ranges (depth 1)
    import shutil

    from traceinspect.commands.profile import _add_predictions
    from traceinspect.sanitize import make_console

    shutil.copy(
        Path(__file__).parents[1]
        / "sample_traces/validation/fresh_timing/gru_b8.step.b8.eager.json.gz",
        tmp_path / "step.b8.eager.json.gz",
    )
    rows: list[dict[str, Any]] = [
        {"callable": "step", "bucket": 8, "mode": "eager", "trace": "step.b8.eager.json.gz",
         "in_bucket_set": True, "host_p50_ns": 1_661_200},
        {"callable": "step", "bucket": 8, "mode": "graphed", "trace": None,
         "in_bucket_set": True, "host_p50_ns": 688_600},
    ]  # fmt: skip
    # WHEN the prediction is added
    _add_predictions(rows, tmp_path, make_console(stderr=True))
    # THEN the graphed row has one: 713 µs against 688.6 µs measured in a fresh process
    # (+3.6 %; 709 µs, +3.0 %, with the input copy at 5.8 µs of host instead of 9.9; 705 µs,
    # +2.4 %, while the input copy hid the replay's latency), and the measurement lies
    # inside its range
    assert rows[1]["predicted_ns"] == pytest.approx(713_065, abs=500)
    assert rows[1]["prediction_error"] == pytest.approx(0.036, abs=0.002)
    assert rows[1]["predicted_low_ns"] < 688_600 < rows[1]["predicted_high_ns"]


def test_fresh_timing_with_nsys_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--fresh-timing applies to the PyTorch-profiler"):
        run_profile(
            FIXTURES / "echo_argv.py", [], out=tmp_path / "out", nsys=True, fresh_timing=True
        )
    assert not (tmp_path / "out").exists()  # refused before anything is written


@pytest.mark.parametrize(
    ("env", "launcher"),
    [
        ({}, ""),
        ({"WORLD_SIZE": "1", "RANK": "0"}, ""),  # a single-process "distributed" run
        ({"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "2"}, "WORLD_SIZE=4"),
        ({"TORCHELASTIC_RUN_ID": "job7"}, "TORCHELASTIC_RUN_ID=job7"),
        ({"OMPI_COMM_WORLD_SIZE": "2"}, "OMPI_COMM_WORLD_SIZE=2"),
        ({"PMI_SIZE": "8"}, "PMI_SIZE=8"),
        ({"WORLD_SIZE": "many"}, ""),  # not a number: not taken as a launch
    ],
)
def test_a_rank_of_a_distributed_launch_is_recognized(env: dict[str, str], launcher: str) -> None:
    # GIVEN the environment a launcher leaves (or none)
    from traceinspect.commands.profile import distributed_launch

    # THEN the default fresh-process timing is off exactly for a multi-process launch
    assert distributed_launch(env) == launcher


def test_fresh_timing_is_the_default_and_off_under_nsys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN run_profile with its default timing, under --nsys, where a fresh child is refused
    # when asked for explicitly
    from traceinspect.commands import profile_nsys

    seen: dict[str, Any] = {}
    monkeypatch.setattr("traceinspect.collect.nsys.find_nsys", lambda path: Path("/bin/true"))
    monkeypatch.setattr(profile_nsys, "run_profile_nsys", lambda *a, **k: seen.setdefault("ran", 0))
    # WHEN run without saying
    status = run_profile(FIXTURES / "echo_argv.py", [], out=tmp_path / "out", nsys=True)
    # THEN it is not refused: the nsys path runs (and times inside its session)
    assert status == 0 and "ran" in seen


def test_the_prediction_charges_the_static_input_copies_the_replays_made() -> None:
    # GIVEN the eager trace of an H200 two-stream pipeline whose one input is 1536 x 4096 bf16
    # (holdout3_fresh/streams_pipeline), and the graphed row the collector wrote for it
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.commands.profile import static_input_copies
    from traceinspect.parse import load_trace

    timeline = load_trace(
        Path(__file__).parents[1]
        / "sample_traces/validation/holdout3_fresh/streams_pipeline/step.b1536.eager.json.gz"
    )
    row = {"callable": "step", "input_copy_bytes": [1536 * 4096 * 2]}

    def step_estimate(copies: dict[str, list[int]] | None) -> Any:
        analysis = diagnose(timeline, eager_unprofiled_ns=903_000, input_copy_bytes=copies)
        return next(r for r in analysis.region_results if r.region.name == "step").estimate

    # WHEN estimated with the copies the replays made, with none, and without knowing
    known = step_estimate(static_input_copies(row))
    none = step_estimate(static_input_copies({"callable": "step", "input_copy_bytes": []}))
    unknown = step_estimate(static_input_copies({"callable": "step"}))
    # THEN the 12.6 MB copy (5.9 µs at the calibrated 2.1 TB/s, + 9.9 µs of host to issue it)
    # costs 11.1 µs over no copy and 1.2 µs over the one small copy assumed when unknown
    # (the replay's 4.7 µs latency after it outlasts the small copy, not the large one);
    # knowing it, the range no longer reaches down to "no copy at all", where the range of
    # the unknown case does. The rest, 104.8 µs, is the two streams' kernels run one after
    # the other (their GEMMs each fill 0.97 of the device) but for the last 10 % of each
    # GEMM's one wave, where the other stream's next kernel starts, the two slowing each
    # other: 92.8 µs of 94.1 (92.0 while they did not), + 7.7 µs of node overhead (100 ns
    # extra per node) and the completion's 4.4 µs
    assert static_input_copies({"callable": "step"}) is None
    assert none.graphed_ns == pytest.approx(109_568, abs=200)
    assert unknown.graphed_ns == pytest.approx(119_468, abs=200)
    assert known.graphed_ns == pytest.approx(120_662, abs=200)
    assert known.parts["input_copies"] == pytest.approx(15_818, abs=200)
    # (both low ends charge no copy; the range of two streams also reaches 10 % of their
    # scheduled path below each prediction, SCHEDULE_LOW_FRAC: 479 ns apart)
    assert unknown.low_ns == pytest.approx(none.low_ns, abs=1_000)
    assert known.low_ns > none.low_ns + 5_000
