"""``traceinspect profile``: run a script under the PyTorch profiler, measure its graph
candidates, analyze the trace.

Outputs, in ``--out`` (default ``traceinspect-out/<script stem>/``), never overwritten
without ``--force``:

``trace.json.gz``
    the script's run (CPU and CUDA activity; CPU only without CUDA). Exported even when the
    script raises, exits or is interrupted.
``<name>.b<bucket>.eager.json.gz`` / ``.graphed.json.gz``
    a few profiled steps of each graph candidate, per bucket, eager and replayed.
``results.json``
    how the script ended, one row per (candidate, bucket, mode) with the unprofiled
    measurements (:data:`~traceinspect.collect.replay.ROW_FIELDS`), request-mix estimates and
    the recommended bucket set. Times are integer ns, memory bytes, unknowns ``null``.

The exit status is the script's own; when the script succeeded but its trace could not be
analyzed, it is 1.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console

from traceinspect.analysis.decision import decide_candidates
from traceinspect.analysis.result import TraceAnalysis
from traceinspect.collect.candidates import GraphCandidate
from traceinspect.collect.failures import first_error
from traceinspect.collect.host_probe import combine, measure_copy_host, valid_host_costs
from traceinspect.collect.replay import (
    TIMING_FIELDS,
    TIMING_ORDER,
    CandidateResult,
    MeasureOptions,
    export_trace,
    measure_candidate,
    profiler,
    start_profiler,
    unavailable_result,
)
from traceinspect.collect.runner import ScriptOutcome, run_script
from traceinspect.collect.session import Session, activate
from traceinspect.errors import TraceinspectError, UsageError
from traceinspect.files import stdout_is_terminal
from traceinspect.report.candidates import render_candidates
from traceinspect.report.decision import render_decisions
from traceinspect.report.output import write_text
from traceinspect.sanitize import make_console

if TYPE_CHECKING:
    from traceinspect.calibration import Calibration
    from traceinspect.model import Timeline

SCHEMA_VERSION: Final = 1
TRACE_NAME: Final = "trace.json.gz"
RESULTS_NAME: Final = "results.json"
ANALYSIS_NAME: Final = "analysis.json"
DEFAULT_OUT_ROOT: Final = Path("traceinspect-out")
#: Files ``--force`` may replace in an existing output folder (nothing else is touched).
OUTPUT_PATTERNS: Final = (
    TRACE_NAME,
    RESULTS_NAME,
    ANALYSIS_NAME,
    "*.eager.json.gz",
    "*.graphed.json.gz",
    "report.nsys-rep",
    "report.qdstrm",
    "report.sqlite",
)


def run_profile(
    script: Path,
    script_args: Sequence[str] = (),
    *,
    out: Path | None = None,
    force: bool = False,
    options: MeasureOptions | None = None,
    candidates: bool = True,
    record_shapes: bool = True,
    with_stack: bool = True,
    console: Console | None = None,
    nsys: bool = False,
    nsys_path: Path | None = None,
    fresh_timing: bool | None = None,
) -> int:
    """Run ``script`` with ``script_args`` under the profiler (Nsight Systems with ``nsys``);
    return its exit status. With ``fresh_timing`` the candidates are timed again in a child
    process that never runs a profiler (:func:`fresh_timings`); ``None`` (the default) does so
    unless ``nsys`` or the script was launched as one rank of a distributed job
    (:func:`distributed_launch`), whose second run would rendezvous again."""
    options = options or MeasureOptions()
    console = console or make_console(width=None if stdout_is_terminal() else 120)
    err = make_console(stderr=True)
    if not script.is_file():
        raise UsageError(f"{script}: no such script")
    out_dir = DEFAULT_OUT_ROOT / script.stem if out is None else out
    in_process_reason = ""
    if fresh_timing is None:
        launcher = distributed_launch(os.environ)
        if launcher:
            in_process_reason = (
                f"launched as a rank of a distributed job ({launcher}): a second run would "
                "rendezvous again, so the candidates are timed in the profiled process "
                "(--fresh-timing forces a fresh process)"
            )
        fresh_timing = not launcher and not nsys and nsys_path is None
    if fresh_timing and (nsys or nsys_path is not None):
        raise UsageError(
            "--fresh-timing applies to the PyTorch-profiler recording; with --nsys the "
            "candidates are timed inside the Nsight Systems session (results.json says so)"
        )
    if nsys or nsys_path is not None:
        from traceinspect.collect.nsys import find_nsys
        from traceinspect.commands.profile_nsys import run_profile_nsys

        find_nsys(nsys_path)  # a missing nsys is said before anything is written
        prepare_out_dir(out_dir, force=force)
        return run_profile_nsys(
            script,
            script_args,
            out_dir=out_dir,
            nsys_path=nsys_path,
            options=options,
            candidates=candidates,
            console=console,
        )
    prepare_out_dir(out_dir, force=force)
    torch = _import_torch()
    cuda = bool(torch.cuda.is_available())
    if not cuda:
        err.print(
            "traceinspect: CUDA is not available: recording CPU activity only; "
            "graph candidates are listed but not measured"
        )
    session = Session()
    trace_path = out_dir / TRACE_NAME
    outcome = record_script(
        script,
        script_args,
        trace_path,
        session,
        cuda=cuda,
        record_shapes=record_shapes,
        with_stack=with_stack,
    )
    err.print(f"traceinspect: trace written to {trace_path}")
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "script": {"path": str(script), "args": list(script_args), **outcome.to_json()},
        "environment": _environment(torch, cuda),
        "trace": TRACE_NAME,
        "analysis": None,
        "activities": ["cpu", "cuda"] if cuda else ["cpu"],
        "options": {
            **asdict(options),
            "record_shapes": record_shapes,
            "with_stack": with_stack,
            # Every timing round ran before the candidates' own profiled traces (a profiler
            # session can slow the rounds after it): see collect/replay.py.
            "timing_order": TIMING_ORDER,
            "timing_process": "profiled",
        },
        "candidates": [],
        "rows": [],
        "decisions": [],
        "notes": [],
    }
    status = outcome.exit_status
    if outcome.interrupted:
        results["notes"].append("interrupted: graph candidates not measured, trace not analyzed")
        _write_results(out_dir, results)
        return outcome.exit_status
    _write_results(out_dir, results)  # rewritten below; this one survives a crash while measuring
    if session.candidates and candidates:
        measured, host_costs = measure_with_probe(
            session.candidates, out_dir, options, cuda=cuda, err=err, torch=torch
        )
        if in_process_reason and cuda:
            results["notes"].append(in_process_reason)
        results["candidates"] = [r.to_json() for r in measured]
        results["rows"] = [row for r in measured for row in r.rows]
        results["host_costs"] = host_costs
        if fresh_timing and cuda:
            fresh = fresh_timings(script, script_args, options, err)
            if fresh is None:
                results["notes"].append("fresh-process timing failed: timings are in-process")
            else:
                fresh_rows, fresh_costs = fresh
                merged = merge_fresh_timings(results["rows"], fresh_rows)
                results["options"]["timing_process"] = "fresh"
                results["notes"].append(
                    f"{merged} rows timed in a fresh process (the script run again without a "
                    "profiler); `in_profiled_process` keeps the first process's timings"
                )
                chosen, note = host_costs_for_fresh_rows(host_costs, fresh_costs, merged)
                if chosen is not host_costs:
                    results["host_costs"] = chosen
                    results["host_costs_in_profiled_process"] = host_costs
                if note:
                    results["notes"].append(note)
        _add_predictions(results["rows"], out_dir, err, host_costs=results["host_costs"])
    elif session.candidates:
        results["notes"].append("graph candidates registered but not measured (--no-candidates)")
    try:
        analyze_trace(trace_path, out_dir / ANALYSIS_NAME)
        results["analysis"] = ANALYSIS_NAME
    except (TraceinspectError, ImportError) as exc:
        err.print(f"traceinspect: could not analyze {trace_path}: {exc}")
        results["notes"].append(f"trace not analyzed: {exc}")
        status = status or 1
    if results["candidates"]:
        results["decisions"] = [d.to_json() for d in decide_candidates(results)]
    if results["rows"]:
        render_candidates(results, console)
        render_decisions(results.get("decisions", []), console)
    _write_results(out_dir, results)
    err.print(f"traceinspect: results written to {out_dir / RESULTS_NAME}")
    return status


def host_costs_for_fresh_rows(
    profiled: dict[str, Any] | None, fresh: dict[str, Any] | None, merged: int
) -> tuple[dict[str, Any] | None, str]:
    """The copy host costs that go with the rows once ``merged`` of them were replaced by a
    fresh process's timings, and a note where that changes what the predictions use.

    The copy cost belongs to the process that timed the rows: the fresh one's probe where it
    measured one; where it measured none, no measured cost (the prediction takes the built-in
    one), since the profiled process's is another process's (on one H200, 6.3 µs per copy in
    one process and 10.4 µs in the next). Where no row was replaced, the profiled process's."""
    if merged <= 0:
        return profiled, ""
    if fresh is None and valid_host_costs(profiled) is not None:
        return None, (
            "the fresh process measured no copy host cost: its rows are predicted with the "
            "calibration's (the profiled process's is kept as `host_costs_in_profiled_process`)"
        )
    return fresh, ""


def fresh_timings(
    script: Path, script_args: Sequence[str], options: MeasureOptions, err: Console
) -> tuple[list[dict[str, Any]], dict[str, Any] | None] | None:
    """The candidates' rows timed in a child Python that runs the script again and never
    starts a profiler (no traces): a profiler session leaves a process's later launches and
    replays slower (``sample_traces/validation/replay_under_profiler.holdout3.json``: 669 µs
    in a fresh process, 943 µs in the profiled one, for one graph on one H200); with the
    copy host costs the child measured (:func:`measure_with_probe`). ``None`` when the child
    wrote no rows."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="traceinspect-fresh-") as tmp:
        child = [sys.executable, "-m", "traceinspect.commands.profile_nsys", "--child"]
        child += ["--out", tmp, "--options", json.dumps(asdict(replace(options, traces=False)))]
        child += ["--", str(script), *script_args]
        err.print("traceinspect: timing the candidates again in a fresh process", markup=False)
        try:
            subprocess.run(child, check=False, stdin=subprocess.DEVNULL)
            data = json.loads((Path(tmp) / RESULTS_NAME).read_text())
        except (OSError, ValueError) as exc:
            err.print(f"traceinspect: fresh-process timing failed: {exc}", markup=False)
            return None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        return None
    costs = data.get("host_costs")
    return rows, costs if valid_host_costs(costs) is not None else None


#: Environment variables that mark a process as one rank of a distributed launch (torchrun /
#: torch.distributed.launch, Open MPI, MPICH / srun through PMI), with the value that
#: says "more than one process" (``None``: set at all).
DISTRIBUTED_ENV = (
    ("TORCHELASTIC_RUN_ID", None),
    ("WORLD_SIZE", 1),
    ("OMPI_COMM_WORLD_SIZE", 1),
    ("PMI_SIZE", 1),
)


def distributed_launch(env: Mapping[str, str]) -> str:
    """The variable (``NAME=value``) saying this process is one rank of a multi-process job,
    or ``""``."""
    for name, single in DISTRIBUTED_ENV:
        value = env.get(name)
        if value is None or value == "":
            continue
        if single is None:
            return f"{name}={value}"
        try:
            if int(value) > single:
                return f"{name}={value}"
        except ValueError:
            continue
    return ""


def merge_fresh_timings(rows: list[dict[str, Any]], fresh: Sequence[dict[str, Any]]) -> int:
    """Put each fresh row's timings into the row of the same candidate, bucket and mode (both
    ok), keeping the profiled process's under ``in_profiled_process``; how many merged."""
    by_key = {
        (f.get("callable"), f.get("bucket"), f.get("mode")): f
        for f in fresh
        if f.get("status") in ("ok", "incorrect")
    }
    merged = 0
    for row in rows:
        found = by_key.get((row.get("callable"), row.get("bucket"), row.get("mode")))
        if found is None or row.get("status") not in ("ok", "incorrect"):
            continue
        row["in_profiled_process"] = {k: row.get(k) for k in TIMING_FIELDS}
        for key in TIMING_FIELDS:
            row[key] = found.get(key)
        merged += 1
    return merged


def prepare_out_dir(out_dir: Path, *, force: bool) -> None:
    """Create ``out_dir``; refuse one holding files unless ``force``, then clear only ours."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"{out_dir}: exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not force:
            raise UsageError(f"{out_dir}: already holds outputs (use --force to overwrite)")
        for pattern in OUTPUT_PATTERNS:
            for old in out_dir.glob(pattern):
                if old.is_file():
                    old.unlink()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{out_dir}: cannot create ({exc.strerror})") from None


def record_script(
    script: Path,
    script_args: Sequence[str],
    trace_path: Path,
    session: Session,
    *,
    cuda: bool,
    record_shapes: bool = True,
    with_stack: bool = True,
) -> ScriptOutcome:
    """Run the script under ``torch.profiler`` with ``session`` active; the trace is exported
    whatever way the script ends."""
    torch = _import_torch()
    activity = torch.profiler.ProfilerActivity
    activities = [activity.CPU, activity.CUDA] if cuda else [activity.CPU]
    # Python stacks name the source line of a detected step's loop; they cost host time per
    # Python call (docs/model.md), which traceinspect's deflation does not remove.
    prof = profiler(torch, activities, record_shapes=record_shapes, with_stack=with_stack)
    with activate(session):
        start_profiler(prof)
        try:
            with refuse_second_profiler(torch):
                outcome = run_script(script, script_args)
        finally:
            if cuda:
                _synchronize(torch)
            prof.stop()
            export_trace(prof, trace_path)
    return outcome


#: Raised in the script when it starts a profiler of its own while ours records: torch
#: has one profiler per process and crashes (SIGSEGV) when a second one stops.
SECOND_PROFILER_MESSAGE: Final = (
    "traceinspect profile already records this process with torch.profiler, and torch "
    "cannot run a second profiler beside it: remove the script's own profiler, or run the "
    "script without `traceinspect profile`"
)


@contextlib.contextmanager
def refuse_second_profiler(torch: Any) -> Iterator[None]:
    """While the block runs, a profiler the script starts (``torch.profiler.profile`` or
    ``torch.autograd.profiler.profile``, both through ``_prepare_trace``) raises
    :data:`SECOND_PROFILER_MESSAGE` in the script instead of crashing the process."""
    legacy = getattr(getattr(torch.autograd, "profiler", None), "profile", None)
    original = getattr(legacy, "_prepare_trace", None)
    if legacy is None or original is None:
        yield
        return

    def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
        print(f"traceinspect: {SECOND_PROFILER_MESSAGE}", file=sys.stderr)
        raise RuntimeError(SECOND_PROFILER_MESSAGE)

    legacy._prepare_trace = refuse
    try:
        yield
    finally:
        legacy._prepare_trace = original


def analyze_trace(trace_path: Path, json_path: Path) -> None:
    """Analyze the recorded trace as ``traceinspect analyze TRACE --json JSON`` would, printing
    its report and writing its JSON beside the trace."""
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.parse import load_trace
    from traceinspect.report.json_report import render_json
    from traceinspect.report.layout import render_width
    from traceinspect.report.terminal import print_terminal

    analysis = diagnose(load_trace(trace_path))
    print_terminal(analysis, make_console(width=render_width(sys.stdout)))
    write_text(json_path, render_json(analysis), force=True)


def _measure_all(
    registered: Sequence[GraphCandidate],
    out_dir: Path,
    options: MeasureOptions,
    *,
    cuda: bool,
    err: Console,
    before_graphed_round: Callable[[], None] | None = None,
) -> list[CandidateResult]:
    results = []
    log: Callable[[str], None] = lambda line: err.print(line, markup=False)  # noqa: E731
    for candidate in registered:
        if not cuda:
            results.append(unavailable_result(candidate, "CUDA not available"))
            continue
        err.print(f"traceinspect: measuring graph candidate {candidate.name!r}", markup=False)
        try:
            results.append(
                measure_candidate(
                    candidate, out_dir, options, log, before_graphed_round=before_graphed_round
                )
            )
        except KeyboardInterrupt:
            err.print("traceinspect: interrupted; remaining candidates not measured")
            break
        except Exception as exc:  # noqa: BLE001 - one candidate's failure ends only it
            error = f"{type(exc).__name__}: {exc}"
            err.print(f"traceinspect: candidate {candidate.name!r} failed: {error}", markup=False)
            failed = unavailable_result(candidate, error)
            failed.status = "error"
            for row in failed.rows:
                row["status"] = "error"
                row["failure"] = {"phase": "setup", "kind": "error", "message": error}
            results.append(failed)
    return results


def measure_with_probe(
    registered: Sequence[GraphCandidate],
    out_dir: Path,
    options: MeasureOptions,
    *,
    cuda: bool,
    err: Console,
    torch: Any,
) -> tuple[list[CandidateResult], dict[str, Any] | None]:
    """:func:`_measure_all`, with this machine's copy host cost probed before the
    candidates, before each timing round of a graphed step and after the candidates
    (:mod:`traceinspect.collect.host_probe`: within one process on the H200 the same probe
    read 6.5 µs before the candidates and 9.8 µs after them; ``None`` without CUDA or where
    the probe failed)."""
    if not cuda:
        return _measure_all(registered, out_dir, options, cuda=cuda, err=err), None
    probes: list[dict[str, Any]] = []
    failed: list[BaseException] = []

    def probe() -> None:
        if failed:
            return
        try:
            probes.append(measure_copy_host(torch))
        except Exception as exc:  # noqa: BLE001 - the prediction falls back on the calibration
            failed.append(exc)
            err.print(f"traceinspect: copy host probe failed: {first_error(exc)}", markup=False)

    probe()
    measured = _measure_all(
        registered, out_dir, options, cuda=cuda, err=err, before_graphed_round=probe
    )
    probe()
    return measured, combine(probes)


def calibration_with_host_costs(
    timeline: Timeline, host_costs: Mapping[str, Any] | None
) -> Calibration | None:
    """The calibration an analysis of ``timeline`` uses, with the copy host costs measured on
    this machine where ``host_costs`` holds them; ``None`` (the built-in choice) otherwise."""
    costs = valid_host_costs(host_costs)
    if costs is None:
        return None
    from traceinspect.calibration import calibration_for

    try:
        return calibration_for(timeline).with_host_costs(*costs)
    except TraceinspectError:
        return None


def _add_predictions(
    rows: list[dict[str, Any]],
    out_dir: Path,
    err: Console,
    *,
    host_costs: Mapping[str, Any] | None = None,
) -> None:
    """Put the estimator's prediction of the graphed step, made from the bucket's eager trace,
    its unprofiled eager time and the copy host cost measured with it (``host_costs``),
    beside the measured graphed time.

    The prediction stays ``null`` when the estimator is unavailable or cannot answer.
    """
    try:
        from traceinspect.analysis.diagnose import diagnose
    except ImportError:
        return
    from traceinspect.parse import load_trace

    eager_rows = {
        (r["callable"], r["bucket"]): r
        for r in rows
        if r["mode"] == "eager" and r["trace"] is not None and r["in_bucket_set"]
    }
    for row in rows:
        eager = eager_rows.get((row["callable"], row["bucket"]))
        if row["mode"] != "graphed" or eager is None:
            continue
        try:
            timeline = load_trace(out_dir / eager["trace"])
            diagnosis = diagnose(
                timeline,
                calibration=calibration_with_host_costs(timeline, host_costs),
                eager_unprofiled_ns=eager["host_p50_ns"],
                input_copy_bytes=static_input_copies(row),
            )
        except Exception as exc:  # noqa: BLE001 - a failed prediction stays null
            err.print(f"traceinspect: no prediction from {eager['trace']}: {exc}", markup=False)
            continue
        fill_prediction(row, diagnosis)


def static_input_copies(row: Mapping[str, Any]) -> dict[str, list[int]] | None:
    """The copies into the static inputs each replay of a graphed row made (bytes), keyed by
    the callable's name as ``diagnose(input_copy_bytes=...)`` takes them; ``None`` for rows
    recorded before they were kept."""
    copies = row.get("input_copy_bytes")
    if not isinstance(copies, list):
        return None
    return {str(row["callable"]): [int(b) for b in copies]}


def fill_prediction(row: dict[str, Any], diagnosis: TraceAnalysis) -> None:
    """A graphed row's prediction from the analysis of its candidate's eager trace: the
    estimate of the outermost region named after the callable (the row keeps its nulls when
    there is none). Not necessarily at depth 0: where the step detector finds a repeat in
    the trace (a cell loop inside three recorded steps), ``whole trace`` encloses it."""
    named = [d for d in diagnosis.region_results if d.region.name == row["callable"]]
    estimate = min(named, key=lambda d: d.region.depth).estimate if named else None
    if estimate is None:
        return
    row["predicted_ns"] = int(estimate.graphed_ns)
    row["predicted_low_ns"] = int(estimate.low_ns)
    row["predicted_high_ns"] = int(estimate.high_ns)
    if row["host_p50_ns"]:
        row["prediction_error"] = row["predicted_ns"] / row["host_p50_ns"] - 1


def _write_results(out_dir: Path, results: dict[str, Any]) -> None:
    write_text(out_dir / RESULTS_NAME, json.dumps(results, indent=1), force=True)


def _environment(torch: Any, cuda: bool) -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "torch": str(torch.__version__),
        "cuda_runtime": torch.version.cuda,
        "device": None,
        "device_capability": None,
    }
    if cuda:
        env["device"] = torch.cuda.get_device_name()
        env["device_capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
    return env


def _synchronize(torch: Any) -> None:
    # Let queued GPU work land in the trace; a script that broke its CUDA context must not
    # stop the export.
    try:
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001
        print(f"traceinspect: CUDA synchronize failed after the script: {exc}", file=sys.stderr)


def _import_torch() -> Any:
    try:
        return importlib.import_module("torch")
    except ImportError:
        raise UsageError(
            "`traceinspect profile` needs PyTorch: pip install 'traceinspect[collect]'"
        ) from None
