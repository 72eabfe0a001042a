"""``traceinspect analyze``: load a trace, analyze it, render the analysis, write the outputs."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

from traceinspect.analysis.diagnose import diagnose
from traceinspect.errors import UsageError
from traceinspect.files import STDOUT, check_outputs, input_is_folder
from traceinspect.parse import load_trace
from traceinspect.report.json_report import render_json
from traceinspect.report.layout import render_width
from traceinspect.report.output import check_csv_dir, write_binary, write_text
from traceinspect.report.progress import Progress, file_label
from traceinspect.report.terminal import print_terminal
from traceinspect.sanitize import make_console
from traceinspect.units import us_to_ns


def parse_eager_us(
    values: float | Sequence[str] | None,
) -> tuple[float | None, dict[str, float]]:
    """``--eager-us`` values: a bare number is the step's measured eager time, ``NAME=US``
    the region ``NAME``'s (the last one given wins). Returns (step µs, {name: µs})."""
    if values is None:
        return None, {}
    if isinstance(values, (int, float)):
        values = [str(values)]
    step: float | None = None
    by_name: dict[str, float] = {}
    for value in values:
        name, sep, number = str(value).rpartition("=")
        try:
            us = float(number)
        except ValueError:
            us = math.nan
        if not math.isfinite(us) or us <= 0 or (sep and not name):
            raise UsageError(f"--eager-us takes a positive number of µs or NAME=US, got {value!r}")
        if sep:
            by_name[name] = us
        else:
            step = us
    return step, by_name


def run_analyze(
    trace: Path,
    *,
    json_out: str | None = None,
    html_out: Path | None = None,
    calibration: Path | None = None,
    eager_us: float | Sequence[str] | None = None,
    top: int = 10,
    force: bool = False,
    quiet: bool = False,
    cluster: str | None = None,
    csv_dir: Path | None = None,
    perfetto_out: Path | None = None,
) -> None:
    if input_is_folder(trace):
        from traceinspect.commands.ranks import RankOptions, run_analyze_dir

        step_us, by_name = parse_eager_us(eager_us)
        profile = None
        if calibration is not None:
            from traceinspect.calibration import load_calibration

            profile = load_calibration(calibration)  # checked once, not once per rank
        return run_analyze_dir(
            trace,
            json_out=json_out,
            html_out=html_out,
            csv_dir=csv_dir,
            perfetto_out=perfetto_out,
            force=force,
            cluster=cluster,
            quiet=quiet,
            options=RankOptions(
                calibration=profile,
                eager_unprofiled_ns=us_to_ns(step_us) if step_us is not None else None,
                eager_by_name={name: us_to_ns(us) for name, us in by_name.items()},
            ),
        )
    if cluster is not None:
        raise UsageError(f"{trace}: --cluster runs the ranks of a folder; give the folder")
    # Refuse to clobber inputs or outputs before spending time on the analysis.
    inputs = [trace] if calibration is None else [trace, calibration]
    outputs = [("--json", json_out), ("--html", html_out), ("--perfetto", perfetto_out)]
    check_outputs(outputs, inputs=inputs, force=force)
    if csv_dir is not None:
        check_csv_dir(csv_dir, force=force)
    # With `--json -` (or `--html -`), stdout carries that alone; human output goes to stderr.
    step_us, by_name = parse_eager_us(eager_us)
    if top < 0:
        raise UsageError(f"--top takes how many kernels to list (0 or more), got {top}")
    to_stdout = STDOUT in (str(json_out), str(html_out))
    out_stream = sys.stderr if to_stdout else sys.stdout
    console = make_console(stderr=to_stdout, width=render_width(out_stream))
    with Progress(quiet=quiet) as progress:
        with progress.stage(f"reading {file_label(trace)}"):
            timeline = load_trace(trace)
        profile = None
        if calibration is not None:
            from traceinspect.calibration import calibration_for

            profile = calibration_for(timeline, calibration)
        with progress.stage("diagnosing regions and estimating replay"):
            analysis = diagnose(
                timeline,
                calibration=profile,
                eager_unprofiled_ns=us_to_ns(step_us) if step_us is not None else None,
                eager_by_name={name: us_to_ns(us) for name, us in by_name.items()} or None,
            )
        html_text = None
        if html_out is not None:
            from traceinspect.report.html import render_html

            with progress.stage(f"writing {html_out.name}"):
                html_text = render_html(analysis, top=top)
        if perfetto_out is not None:
            from traceinspect.report.perfetto import write_perfetto

            with progress.stage(f"writing {perfetto_out.name}"):
                write_binary(perfetto_out, lambda out: write_perfetto(analysis, out), force=force)
    print_terminal(analysis, console, top=top)
    if json_out is not None:
        write_text(json_out, render_json(analysis, top=top), force=force)
    if html_out is not None and html_text is not None:
        write_text(html_out, html_text, force=force)
        if str(html_out) != STDOUT:
            console.print(f"HTML report: {html_out}", markup=False)
    if csv_dir is not None:
        from traceinspect.report.csv_export import render_csv

        tables = render_csv(analysis)
        for name, text in tables.items():
            write_text(csv_dir / name, text, force=force)
        names = ",".join(name.removesuffix(".csv") for name in tables)
        console.print(f"CSV tables: {csv_dir}/{{{names}}}.csv", markup=False)
    if perfetto_out is not None:
        console.print(f"Perfetto trace: {perfetto_out} (open it in ui.perfetto.dev)")
