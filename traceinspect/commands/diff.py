"""``traceinspect diff EAGER GRAPHED``: eager vs graphed per region, and how the prediction
from the eager trace compares with the graphed trace."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.diff import KERNEL_CHANGE_FRAC, KERNEL_CHANGE_MIN_NS, TraceDiff
from traceinspect.errors import UsageError
from traceinspect.report.output import check_writable, write_text


def run_diff(
    eager_trace: Path,
    graphed_trace: Path,
    *,
    json_out: str | None = None,
    calibration: Path | None = None,
    eager_us: float | Sequence[str] | None = None,
    force: bool = False,
) -> None:
    from traceinspect.analysis.diff import diff_traces
    from traceinspect.calibration import calibration_for
    from traceinspect.parse import load_trace

    if json_out not in (None, "-"):
        check_writable(Path(json_out), force=force)
    from traceinspect.commands.analyze import parse_eager_us

    step_us, by_name = parse_eager_us(eager_us)
    if by_name:
        raise UsageError("diff takes --eager-us for the step only (a bare number of µs)")
    console = Console(stderr=json_out == "-", highlight=False, width=_width())
    eager = load_trace(eager_trace)
    graphed = load_trace(graphed_trace)
    profile = calibration_for(eager, calibration)
    result = diff_traces(
        eager,
        graphed,
        profile,
        eager_unprofiled_ns=None if step_us is None else round(step_us * 1000),
    )
    render_diff(result, console)
    if json_out is not None:
        write_text(json_out, json.dumps(result.to_json(), indent=1), force=force)


def render_diff(result: TraceDiff, console: Console) -> None:
    """Terminal rendering: one row per matched region, then the changed kernels."""
    console.print(
        f"[bold]eager[/bold] {escape(result.eager_path)}\n"
        f"[bold]graphed[/bold] {escape(result.graphed_path)}\n"
        f"calibration: {escape(result.calibration.describe())}"
    )
    table = Table(title="Regions (medians per occurrence, µs)", title_justify="left")
    table.add_column("region", overflow="ellipsis", max_width=40, no_wrap=True)
    for col in (
        "occ",
        "eager span",
        "graphed span",
        "predicted",
        "range",
        "error",
        "kernels e/g",
        "GPU busy e/g",
    ):
        table.add_column(col, justify="right")
    for region in result.regions:
        p = region.prediction
        error = region.error_frac
        table.add_row(
            escape(region.name),
            f"{region.eager.occurrences}/{region.graphed.occurrences}",
            _us(region.eager.span_ns),
            _us(region.graphed.span_ns),
            "-" if p is None else _us(p.graphed_ns),
            "-" if p is None else f"{_us(p.low_ns)}–{_us(p.high_ns)}",
            "-" if error is None else f"{error:+.1%}",
            f"{region.eager.kernels}/{region.graphed.kernels}",
            f"{_us(region.eager.gpu_busy_ns)}/{_us(region.graphed.gpu_busy_ns)}",
        )
    console.print(table)
    console.print(
        "span: region start to its last GPU activity; predicted: unprofiled synchronized "
        "replay from the eager trace; error vs the (profiled) graphed span."
    )
    if result.kernels_changed:
        kt = Table(
            title=(
                f"Kernels whose median duration changed by > {KERNEL_CHANGE_FRAC:.0%} "
                f"and > {KERNEL_CHANGE_MIN_NS / 1000:g} µs"
            ),
            title_justify="left",
        )
        kt.add_column("kernel", overflow="ellipsis", max_width=60, no_wrap=True)
        for col in ("count e/g", "eager µs", "graphed µs", "change"):
            kt.add_column(col, justify="right")
        for k in result.kernels_changed:
            kt.add_row(
                escape(k.name),
                f"{k.eager_count}/{k.graphed_count}",
                _us(k.eager_median_ns),
                _us(k.graphed_median_ns),
                f"{k.change_frac:+.1%}",
            )
        console.print(kt)
    else:
        console.print("No kernel's median duration changed beyond the threshold.")
    for label, names in (
        ("only in eager", result.only_eager),
        ("only in graphed", result.only_graphed),
    ):
        if names:
            listed = ", ".join(f"{escape(n[:50])} ×{c}" for n, c in list(names.items())[:5])
            more = f" (+{len(names) - 5} more)" if len(names) > 5 else ""
            console.print(f"kernels {label}: {listed}{more}")
    for note in result.notes:
        console.print(f"note: {escape(note)}")


def _us(ns: int) -> str:
    us = ns / 1000
    return f"{us:,.0f}" if abs(us) >= 1000 else f"{us:,.1f}"


def _width() -> int | None:
    return None if sys.stdout.isatty() else 120
