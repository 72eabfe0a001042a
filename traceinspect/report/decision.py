"""The graph decisions on the terminal: one line per region or candidate, then its reasons.

Renders :class:`~traceinspect.analysis.decision.GraphDecision` values (or their JSON form),
so ``analyze`` and ``profile`` print the same words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from rich.console import Console
from rich.markup import escape

from traceinspect.analysis.decision import GraphDecision

CHOICE_STYLE: Final = {
    "enable": "bold green",
    "enable after changes": "bold yellow",
    "keep graphs": "cyan",
    "do not enable": "bold red",
    "undecided": "magenta",
}
#: Decisions printed in full (all are in the JSON).
DECISIONS_SHOWN: Final = 8


def render_decisions(
    decisions: Sequence[GraphDecision | Mapping[str, Any]],
    console: Console,
    *,
    title: str = "Decision — enable CUDA graphs?",
) -> None:
    """A titled block: ``name: choice`` and the reasons, dim where a figure is unknown."""
    items = [d.to_json() if isinstance(d, GraphDecision) else d for d in decisions]
    if not items:
        return
    console.print(f"[bold]{escape(title)}[/]")
    shown = items[:DECISIONS_SHOWN]
    # A reason every decision gives (what a trace cannot know) is said once, at the end.
    common = set.intersection(*(set(d["reasons"]) for d in shown)) if len(shown) > 1 else set()
    for d in shown:
        choice = str(d["choice"])
        style = CHOICE_STYLE.get(choice, "")
        console.print(
            f"  [bold]{escape(str(d['subject']))}[/]: "
            + (f"[{style}]{escape(choice)}[/]" if style else escape(choice))
        )
        for reason in d["reasons"]:
            if reason in common:
                continue
            text = escape(str(reason))
            console.print(f"    [dim]{text}[/]" if "unknown" in reason else f"    {text}")
    for reason in sorted(common):
        console.print(f"  [dim]all: {escape(str(reason))}[/]")
    if len(items) > DECISIONS_SHOWN:
        console.print(f"  [dim]{len(items) - DECISIONS_SHOWN} more in --json[/]")


def decision_summary(decision: Mapping[str, Any] | GraphDecision) -> str:
    """One line: the choice and its first reason (for table cells and CSV)."""
    d = decision.to_json() if isinstance(decision, GraphDecision) else decision
    reasons = d.get("reasons") or []
    return f"{d['choice']}: {reasons[0]}" if reasons else str(d["choice"])
