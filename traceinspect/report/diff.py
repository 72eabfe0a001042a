"""``traceinspect diff`` on the terminal: the eager/graphed/predicted table per region, the
kernel-mix similarity and its warning, and the kernels whose durations changed. Draws a
:class:`~traceinspect.analysis.diff.TraceDiff`; nothing is computed here.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, OverflowMethod
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.diff import KERNEL_CHANGE_FRAC, KERNEL_CHANGE_MIN_NS, TraceDiff
from traceinspect.analysis.health import listed
from traceinspect.report.layout import abbreviate, abbreviate_apart


def render_diff(result: TraceDiff, console: Console, *, full_names: bool = False) -> None:
    """Terminal rendering: one row per matched region, then the changed kernels.

    Kernel names are shortened to fit the terminal (:func:`abbreviate`) unless
    ``full_names``; the JSON always has them whole."""
    console.print(
        f"[bold]eager[/bold] {escape(result.eager_path)}\n"
        f"[bold]graphed[/bold] {escape(result.graphed_path)}\n"
        f"calibration: {escape(result.calibration.describe())}"
    )
    sim = result.similarity
    console.print(
        f"kernel mix alike: {sim.by_count:.0%} by launches, {sim.by_time:.0%} by time"
    )
    for warning in result.warnings:
        console.print(f"[bold yellow]warning[/]: {escape(warning)}")
    table = Table(
        title="Regions (medians per occurrence, µs)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        collapse_padding=True,
        pad_edge=False,
    )
    overflow: OverflowMethod = "fold" if full_names else "ellipsis"
    table.add_column("region", overflow=overflow, no_wrap=not full_names)
    for col in (
        "occ",
        "eager",
        "graphed",
        "predicted",
        "range",
        "error",
        "kernels",
        "GPU busy",
    ):
        table.add_column(col, justify="right", no_wrap=True)
    region_names = [r.name for r in result.regions]
    shown = region_names if full_names else abbreviate_apart([(n, 40) for n in region_names])
    for region, name in zip(result.regions, shown, strict=True):
        p = region.prediction
        error = region.error_frac
        table.add_row(
            escape(name),
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
        "eager, graphed: the region's span as traced (start to its last GPU activity); "
        "predicted: unprofiled synchronized replay from the eager trace; error vs the "
        "(profiled) graphed span; a/b: eager/graphed."
    )
    if result.kernels_changed:
        kt = Table(
            title=(
                f"Kernels whose median duration changed by > {KERNEL_CHANGE_FRAC:.0%} "
                f"and > {KERNEL_CHANGE_MIN_NS / 1000:g} µs"
            ),
            title_justify="left",
            box=box.SIMPLE_HEAD,
            collapse_padding=True,
            pad_edge=False,
        )
        # Kernel names get what the four number columns leave (about 44 columns less).
        name_width = max(20, console.width - 48)
        kt.add_column("kernel", overflow="fold", no_wrap=False)
        for col in ("count e/g", "eager µs", "graphed µs", "change"):
            kt.add_column(col, justify="right")
        kernel_names = [k.name for k in result.kernels_changed]
        if not full_names:
            kernel_names = abbreviate_apart([(n, name_width) for n in kernel_names])
        for k, kernel_name in zip(result.kernels_changed, kernel_names, strict=True):
            kt.add_row(
                escape(kernel_name),
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
            items = [
                f"{escape(n if full_names else abbreviate(n, 60))} ×{c}"
                for n, c in list(names.items())[:5]
            ]
            # all names given, only the shown ones formatted: the count of the rest holds
            console.print(f"kernels {label}: {listed(items + list(names)[5:], 5)}")
    for note in result.notes:
        console.print(f"note: {escape(note)}")


def _us(ns: int) -> str:
    us = ns / 1000
    return f"{us:,.0f}" if abs(us) >= 1000 else f"{us:,.1f}"
