"""``traceinspect analyze``: load a trace, diagnose it, render the results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from traceinspect.parse import load_trace
from traceinspect.report.output import check_writable, write_text
from traceinspect.report.summary import render_summary, summarize


def run_analyze(
    trace: Path,
    *,
    json_out: str | None = None,
    html_out: Path | None = None,
    calibration: Path | None = None,
    eager_us: float | None = None,
    top: int = 10,
    force: bool = False,
) -> None:
    if trace.is_dir():
        from traceinspect.commands.ranks import run_analyze_dir

        return run_analyze_dir(trace, json_out=json_out, force=force)
    # Refuse to clobber outputs before spending time on the analysis.
    if json_out not in (None, "-"):
        check_writable(Path(json_out), force=force)
    if html_out is not None:
        check_writable(html_out, force=force)
    # With `--json -`, stdout carries the JSON alone; human output goes to stderr.
    console = Console(stderr=json_out == "-", highlight=False, width=_width())
    timeline = load_trace(trace)
    summary = summarize(timeline, top=top)
    render_summary(summary, console)
    if json_out is not None:
        report: dict[str, Any] = {"schema_version": 1, "summary": summary}
        write_text(json_out, json.dumps(report, indent=1), force=force)


def _width() -> int | None:
    return None if sys.stdout.isatty() else 120
