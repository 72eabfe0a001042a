"""Command line: parse arguments, call the command, map errors to exit codes. Nothing else.

Exit codes: 0 success, 1 analysis failure, 2 bad input or usage, 130 interrupted;
``profile`` returns the profiled script's own status.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from traceinspect.errors import TraceinspectError

#: What help shows for an option's value, by the type typer would show (``<path>``): words
#: a reader knows. A flag shows none.
_METAVARS = {
    "<path>": "PATH",
    "<str>": "TEXT",
    "<int>": "N",
    "<float>": "NUMBER",
    "<list[str]>": "TEXT",
    "<int range>": "N",
    "<float range>": "NUMBER",
    "<bool>": "",
}


def _plain_metavars(params: list[Any]) -> None:
    """Name the options' and arguments' values in words (PATH, N) where typer would show
    their types."""
    for param in params:
        if isinstance(param, typer.core.TyperArgument):
            # A metavar would replace the argument's name in the usage line: its type column
            # alone says the word.
            word = _METAVARS.get(str(param.display_type(ctx=None)))  # type: ignore[arg-type]
            if word is not None:
                param.__dict__["display_type_rich"] = _shows(word)  # this instance's only
            continue
        if not isinstance(param, typer.core.TyperOption) or param.metavar is not None:
            continue
        shown = "<bool>" if param.is_flag else param.display_type_rich(ctx=None)  # type: ignore[arg-type]
        if shown in _METAVARS:
            param.metavar = _METAVARS[shown]


def _shows(word: str) -> Callable[[Any], str]:
    """A ``display_type_rich`` that shows ``word``."""

    def display(ctx: Any) -> str:
        return word

    return display


class _PlainMetavars:
    """Help that names option values in words, not types, for a command or the group."""

    def get_params(self, ctx: Any) -> list[Any]:  # typer's click is its own, private
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        _plain_metavars(params)
        return params


class _Command(_PlainMetavars, typer.core.TyperCommand):
    pass


class _Group(_PlainMetavars, typer.core.TyperGroup):
    pass


app = typer.Typer(
    cls=_Group,
    name="traceinspect",
    help=(
        "Is your PyTorch workload launch-bound, and what would CUDA Graph replay save? "
        "Answers from a profiler trace."
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("traceinspect")
        except PackageNotFoundError:  # running from a source tree that was never installed
            number = "unknown"
        print(f"traceinspect {number}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Print the version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Is your PyTorch workload launch-bound, and what would CUDA Graph replay save?"""


QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="No progress display on stderr (it only shows on a terminal)."
    ),
]


CalibrationOpt = Annotated[
    Path | None,
    typer.Option(help="Calibration file from `traceinspect calibrate` (default: built-in)."),
]
EagerUsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--eager-us",
        help="Unprofiled eager time, µs (from `profile`), used for savings: a bare number for "
        "the step, NAME=US for the region NAME; repeatable.",
        show_default=False,
    ),
]

TraceArg = Annotated[
    Path,
    typer.Argument(
        help="Kineto trace (.json / .json.gz), Nsight Systems export (.sqlite / .nsys-rep), "
        "or a directory of per-rank traces.",
        show_default=False,
    ),
]


@app.command(cls=_Command)
def analyze(
    trace: TraceArg,
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write the machine-readable report here ('-' for stdout)."),
    ] = None,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML timeline here.")
    ] = None,
    calibration: CalibrationOpt = None,
    eager_us: EagerUsOpt = None,
    csv_dir: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Write regions.csv, kernels.csv, gaps.csv (one row per idle gap) and "
            "processes.csv (one row per process, for a trace of several) into this folder.",
        ),
    ] = None,
    perfetto_out: Annotated[
        Path | None,
        typer.Option(
            "--perfetto",
            help="Write the trace plus the diagnosis (regions, idle gaps by cause, GPU busy) "
            "as Chrome trace JSON for Perfetto UI / chrome://tracing.",
        ),
    ] = None,
    top: Annotated[int, typer.Option(help="How many kernels to list.")] = 10,
    force: Annotated[bool, typer.Option(help="Overwrite existing output files.")] = False,
    quiet: QuietOpt = False,
    cluster: Annotated[
        str | None,
        typer.Option(
            help="For a folder of rank traces: run the ranks on this dask scheduler "
            "(tcp://host:8786), or 'local' for a local dask cluster. Needs the cluster "
            "extra: pip install 'traceinspect\\[cluster]'.",
        ),
    ] = None,
) -> None:
    """Diagnose a trace: launch-bound or compute-bound, per region, and what replay would save."""
    from traceinspect.commands.analyze import run_analyze

    run_analyze(
        trace,
        json_out=json_out,
        html_out=html_out,
        calibration=calibration,
        eager_us=eager_us,
        top=top,
        force=force,
        quiet=quiet,
        cluster=cluster,
        csv_dir=csv_dir,
        perfetto_out=perfetto_out,
    )


@app.command(cls=_Command)
def profile(
    script: Annotated[
        Path, typer.Argument(help="The Python script to run, as `python SCRIPT ARGS`.")
    ],
    script_args: Annotated[
        list[str] | None,
        typer.Argument(
            help="Arguments for the script; put them after `--` when they start with `-`.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output folder (default: traceinspect-out/<script stem>/)."
        ),
    ] = None,
    force: Annotated[bool, typer.Option(help="Overwrite outputs of an earlier run.")] = False,
    candidates: Annotated[
        bool, typer.Option(help="Measure the graph candidates the script registers.")
    ] = True,
    iters: Annotated[
        int, typer.Option(min=1, help="Timed steps per candidate, bucket and mode.")
    ] = 100,
    warmup: Annotated[int, typer.Option(min=1, help="Warm-up calls before timing/capture.")] = 3,
    profile_steps: Annotated[
        int, typer.Option(min=1, help="Steps recorded in each candidate's eager/graphed trace.")
    ] = 5,
    mix_requests: Annotated[
        int, typer.Option(min=1, help="Requests replayed from a candidate's request mix.")
    ] = 200,
    repeats: Annotated[
        int,
        typer.Option(
            min=1,
            help="Timing rounds per candidate bucket, eager and graphed interleaved in this "
            "process; results give each round's p50 and their spread.",
        ),
    ] = 1,
    record_shapes: Annotated[
        bool, typer.Option(help="Record operator input shapes in the script's trace.")
    ] = True,
    stacks: Annotated[
        bool,
        typer.Option(
            help="Record Python stacks in the script's trace (names the loop of a detected "
            "step; --no-stacks when the script runs much Python per launch)."
        ),
    ] = True,
    candidate_traces: Annotated[
        bool, typer.Option(help="Record profiled eager/graphed traces of each candidate bucket.")
    ] = True,
    fresh_timing: Annotated[
        bool | None,
        typer.Option(
            help="Time the candidates again in a fresh process that never ran a profiler "
            "(the script runs a second time): a profiler session leaves its process's "
            "replays and launches slower. Its timings replace the profiled process's, which "
            "are kept as evidence. Default: on, except with --nsys and for a rank of a "
            "distributed launch (WORLD_SIZE > 1, torchrun), whose second run would "
            "rendezvous again.",
            show_default=False,
        ),
    ] = None,
    nsys: Annotated[
        bool,
        typer.Option(
            "--nsys",
            help="Record with Nsight Systems (nsys profile) instead of the PyTorch profiler: "
            "report.nsys-rep and report.sqlite in the output folder.",
        ),
    ] = False,
    nsys_path: Annotated[
        Path | None,
        typer.Option("--nsys-path", help="The nsys binary (or its folder); implies --nsys."),
    ] = None,
) -> None:
    """Run a script under the PyTorch profiler, measure its CUDA graph candidates, diagnose.

    The exit status is the script's own.
    """
    from traceinspect.collect.replay import MeasureOptions
    from traceinspect.commands.profile import run_profile

    options = MeasureOptions(
        iters=iters,
        warmup=warmup,
        profile_steps=profile_steps,
        mix_requests=mix_requests,
        traces=candidate_traces,
        repeats=repeats,
    )
    status = run_profile(
        script,
        script_args or [],
        out=out,
        force=force,
        options=options,
        candidates=candidates,
        record_shapes=record_shapes,
        nsys=nsys,
        nsys_path=nsys_path,
        with_stack=stacks,
        fresh_timing=fresh_timing,
    )
    raise typer.Exit(status)


@app.command(cls=_Command)
def diff(
    eager_trace: Annotated[
        Path, typer.Argument(help="Trace of the eager workload.", show_default=False)
    ],
    graphed_trace: Annotated[
        Path,
        typer.Argument(
            help="Trace of the same workload replayed as CUDA graphs.", show_default=False
        ),
    ],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write the machine-readable diff here ('-' for stdout)."),
    ] = None,
    calibration: CalibrationOpt = None,
    eager_us: EagerUsOpt = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing --json file.")] = False,
    full_names: Annotated[
        bool,
        typer.Option(
            "--full-names", help="Show kernel and region names whole (default: fit the terminal)."
        ),
    ] = False,
    quiet: QuietOpt = False,
) -> None:
    """Compare an eager trace with a graphed one, per region, against the prediction.

    Warns when the two traces do not look like one workload (their kernel mixes differ)."""
    from traceinspect.commands.diff import run_diff

    run_diff(
        eager_trace,
        graphed_trace,
        json_out=json_out,
        calibration=calibration,
        eager_us=eager_us,
        force=force,
        full_names=full_names,
        quiet=quiet,
    )


@app.command(cls=_Command)
def calibrate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the profile (JSON).")],
    device: Annotated[int, typer.Option(help="CUDA device index to measure.")] = 0,
    quick: Annotated[bool, typer.Option(help="Fewer repetitions and sizes (~4× faster).")] = False,
    force: Annotated[bool, typer.Option(help="Overwrite an existing profile.")] = False,
) -> None:
    """Measure this GPU's launch, replay and sync costs into a calibration profile."""
    from traceinspect.commands.calibrate import run_calibrate

    run_calibrate(out, device=device, quick=quick, force=force)


def main(argv: list[str] | None = None) -> int:
    """Entry point for ``traceinspect`` and ``python -m traceinspect``; returns the exit code.

    Usage errors are reported by typer itself (exit 2); our own errors become one line on
    stderr with their exit code, never a traceback. SIGTERM and SIGHUP unwind like Ctrl-C
    (temporary files removed) and exit with 128 + the signal's number.
    """
    from traceinspect.files import install_signal_handlers, restore_signal_handlers

    previous = install_signal_handlers()
    try:
        return _run(sys.argv[1:] if argv is None else argv)
    finally:
        restore_signal_handlers(previous)


def _run(args: list[str]) -> int:
    from traceinspect.files import OutputError, Terminated, received_signal

    try:
        app(args=args, prog_name="traceinspect", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        if code == 130 and received_signal():  # typer turns the KeyboardInterrupt into 130
            _error_line(f"stopped by {signal.Signals(received_signal()).name}")
            return 128 + received_signal()
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    except TraceinspectError as exc:
        if isinstance(exc, OutputError) and str(exc).startswith("stdout:"):
            _silence_stdout()
        _error_line(str(exc))
        return exc.exit_code
    except Terminated as exc:
        _error_line(f"stopped by {exc}")
        return exc.exit_status
    except KeyboardInterrupt:
        signum = received_signal()
        if signum:
            _error_line(f"stopped by {signal.Signals(signum).name}")
            return 128 + signum
        _error_line("interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    return 0


#: Longest error line printed (longer ones keep their start and their end).
MESSAGE_CHARS = 300


def _error_line(message: str) -> None:
    """``traceinspect: MESSAGE`` on stderr, control characters made visible, one line."""
    from traceinspect.sanitize import sanitize

    if sys.stderr is None:
        return
    if len(message) > MESSAGE_CHARS:  # a 5,000-character path: keep both ends
        half = MESSAGE_CHARS // 2
        message = f"{message[:half]}…{message[-half:]}"
    try:
        print(f"traceinspect: {sanitize(message, one_line=True)}", file=sys.stderr)
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    from traceinspect.files import silence_stdout

    silence_stdout()
