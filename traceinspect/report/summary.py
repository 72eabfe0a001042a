"""The trace summary on the terminal: devices, streams and busy time, top kernels, launch
APIs, annotations. It draws :class:`~traceinspect.analysis.summary.TraceSummary`; nothing is
computed here.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.summary import TraceSummary
from traceinspect.report.layout import abbreviate_apart, device_groups

#: Cells taken by the top-kernels table besides the name: count, total, mean, share, borders.
_NUMBERS_WIDTH = 48


def _us(ns: int | float) -> str:
    return f"{ns / 1000:,.1f}"


def render_summary(summary: TraceSummary, console: Console, *, top: int) -> None:
    """Print ``summary`` on ``console``, listing the ``top`` kernels by total time."""
    devices = ", ".join(device_groups([(d.id, d.name) for d in summary.devices])) or "none listed"
    console.print(
        f"[bold]{escape(summary.path)}[/bold]  {summary.format} ({summary.generation})  "
        f"devices: {escape(devices)}"
    )
    acts = summary.activities
    if not summary.gpu:
        console.print("No GPU activity in this trace (CPU-only profile).")
    else:
        console.print(
            f"{acts.kernel:,} kernels, {acts.memcpy:,} memcpy, {acts.memset:,} memset"
            + (f", {acts.graph:,} whole-graph records" if acts.graph else "")
            + (f"; {summary.from_graph:,} from graph launches" if summary.from_graph else "")
        )
        table = Table(title="GPU busy", title_justify="left")
        for col in ("device", "stream", "activities", "kernels", "busy ms", "busy share"):
            table.add_column(col, justify="right")
        for dev in summary.gpu:
            share = dev.busy_share
            table.add_row(
                str(dev.device),
                "all",
                f"{sum(s.activities for s in dev.streams):,}",
                f"{sum(s.kernels for s in dev.streams):,}",
                f"{dev.busy_ns / 1e6:,.3f}",
                f"{share:.1%}" if share is not None else "-",
            )
            for s in dev.streams:
                table.add_row(
                    "", str(s.stream), f"{s.activities:,}", f"{s.kernels:,}",
                    f"{s.busy_ns / 1e6:,.3f}", "",
                )
        console.print(table)
    kernels = summary.kernels[:top]
    if kernels:
        table = Table(title="Top kernels by total time", title_justify="left")
        # The numbers keep their width; the kernel name gives way on a narrow terminal,
        # abbreviated as in the regions table (whole in --json and CSV).
        name_width = max(16, min(70, console.width - _NUMBERS_WIDTH))
        table.add_column("kernel", overflow="ellipsis", max_width=name_width, no_wrap=True)
        for col in ("count", "total µs", "mean µs", "share"):
            table.add_column(col, justify="right", no_wrap=True)
        names = abbreviate_apart([(k.name, name_width) for k in kernels])
        for k, name in zip(kernels, names, strict=True):
            table.add_row(
                escape(name), f"{k.count:,}",
                _us(k.total_ns), _us(k.mean_ns),
                f"{k.share:.1%}" if k.share is not None else "-",
            )
        console.print(table)
    if summary.launch_apis:
        apis = ", ".join(f"{a.name} ({a.api}) ×{a.count:,}" for a in summary.launch_apis)
        console.print(escape(f"Launch APIs: {apis}"))
    if summary.without_launch_record:
        console.print(f"[yellow]{escape(without_launch_text(summary))}[/]")
    if summary.annotations:
        shown = summary.annotations[:12]
        text = ", ".join(f"{a.name} ({a.source}) ×{a.count:,}" for a in shown)
        more = len(summary.annotations) - len(shown)
        console.print(escape(f"Annotations: {text}" + (f" (+{more} more)" if more > 0 else "")))


def without_launch_text(summary: TraceSummary) -> str:
    """The GPU activities without a launch record, and how many of them the GPU was still
    working through from before the recording began."""
    text = f"{summary.without_launch_record:,} GPU activities have no launch record"
    queued = summary.queued_before_recording
    if not queued:
        return text
    span = f"{summary.queued_before_recording_ns / 1e6:,.1f} ms"
    if queued == summary.without_launch_record:
        return (
            f"{text}: all launched before the recording began (the GPU spent its first {span} "
            "on work queued earlier); they join no region"
        )
    return (
        f"{text}; {queued:,} of them launched before the recording began (the GPU spent its "
        f"first {span} on work queued earlier) and join no region"
    )
