"""``traceinspect profile --nsys``: the script under Nsight Systems instead of torch.profiler.

The parent (this process, which needs neither torch nor a GPU of its own) runs
``nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --cuda-graph-trace=node`` on a
child Python (``python -m traceinspect.commands.profile_nsys --child ...``) that runs the
script as ``python script.py ARGS`` would, inside the NVTX section ``traceinspect:script``;
``traceinspect.region`` marks become NVTX ranges since a tool listens. After the script the
child measures the graph candidates it registered exactly as the torch-profiler path does,
each bucket's profiled eager and graphed steps recorded as NVTX sections of the same report
(``traceinspect:<name>.b<bucket>.eager`` / ``.graphed``), and writes ``results.json``.

The parent then makes the report (``QdstrmImporter`` where nsys left only a ``.qdstrm``),
exports SQLite, analyzes the script's section, predicts each candidate's graphed time from
its eager section, and completes ``results.json``. Outputs in the output folder:
``report.nsys-rep``, ``report.sqlite``, ``results.json``, ``analysis.json``. The exit status is
the script's; 1 when the script succeeded but no report could be analyzed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Final

from rich.console import Console

from traceinspect.collect.nsys import NsysError, export_sqlite, find_nsys, record
from traceinspect.collect.replay import SECTION_PREFIX, MeasureOptions
from traceinspect.errors import TraceinspectError, UsageError
from traceinspect.model import Timeline
from traceinspect.sanitize import make_console

REPORT_STEM: Final = "report"
REPORT_NAME: Final = "report.nsys-rep"
SQLITE_NAME: Final = "report.sqlite"
RESULTS_NAME: Final = "results.json"
ANALYSIS_NAME: Final = "analysis.json"
SCRIPT_SECTION: Final = SECTION_PREFIX + "script"
TRACED_TIMINGS_NOTE: Final = (
    "graph candidates were timed inside the Nsight Systems session, whose CUDA tracing stays "
    "on and adds to every launch and replay (the torch-profiler path times them after its "
    "profiler stopped)"
)


def run_profile_nsys(
    script: Path,
    script_args: Sequence[str] = (),
    *,
    out_dir: Path,
    nsys_path: Path | None = None,
    options: MeasureOptions | None = None,
    candidates: bool = True,
    console: Console | None = None,
) -> int:
    """Record ``script`` under nsys into ``out_dir`` (already prepared); its exit status."""
    options = options or MeasureOptions()
    console = console or make_console(width=None if sys.stdout.isatty() else 120)
    err = make_console(stderr=True)
    nsys = find_nsys(nsys_path)
    child = [sys.executable, "-m", "traceinspect.commands.profile_nsys", "--child"]
    child += ["--out", str(out_dir), "--options", json.dumps(asdict(options))]
    if not candidates:
        child.append("--no-candidates")
    child += ["--", str(script), *script_args]
    err.print(f"traceinspect: recording with {nsys}", markup=False)
    run = record(nsys, out_dir / REPORT_STEM, child)
    results = _child_results(out_dir, script, script_args, run.exit_status)
    status = int(results["script"]["exit_status"])
    results["collector"] = {
        "tool": "Nsight Systems",
        "command": list(run.command),
        "nsys_exit_status": run.exit_status,
        "imported_qdstrm": run.imported_qdstrm,
    }
    if run.report is None:
        results["notes"].append("nsys left no report")
        _write(out_dir / RESULTS_NAME, results)
        raise NsysError(f"nsys left no report in {out_dir} (exit status {run.exit_status})")
    results["report"] = REPORT_NAME
    try:
        export_sqlite(nsys, run.report, out_dir / SQLITE_NAME)
        results["trace"] = SQLITE_NAME
        timeline = _load(out_dir / SQLITE_NAME)
        analyze_section(timeline, out_dir / ANALYSIS_NAME, console)
        results["analysis"] = ANALYSIS_NAME
        if results["rows"]:
            _add_predictions(results["rows"], timeline, err, results.get("host_costs"))
    except TraceinspectError as exc:
        err.print(f"traceinspect: could not analyze the report: {exc}", markup=False)
        results["notes"].append(f"report not analyzed: {exc}")
        status = status or 1
    if results["rows"]:
        from traceinspect.report.candidates import render_candidates

        render_candidates(results, console)
    _write(out_dir / RESULTS_NAME, results)
    err.print(f"traceinspect: results written to {out_dir / RESULTS_NAME}", markup=False)
    return status


def analyze_section(timeline: Timeline, json_path: Path, console: Console) -> dict[str, Any]:
    """Diagnose the script's section of the report (the whole report when it has none, as
    when recorded by hand), print it as ``analyze`` does and write its JSON."""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.analysis.window import section_bounds, window
    from traceinspect.report.json_report import report_data
    from traceinspect.report.terminal import print_terminal

    bounds = section_bounds(timeline, SCRIPT_SECTION)
    if bounds is not None:
        timeline = window(timeline, *bounds, drop_prefix=SECTION_PREFIX)
    analysis = diagnose(timeline)
    report = report_data(analysis)
    print_terminal(analysis, console)
    _write(json_path, report)
    return report


def _add_predictions(
    rows: list[dict[str, Any]],
    timeline: Timeline,
    err: Console,
    host_costs: Mapping[str, Any] | None = None,
) -> None:
    """The estimator's graphed time for each bucket, from the bucket's eager section, its
    unprofiled eager time and the copy host costs the child measured (as the torch-profiler
    path predicts from the eager trace file)."""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.analysis.window import section_bounds, window
    from traceinspect.commands.profile import (
        calibration_with_host_costs,
        fill_prediction,
        static_input_copies,
    )

    calibration = calibration_with_host_costs(timeline, host_costs)

    eager_rows = {
        (r["callable"], r["bucket"]): r
        for r in rows
        if r["mode"] == "eager" and r["trace"] is not None and r["in_bucket_set"]
    }
    for row in rows:
        eager = eager_rows.get((row["callable"], row["bucket"]))
        if row["mode"] != "graphed" or eager is None:
            continue
        bounds = section_bounds(timeline, eager["trace"])
        if bounds is None:
            continue
        try:
            section = window(timeline, *bounds, drop_prefix=SECTION_PREFIX)
            diagnosis = diagnose(
                section,
                calibration=calibration,
                eager_unprofiled_ns=eager["host_p50_ns"],
                input_copy_bytes=static_input_copies(row),
            )
        except Exception as exc:  # noqa: BLE001 - a failed prediction stays null
            err.print(f"traceinspect: no prediction from {eager['trace']}: {exc}", markup=False)
            continue
        fill_prediction(row, diagnosis)


def _load(path: Path) -> Timeline:
    from traceinspect.parse import load_trace

    return load_trace(path)


def _child_results(
    out_dir: Path, script: Path, script_args: Sequence[str], nsys_status: int
) -> dict[str, Any]:
    """The results the child wrote; where it wrote none (it died), nsys's status stands in."""
    try:
        results: dict[str, Any] = json.loads((out_dir / RESULTS_NAME).read_text())
        return results
    except (OSError, ValueError):
        pass
    return {
        "schema_version": 1,
        "script": {
            "path": str(script),
            "args": list(script_args),
            "exit_status": nsys_status,
            "error_type": None,
            "error_message": None,
            "interrupted": False,
        },
        "environment": None,
        "trace": None,
        "analysis": None,
        "candidates": [],
        "rows": [],
        "notes": ["the script's process wrote no results (it was killed, or did not start)"],
    }


def _write(path: Path, data: dict[str, Any]) -> None:
    from traceinspect.report.output import write_text

    write_text(path, json.dumps(data, indent=1), force=True)


# --------------------------------------------------------------------------- the child


def child_main(argv: Sequence[str]) -> int:
    """Inside nsys: run the script in its NVTX section, measure its candidates, write the
    results. Returns the script's exit status."""
    parser = argparse.ArgumentParser(prog="traceinspect.commands.profile_nsys")
    parser.add_argument("--child", action="store_true", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--options", default="{}")
    parser.add_argument("--no-candidates", action="store_true")
    parser.add_argument("script", type=Path)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    options = replace(MeasureOptions(**json.loads(ns.options)), nvtx_sections=True)
    script_args = _strip_dashdash(ns.args)
    return _run_child(ns.script, script_args, ns.out, options, candidates=not ns.no_candidates)


def _strip_dashdash(args: Sequence[str]) -> list[str]:
    return list(args[1:]) if args and args[0] == "--" else list(args)


def _run_child(
    script: Path,
    script_args: Sequence[str],
    out_dir: Path,
    options: MeasureOptions,
    *,
    candidates: bool,
) -> int:
    from traceinspect.collect.regions import region
    from traceinspect.collect.runner import INTERRUPTED_STATUS, run_script
    from traceinspect.collect.session import Session, activate

    err = make_console(stderr=True)
    session = Session()
    with activate(session), region(SCRIPT_SECTION):
        outcome = run_script(script, script_args)
        torch = sys.modules.get("torch")
        cuda = bool(torch is not None and _cuda_available(torch))
        if cuda:
            _synchronize(torch)
    results: dict[str, Any] = {
        "schema_version": 1,
        "script": {"path": str(script), "args": list(script_args), **outcome.to_json()},
        "environment": _environment(torch, cuda),
        "trace": None,
        "analysis": None,
        "activities": ["cuda", "nvtx"],
        "options": asdict(options),
        "candidates": [],
        "rows": [],
        "notes": [],
    }
    path = out_dir / RESULTS_NAME
    if outcome.interrupted:
        results["notes"].append("interrupted: graph candidates not measured")
        _write(path, results)
        return INTERRUPTED_STATUS
    _write(path, results)  # rewritten below; this one survives a crash while measuring
    if session.candidates and candidates:
        from traceinspect.commands.profile import measure_with_probe

        measured, host_costs = measure_with_probe(
            session.candidates, out_dir, options, cuda=cuda, err=err, torch=torch
        )
        results["candidates"] = [r.to_json() for r in measured]
        results["rows"] = [row for r in measured for row in r.rows]
        results["host_costs"] = host_costs
        if cuda:
            results["notes"].append(TRACED_TIMINGS_NOTE)
    elif session.candidates:
        results["notes"].append("graph candidates registered but not measured (--no-candidates)")
    _write(path, results)
    return outcome.exit_status


def _cuda_available(torch: Any) -> bool:
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - a script that broke CUDA still gets its results
        return False


def _synchronize(torch: Any) -> None:
    try:
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        print(f"traceinspect: CUDA synchronize failed after the script: {exc}", file=sys.stderr)


def _environment(torch: Any, cuda: bool) -> dict[str, Any] | None:
    if torch is None:
        import platform

        return {"python": platform.python_version(), "torch": None, "device": None}
    from traceinspect.commands.profile import _environment as torch_environment

    env: dict[str, Any] = torch_environment(torch, cuda)
    return env


if __name__ == "__main__":
    try:
        sys.exit(child_main(sys.argv[1:]))
    except UsageError as exc:
        print(f"traceinspect: {exc}", file=sys.stderr)
        sys.exit(2)
