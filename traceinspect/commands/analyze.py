"""``traceinspect analyze``: load a trace, diagnose it, render the results."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

from traceinspect.analysis.diagnose import diagnose
from traceinspect.parse import load_trace
from traceinspect.report.json_report import build_report
from traceinspect.report.layout import render_width
from traceinspect.report.output import check_writable, write_text
from traceinspect.report.progress import Progress, file_label
from traceinspect.report.summary import render_summary, summarize
from traceinspect.report.terminal import render_diagnosis


def run_analyze(
    trace: Path,
    *,
    json_out: str | None = None,
    html_out: Path | None = None,
    calibration: Path | None = None,
    eager_us: float | None = None,
    top: int = 10,
    force: bool = False,
    quiet: bool = False,
) -> None:
    if trace.is_dir():
        from traceinspect.commands.ranks import run_analyze_dir

        return run_analyze_dir(trace, json_out=json_out, html_out=html_out, force=force)
    # Refuse to clobber outputs before spending time on the analysis.
    if json_out not in (None, "-"):
        check_writable(Path(json_out), force=force)
    if html_out is not None:
        check_writable(html_out, force=force)
    # With `--json -`, stdout carries the JSON alone; human output goes to stderr.
    out_stream = sys.stderr if json_out == "-" else sys.stdout
    console = Console(stderr=json_out == "-", highlight=False, width=render_width(out_stream))
    with Progress(quiet=quiet) as progress:
        with progress.stage(f"reading {file_label(trace)}"):
            timeline = load_trace(trace)
        profile = None
        if calibration is not None:
            from traceinspect.calibration import calibration_for

            profile = calibration_for(timeline, calibration)
        with progress.stage("diagnosing regions and estimating replay"):
            diagnosis = diagnose(
                timeline,
                calibration=profile,
                eager_unprofiled_ns=round(eager_us * 1000) if eager_us is not None else None,
            )
            summary = summarize(timeline, top=top)
            report = build_report(diagnosis, summary)
        html_text = None
        if html_out is not None:
            from traceinspect.report.html import render_html

            with progress.stage(f"writing {html_out.name}"):
                html_text = render_html(timeline, report)
    render_summary(summary, console)
    render_diagnosis(report, console)
    if json_out is not None:
        write_text(json_out, json.dumps(report, indent=1), force=force)
    if html_out is not None and html_text is not None:
        write_text(html_out, html_text, force=force)
        console.print(f"HTML report: {html_out}")
