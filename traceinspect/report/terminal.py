"""The analysis on the terminal: the trace summary, one row per region, then evidence,
replay estimates, capture blockers and trace health.

:func:`render_terminal` / :func:`print_terminal` draw a
:class:`~traceinspect.analysis.result.TraceAnalysis`; the regions part reads the same
JSON-ready view the ``--json`` report serializes (:func:`~traceinspect.report.json_report.
report_data`), so the two never disagree.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any, Final

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.result import TraceAnalysis
from traceinspect.report.decision import render_decisions
from traceinspect.report.json_report import TOP_KERNELS, report_data
from traceinspect.report.layout import (
    abbreviate,
    abbreviate_apart,
    process_prefix,
    region_label,
)
from traceinspect.report.ranks import render_ranks
from traceinspect.report.summary import render_summary
from traceinspect.sanitize import SafeConsole

VERDICT_STYLE = {
    "launch-bound": "bold red",
    "sync-bound": "bold magenta",
    "compute-bound": "green",
    "mixed": "yellow",
    "idle": "dim",
    "already-graphed": "cyan",
    "communication-bound": "blue",
}
CAPTURE_STYLE = {
    "capturable as-is": "green",
    "capturable after changes": "yellow",
    "not capturable": "red",
    "already graphed": "cyan",
    "no GPU work": "dim",
}
CAPTURE_SHORT = {
    "capturable as-is": "ok as-is",
    "capturable after changes": "after changes",
    "not capturable": "no",
    "already graphed": "graphed",
    "no GPU work": "-",
}
EAGER_SOURCE = {
    "measured": "(measured, unprofiled)",
    "trace-deflated": "(estimated from the trace, profiler inflation removed)",
    "trace": "(as traced)",
}
SEVERITY_STYLE = {"breaks": "red", "change": "yellow", "note": "dim"}
#: Regions whose verdict evidence is printed (all are in the JSON).
EVIDENCE_SHOWN = 8
#: Blockers listed per region on the terminal (all are in the JSON).
BLOCKERS_SHOWN = 4


def render_terminal(
    analysis: TraceAnalysis, *, width: int, color: bool = False, top: int = TOP_KERNELS
) -> str:
    """The terminal report of ``analysis`` as text: ``width`` columns, ANSI styles when
    ``color``, the ``top`` kernels in the summary."""
    buffer = io.StringIO()
    console = SafeConsole(  # control characters in names made visible
        file=buffer,
        width=width,
        highlight=False,
        force_terminal=color,
        no_color=None if color else True,  # None: NO_COLOR in the environment still applies
    )
    print_terminal(analysis, console, top=top)
    return buffer.getvalue()


def print_terminal(analysis: TraceAnalysis, console: Console, *, top: int = TOP_KERNELS) -> None:
    """Print the terminal report of ``analysis`` on ``console``: the trace summary, then the
    regions drawn from the JSON-ready view of the same analysis
    (:func:`~traceinspect.report.json_report.report_data`), so terminal and JSON agree."""
    render_summary(analysis.summary, console, top=top)
    render_diagnosis(report_data(analysis, top=top), console)


def render_diagnosis(report: Mapping[str, Any], console: Console) -> None:
    regions = report["regions"]
    if regions:
        table, hidden = _regions_table(regions, console.width)
        console.print(table)
        if hidden:
            console.print(
                f"[dim]not shown at this width: {', '.join(_COLUMNS[c][0] for c in hidden)} "
                "(widen the terminal, set COLUMNS when piped, or see --json)[/]"
            )
        _detections(regions, console)
        _evidence(regions, console)
        _estimates(regions, console)
        _blockers(regions, console)
        render_decisions([r["decision"] for r in regions if r.get("decision")], console)
    if report.get("processes"):
        render_ranks(report["processes"], console)
    calibration = report.get("calibration")
    if calibration and calibration.get("note"):
        name, note = escape(calibration["name"]), escape(calibration["note"])
        console.print(f"[dim]calibration {name}: {note}[/]")
    for warning in report["health"]:
        console.print(f"[yellow]health[/] [bold]{warning['kind']}[/]: {escape(warning['message'])}")


#: Regions table columns: key -> (header, right-justified). ``region`` takes what is left.
_COLUMNS: Final[Mapping[str, tuple[str, bool]]] = {
    "verdict": ("verdict", False),
    "occ": ("occ", True),
    "wall": ("wall", True),
    "window": ("window", True),
    "busy": ("busy", True),
    "kernels": ("kernels", True),
    "launch": ("launch", True),
    "sync": ("sync", True),
    "copy": ("copy", True),
    "dep": ("dep", True),
    "other": ("other", True),
    "idle": ("most idle", True),
    "graphed": ("graphed", True),
    "saving": ("saving", True),
    "capture": ("capture", False),
}
_IDLE_COLUMNS: Final = {
    "launch": "host_launch", "sync": "sync", "copy": "copy", "dep": "dependency", "other": "other"
}
#: Layouts, richest first; the first whose columns leave the region names enough room wins.
#: Every layout keeps verdict, graphed, saving and capture: they are the answer.
LAYOUTS: Final = (
    ("wide", ("verdict", "occ", "wall", "window", "busy", "kernels", "launch", "sync", "copy",
              "dep", "other", "graphed", "saving", "capture")),
    ("medium", ("verdict", "occ", "window", "busy", "idle", "graphed", "saving", "capture")),
    ("compact", ("verdict", "busy", "idle", "graphed", "saving", "capture")),
    ("narrow", ("verdict", "busy", "graphed", "saving", "capture")),
)
#: Characters between two columns (one space of padding each side of a blank rule).
_GAP: Final = 2
#: The region column is never narrower than this, nor than the longest name when it fits.
REGION_MIN_WIDTH: Final = 18
REGION_MAX_WIDTH: Final = 48
_TITLES: Final = {
    "wide": "Regions — medians per occurrence; idle by cause as % of the GPU window "
    "(first to last activity); graph replay estimate",
    "medium": "Regions — medians per occurrence; most idle: the largest idle cause, % of the "
    "GPU window; graph replay estimate",
    "compact": "Regions — medians per occurrence; most idle: % of the GPU window; graph replay "
    "estimate",
    "narrow": "Regions — medians per occurrence; graph replay estimate",
}


def choose_layout(
    regions: list[Mapping[str, Any]], width: int
) -> tuple[str, tuple[str, ...], int]:
    """The richest layout that fits ``width``: its name, columns and the region column width."""
    cells = [_cells(r) for r in regions]
    longest = max((len(_region_label(r)) for r in regions), default=6)
    wanted = min(max(longest, 6), REGION_MAX_WIDTH)
    for name, columns in LAYOUTS:
        used = sum(
            max(len(_COLUMNS[c][0]), *(len(_plain(row[c])) for row in cells)) + _GAP
            for c in columns
        )
        room = width - used
        if room >= min(wanted, REGION_MIN_WIDTH) or name == LAYOUTS[-1][0]:
            return name, columns, max(6, min(room, wanted))
    raise AssertionError("unreachable")


def _regions_table(regions: list[Mapping[str, Any]], width: int) -> tuple[Table, tuple[str, ...]]:
    layout, columns, region_width = choose_layout(regions, width)
    table = Table(
        title=_TITLES[layout],
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        collapse_padding=True,
        pad_edge=False,
        show_edge=False,
    )
    table.add_column("region", no_wrap=True, width=region_width)
    for key in columns:
        header, right = _COLUMNS[key]
        style = "dim" if key in _IDLE_COLUMNS else None
        table.add_column(
            header, justify="right" if right else "left", no_wrap=True, header_style=style
        )
    by_label = {region_label(r): r for r in regions}
    labels = abbreviate_apart(
        [(region_label(r), max(1, region_width - 2 * int(r["depth"]))) for r in regions],
        lambda label, width, head: _fitted_label(by_label[label], width, head),
    )
    for r, label in zip(regions, labels, strict=True):
        cells = _cells(r)
        name = "  " * int(r["depth"]) + label
        table.add_row(escape(name), *(cells[c] for c in columns))
    hidden = [c for c in LAYOUTS[0][1] if c not in columns]
    return table, tuple(hidden)


def _fitted_label(r: Mapping[str, Any], width: int, head: int | None = None) -> str:
    """:func:`region_label` in ``width`` characters: the process prefix kept whole while
    the name keeps a few characters beside it (it is what tells two ranks' regions apart),
    the name shortened (``head``: as :func:`abbreviate`)."""
    prefix = process_prefix(r)
    if prefix and width - len(prefix) >= _NAME_BESIDE_PREFIX:
        return prefix + abbreviate(str(r["name"]), width - len(prefix), head)
    return abbreviate(region_label(r), width, head)


#: Characters of a region's name that must fit beside its process prefix for the prefix to
#: be kept whole in the regions table.
_NAME_BESIDE_PREFIX: Final = 8


def _region_label(r: Mapping[str, Any]) -> str:
    return "  " * int(r["depth"]) + region_label(r)


def _cells(r: Mapping[str, Any]) -> dict[str, str]:
    """Every column's cell for one region (rich markup; styles only on fixed words)."""
    idle = r["idle_us"]
    est = r.get("estimate")
    window = r["window_us"] or 0.0
    verdict = r["verdict"]
    capture = r["capture"]["verdict"]
    cells = {
        "verdict": _styled(verdict, VERDICT_STYLE.get(verdict, "")),
        "occ": f"{r['occurrences']:,}",
        "wall": _num(r["wall_us"]),
        "window": _num(r["window_us"]) if window else "-",
        "busy": f"{r['gpu_busy_share']:.0%}" if r.get("gpu_busy_share") is not None else "-",
        "kernels": f"{r['kernels']:,g}",
        "graphed": _num(est["graphed_us"]) if est else "-",
        "saving": f"{est['saving_frac']:.0%}" if est else "-",
        "capture": f"[{CAPTURE_STYLE.get(capture, '')}]{CAPTURE_SHORT.get(capture, capture)}[/]",
    }
    for key, cause in _IDLE_COLUMNS.items():
        cells[key] = _share(idle.get(cause), window)
    largest = max(
        ((cause, us) for cause, us in idle.items() if us), key=lambda item: item[1], default=None
    )
    cells["idle"] = (
        f"{_CAUSE_SHORT.get(largest[0], largest[0])} {largest[1] / window:.0%}"
        if largest is not None and window
        else "·"
    )
    return cells


_CAUSE_SHORT: Final = {"host_launch": "launch", "dependency": "dep"}
_MARKUP = re.compile(r"\[/?[^\]]*\]")


def _plain(markup: str) -> str:
    return _MARKUP.sub("", markup)


def _styled(text: str, style: str) -> str:
    """``text`` as rich markup in ``style`` (none: the text alone, escaped)."""
    return f"[{style}]{escape(text)}[/]" if style else escape(text)


def _detections(regions: list[Mapping[str, Any]], console: Console) -> None:
    """Say plainly which regions were found by step detection, and how sure it is."""
    for r in regions:
        detection = r.get("detection")
        if detection and r["name"] != "startup":
            console.print(f"[bold]{escape(region_label(r))}[/]: {escape(detection['summary'])}")


def _evidence(regions: list[Mapping[str, Any]], console: Console) -> None:
    with_work = [r for r in regions if r["activities"]]
    for r in with_work[:EVIDENCE_SHOWN]:
        console.print(
            f"[bold]{escape(region_label(r))}[/] "
            + _styled(r["verdict"], VERDICT_STYLE.get(r["verdict"], ""))
            + ": "
            + escape("; ".join(r["evidence"]))
        )
    if len(with_work) > EVIDENCE_SHOWN:
        console.print(
            f"[dim]evidence for {len(with_work) - EVIDENCE_SHOWN} more regions in --json[/]"
        )


def _estimates(regions: list[Mapping[str, Any]], console: Console) -> None:
    """What replay would buy, per region, and where the eager time behind the saving came from."""
    estimated = [r for r in regions if r.get("estimate")]
    for r in estimated[:EVIDENCE_SHOWN]:
        est = r["estimate"]
        source = EAGER_SOURCE.get(est.get("eager_source", ""), est.get("eager_source", ""))
        console.print(
            f"[bold]{escape(region_label(r))}[/] as one CUDA graph: {_num(est['graphed_us'])} "
            f"({_num(est['low_us'])}–{_num(est['high_us'])}) vs eager {_num(est['eager_us'])} "
            f"{source} → saves {_num(est['saving_us'])} ({est['saving_frac']:.0%}"
            + _saving_range(est)
            + ")"
        )
        loading = (est.get("parts") or {}).get("data_loading")
        if loading:
            console.print(
                f"  of which {_num(loading)} a DataLoader fetch inside the region, which no "
                "graph captures: it stays on replay"
            )
    if any(r["estimate"].get("eager_source") != "measured" for r in estimated):
        console.print(
            "[dim]Eager times above are simulated from the trace with the profiler's cost per "
            "operator and CUDA call removed; their range covers that model's error. Pass "
            "--eager-us with the unprofiled step time (or NAME=US per region; `traceinspect "
            "profile` measures it) for a measured saving.[/]"
        )


def _saving_range(est: Mapping[str, Any]) -> str:
    """``", range 12%–40%"`` when the saving carries a range wider than a point."""
    low, high = est.get("saving_low_frac"), est.get("saving_high_frac")
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return ""
    if round(low, 2) == round(high, 2):
        return ""
    return f", range {low:.0%}–{high:.0%}"


def _blockers(regions: list[Mapping[str, Any]], console: Console) -> None:
    shown: dict[tuple[str, str], str] = {}  # (kind, op) -> the region it was listed under
    for r in regions:
        # Nested regions repeat their parent's blockers: list each (kind, op) once, and
        # point back to it where it is what keeps a later region from capture.
        blockers = [b for b in r["capture"]["blockers"] if _key(b) not in shown]
        before = {
            (b["severity"], b["kind"]): shown[_key(b)]
            for b in r["capture"]["blockers"]
            if _key(b) in shown and b["severity"] != "note"
        }
        if not blockers and not before:
            continue
        label = region_label(r)
        console.print(f"[bold]Capture pre-flight — {escape(label)}[/]: {r['capture']['verdict']}")
        for (severity, kind), where in before.items():
            style = SEVERITY_STYLE.get(severity, "")
            console.print(f"  [{style}]{severity}[/] {kind}: [dim]as under {escape(where)}[/]")
        for b in blockers[:BLOCKERS_SHOWN]:
            shown[_key(b)] = label
            style = SEVERITY_STYLE.get(b["severity"], "")
            console.print(f"  [{style}]{b['severity']}[/] {b['kind']}: {escape(b['what'])}")
            if b.get("fix"):
                console.print(f"      [dim]→ {escape(b['fix'])}[/]")
        if len(blockers) > BLOCKERS_SHOWN:
            console.print(f"  [dim]+{len(blockers) - BLOCKERS_SHOWN} more in --json[/]")


def _key(blocker: Mapping[str, Any]) -> tuple[str, str]:
    return blocker["kind"], str(blocker.get("example", {}).get("op") or blocker["what"])


def _num(us: float | None) -> str:
    """µs, compact: ``12.3 µs``, ``4,321 µs``, ``56.7 ms``, ``8.9 s``."""
    if us is None:
        return "-"
    if us >= 1e6:
        return f"{us / 1e6:,.1f} s"
    if us >= 1e4:
        return f"{us / 1000:,.1f} ms"
    if us >= 100:
        return f"{us:,.0f} µs"
    return f"{us:,.1f} µs"


def _share(us: float | None, window_us: float) -> str:
    if us is None or not window_us:
        return "-"
    return f"{us / window_us:.0%}" if us else "·"


