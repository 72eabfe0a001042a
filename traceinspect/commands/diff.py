"""``traceinspect diff EAGER GRAPHED``: eager vs graphed per region, and how the prediction
from the eager trace compares with the graphed trace."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from traceinspect.errors import UsageError
from traceinspect.report.diff import render_diff
from traceinspect.report.layout import render_width
from traceinspect.report.output import check_outputs, write_text
from traceinspect.report.progress import Progress, file_label
from traceinspect.sanitize import make_console
from traceinspect.units import us_to_ns


def run_diff(
    eager_trace: Path,
    graphed_trace: Path,
    *,
    json_out: str | None = None,
    calibration: Path | None = None,
    eager_us: float | Sequence[str] | None = None,
    force: bool = False,
    full_names: bool = False,
    quiet: bool = False,
) -> None:
    from traceinspect.analysis.diff import diff_traces
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    inputs = [eager_trace, graphed_trace] + ([] if calibration is None else [calibration])
    check_outputs([("--json", json_out)], inputs=inputs, force=force)
    from traceinspect.commands.analyze import parse_eager_us

    step_us, by_name = parse_eager_us(eager_us)
    if by_name:
        raise UsageError("diff takes --eager-us for the step only (a bare number of µs)")
    out_stream = sys.stderr if json_out == "-" else sys.stdout
    console = make_console(stderr=json_out == "-", width=render_width(out_stream))
    with Progress(quiet=quiet) as progress:
        with progress.stage(f"reading {file_label(eager_trace)}"):
            eager = load_trace(eager_trace)
        with progress.stage(f"reading {file_label(graphed_trace)}"):
            graphed = load_trace(graphed_trace)
        profile = calibration_for(eager, calibration)
        with progress.stage("comparing regions and kernels"):
            result = diff_traces(
                eager,
                graphed,
                profile,
                eager_unprofiled_ns=None if step_us is None else us_to_ns(step_us),
            )
    render_diff(result, console, full_names=full_names)
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_json(), indent=1), force=force)
