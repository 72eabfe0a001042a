"""``traceinspect analyze DIR``: every rank trace in a folder, in parallel, one row per rank.

Each trace is parsed and reduced by :func:`analyze_one` in a worker process that returns
only its row (a few hundred bytes) and its step's collectives, so memory stays near
``workers × one trace``: a local process pool by default, or the workers of a dask cluster
(``--cluster``, see :mod:`traceinspect.cluster`). A file that cannot be read is listed with
its one-line error; the others are still analyzed. Where two ranks' steps or more hold
collectives, a second pass (:func:`replay_one`) reads those ranks again to replay their
steps together (:mod:`traceinspect.analysis.job`). Progress goes to stderr as ranks finish,
on a terminal.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console

from traceinspect import machine
from traceinspect.errors import TraceFormatError, TraceinspectError, UsageError
from traceinspect.files import expanded_json_bytes, stdout_is_terminal
from traceinspect.report.output import check_outputs, write_text
from traceinspect.report.ranks import ranks_report, render_ranks
from traceinspect.sanitize import make_console

if TYPE_CHECKING:
    from traceinspect.calibration import Calibration

#: Called after each rank with (ranks done, ranks in all, ranks failed so far).
Progress = Callable[[int, int, int], None]


@dataclass(frozen=True)
class RankOptions:
    """What ``analyze``'s options give every rank of a folder: a calibration profile
    (``--calibration``, read once) and measured eager times (``--eager-us``: the step's, ns,
    and regions' by name), as :func:`~traceinspect.analysis.diagnose.diagnose` takes them."""

    calibration: Calibration | None = None
    eager_unprofiled_ns: int | None = None
    eager_by_name: Mapping[str, int] = field(default_factory=dict)


#: File names taken as traces in a folder (the reader still checks the content).
TRACE_SUFFIXES: Final = (".json", ".json.gz", ".sqlite", ".nsys-rep")

#: Peak memory of analyzing one trace, as a multiple of its JSON size: 1.4× measured on a
#: 200 MB Kineto trace (bench/run.py); rounded up for the worker's own interpreter.
PEAK_RSS_PER_JSON_BYTE: Final = 2.0


def trace_files(folder: Path) -> tuple[list[Path], int]:
    """The trace files directly in ``folder`` (sorted) and how many other entries it holds."""
    try:
        entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise TraceFormatError(folder, f"cannot list folder ({exc.strerror})") from None
    traces = [p for p in entries if p.is_file() and p.name.lower().endswith(TRACE_SUFFIXES)]
    return traces, len(entries) - len(traces)


def analyze_one(path: str, options: RankOptions | None = None) -> dict[str, Any]:
    """Worker: read one trace and reduce it to its row; errors become ``{"error": ...}``.

    Runs in a worker process, so it returns only small data: its row (JSON-ready) and, for
    the job estimate, its step (:class:`~traceinspect.analysis.job.RankStep`).
    """
    from traceinspect.analysis.diagnose import diagnose
    from traceinspect.analysis.job import rank_step
    from traceinspect.analysis.summary import summarize
    from traceinspect.parse import load_trace
    from traceinspect.report.ranks import rank_row, rank_step_walls, step_diagnosis

    options = options or RankOptions()

    name = Path(path).name
    try:
        timeline = load_trace(path, workers=1)  # ranks already run in parallel
    except TraceFormatError as exc:
        return {"failure": {"file": name, "error": exc.problem}}
    except TraceinspectError as exc:
        return {"failure": {"file": name, "error": str(exc)}}
    except MemoryError:
        return {"failure": {"file": name, "error": "out of memory while reading"}}
    except Exception as exc:  # a reader bug on one rank must not lose the others
        return {"failure": {"file": name, "error": _internal(exc)}}
    try:
        # With the replay estimate (the step's saving), on this core: ranks already run in
        # parallel.
        analysis = diagnose(
            timeline,
            calibration=options.calibration,
            eager_unprofiled_ns=options.eager_unprofiled_ns,
            eager_by_name=options.eager_by_name or None,
            workers=1,
        )
    except Exception as exc:  # the row's own numbers still stand without the diagnosis
        error = {"error": _internal(exc)}
        return {"row": rank_row(timeline, summarize(timeline), name, diagnosis=error)}
    row = rank_row(
        timeline,
        analysis.summary,
        name,
        diagnosis=step_diagnosis(analysis),
        step_walls_ns=rank_step_walls(analysis),
    )
    try:
        step = rank_step(analysis)
    except Exception:  # noqa: BLE001 - the job estimate is optional; the row stands
        step = None
    return {"row": row} if step is None else {"row": row, "step": step}


def replay_one(
    task: tuple[str, str, list[int], list[list[int]]], options: RankOptions | None = None
) -> dict[str, Any]:
    """Worker, second pass of the job estimate (:mod:`traceinspect.analysis.job`): read one
    rank's trace again and replay its step (of the name given) at the occurrences given,
    their collectives at the wait-free durations given: ``{"replay": [(graphed, low, high)
    ns per occurrence]}``, or ``{"failure": ...}``; with the calibration of ``options``
    where it gives one."""
    from traceinspect.analysis.job import replay_rank_step
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    path, step, occurrences, free_ns = task
    try:
        timeline = load_trace(path, workers=1)
        calibration = (options.calibration if options else None) or calibration_for(timeline)
        replays = replay_rank_step(timeline, step, occurrences, free_ns, calibration)
    except MemoryError:
        return {"failure": {"file": Path(path).name, "error": "out of memory while reading"}}
    except Exception as exc:  # noqa: BLE001 - one rank's failure drops the job estimate only
        return {"failure": {"file": Path(path).name, "error": _internal(exc)}}
    return {"replay": replays}


def _internal(exc: BaseException) -> str:
    line = str(exc).splitlines()[0] if str(exc) else ""
    return f"internal error: {type(exc).__name__}: {line}"


def worker_count(
    files: Sequence[Path], *, cpus: int | None = None, available_bytes: int | None = None
) -> int:
    """Workers: at most one per usable core (a cgroup's CPU quota counts) and per file, and as
    many as memory (a cgroup's limit counts) holds for the largest trace (at least one)."""
    cores = cpus if cpus is not None else machine.usable_cores()
    limit = max(1, min(cores, len(files)))
    if available_bytes is None:
        available_bytes = machine.available_memory()
    if available_bytes is None or not files:
        return limit
    # Measured per file (gzip inflated at its start), not assumed: a whitespace bomb holds
    # no events, a dense trace may expand 100x.
    largest = max(expanded_json_bytes(p) for p in files)
    per_worker = int(largest * PEAK_RSS_PER_JSON_BYTE)
    if per_worker <= 0:
        return limit
    return max(1, min(limit, available_bytes // per_worker))


def analyze_files(
    files: Sequence[Path], *, workers: int, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """``analyze_one`` over ``files`` (results in file order), in ``workers`` processes."""
    return run_tasks(
        analyze_one, [str(p) for p in files], files, workers=workers, progress=progress
    )


def run_tasks(
    function: Callable[[Any], dict[str, Any]],
    tasks: Sequence[Any],
    files: Sequence[Path],
    *,
    workers: int,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """``function(task)`` for each of ``tasks`` (one per file of ``files``, which names it
    where its worker dies), results in order, in ``workers`` processes."""
    if workers <= 1 or len(tasks) <= 1:
        results = []
        for task in tasks:
            results.append(function(task))
            if progress is not None:
                progress(len(results), len(tasks), sum("failure" in r for r in results))
        return results
    methods = multiprocessing.get_all_start_methods()
    # forkserver: workers start from a clean, small process that has imported pandas once.
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if "forkserver" in methods:
        context.set_forkserver_preload(
            [
                "traceinspect.commands.ranks",
                "traceinspect.report.ranks",
                "traceinspect.parse.kineto",
            ]
        )
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures: list[Future[dict[str, Any]]] = [pool.submit(function, task) for task in tasks]
        if progress is not None:
            failed = 0
            for done, future in enumerate(as_completed(futures), start=1):
                failed += future.exception() is not None or "failure" in future.result()
                progress(done, len(tasks), failed)
        results = [_result(path, future) for path, future in zip(files, futures, strict=True)]
    return results


def _result(path: Path, future: Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except BrokenProcessPool:
        return {"failure": {"file": path.name, "error": "the worker died (killed for memory?)"}}


class _TerminalProgress:
    """``ranks: 12/64 done, 1 failed`` rewritten in place on stderr; silent off a terminal."""

    def __init__(self) -> None:
        self.shown = False
        self.label = "ranks"

    def __call__(self, done: int, total: int, failed: int) -> None:
        failures = f", {failed} failed" if failed else ""
        sys.stderr.write(f"\r{self.label}: {done}/{total} done{failures}\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def run_analyze_dir(
    folder: Path,
    *,
    json_out: str | None = None,
    html_out: Path | None = None,
    csv_dir: Path | None = None,
    perfetto_out: Path | None = None,
    force: bool = False,
    workers: int | None = None,
    cluster: str | None = None,
    quiet: bool = False,
    console: Console | None = None,
    options: RankOptions | None = None,
) -> None:
    """Analyze every trace in ``folder``; print the per-rank table, write ``--json``.

    ``cluster``: a dask scheduler address (``tcp://host:8786``) or ``"local"`` for a
    LocalCluster; None runs a local process pool of ``workers`` (default: by cores and
    memory). ``options``: what every rank is analyzed with (calibration, measured eager
    times)."""
    for option, given, what in (
        ("--html", html_out, "draws one trace"),
        ("--csv", csv_dir, "writes one trace's tables"),
        ("--perfetto", perfetto_out, "writes one trace's tables"),
    ):
        if given is not None:
            raise UsageError(f"{folder}: {option} {what}; give one rank's file, not a folder")
    files, ignored = trace_files(folder)
    if not files:
        raise TraceFormatError(
            folder, f"no trace files ({', '.join(TRACE_SUFFIXES)}) in this folder"
        )
    check_outputs([("--json", json_out)], inputs=files, force=force)
    if console is None:
        width = None if stdout_is_terminal() else 160
        console = make_console(stderr=json_out == "-", width=width)
    n_workers = workers if workers is not None else worker_count(files)
    progress = _TerminalProgress() if sys.stderr.isatty() and not quiet else None
    try:
        if cluster is not None:
            from traceinspect.cluster import connect, map_on_cluster

            memory = machine.available_memory()
            with connect(
                cluster,
                local_workers=n_workers,
                memory_per_worker=memory // n_workers if memory else None,
            ) as client:

                def run(function: Any, tasks: Sequence[Any], paths: Sequence[Path]) -> Any:
                    return map_on_cluster(
                        function, paths, client=client, progress=progress, tasks=tasks
                    )

                first = partial(analyze_one, options=options)
                results = run(first, [os.path.abspath(p) for p in files], files)
                together = _replayed_together(files, results, run, progress, options)
        else:

            def run(function: Any, tasks: Sequence[Any], paths: Sequence[Path]) -> Any:
                return run_tasks(function, tasks, paths, workers=n_workers, progress=progress)

            results = run(partial(analyze_one, options=options), [str(p) for p in files], files)
            together = _replayed_together(files, results, run, progress, options)
    finally:
        if progress is not None:
            progress.clear()
    rows = [r["row"] for r in results if "row" in r]
    failures = [r["failure"] for r in results if "failure" in r]
    data = ranks_report(rows, failures, folder=str(folder), ignored_files=ignored)
    data["replayed_together"], note = together
    if note:
        data["notes"].append(note)
    render_ranks(data, console)
    if json_out is not None:
        write_text(json_out, json.dumps(data, indent=1), force=force)
    if not rows:
        raise TraceFormatError(folder, f"none of the {len(files)} trace files could be read")


def _replayed_together(
    files: Sequence[Path],
    results: Sequence[Mapping[str, Any]],
    run: Callable[[Any, Sequence[Any], Sequence[Path]], list[dict[str, Any]]],
    progress: _TerminalProgress | None,
    options: RankOptions | None = None,
) -> tuple[dict[str, Any] | None, str | None]:
    """The ranks' steps replayed together (:mod:`traceinspect.analysis.job`), JSON-ready,
    where at least two ranks' steps run collectives: the second pass (:func:`replay_one`)
    over those ranks' files through ``run``. None otherwise, with a note where some rank
    (read or not) has no such step, or the second pass failed on one."""
    from traceinspect.analysis.job import plan_ranks_job, ranks_job_estimate

    if sum("step" in r for r in results) < 2:
        return None, None
    missing = [
        r["row"]["file"] if "row" in r else r["failure"]["file"] for r in results if "step" not in r
    ]
    if missing:
        # A job runs at its slowest rank's pace: without one rank's step (or its trace), the
        # others' collectives' wait-free times and the job's step would both be guessed.
        shown = ", ".join(missing[:3]) + (
            f" (+{len(missing) - 3} more)" if len(missing) > 3 else ""
        )
        return None, (
            f"the ranks' steps replayed together: not estimated ({shown}: no step estimate "
            "with collective kernels)"
        )
    # From here on, every rank was read and has its step.
    steps = [r["step"] for r in results]
    try:
        plan = plan_ranks_job(steps)
    except Exception as exc:  # noqa: BLE001 - optional: the ranks' table stands without it
        return None, f"the ranks' steps replayed together: not estimated ({_internal(exc)})"
    if plan is None:
        return None, (
            "the ranks' steps replayed together: not estimated (fewer than 2 steps pair up "
            "across the ranks: they traced different numbers of steps at times that do not "
            "overlap — other jobs, or clocks apart)"
        )
    # Absolute: a cluster's workers read the traces by path.
    tasks = [
        (str(Path(p).absolute()), s.name, *plan.task(n))
        for n, (p, s) in enumerate(zip(files, steps, strict=True))
    ]
    if progress is not None:
        progress.label = "ranks replayed together"
    answers = run(partial(replay_one, options=options), tasks, files)
    failed = next((a["failure"] for a in answers if "replay" not in a), None)
    if failed is not None:
        return None, (
            f"the ranks' steps replayed together: not estimated ({failed['file']}: "
            f"{failed['error']})"
        )
    ranks = [r["row"]["rank"] if r["row"]["rank"] is not None else i for i, r in enumerate(results)]
    try:
        job = ranks_job_estimate(ranks, steps, plan, [a["replay"] for a in answers])
    except Exception as exc:  # noqa: BLE001 - as above
        return None, f"the ranks' steps replayed together: not estimated ({_internal(exc)})"
    return job.to_json(), None
