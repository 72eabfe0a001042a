"""`traceinspect profile`'s candidate table on the terminal, drawn from H200 results."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from traceinspect.report.candidates import render_candidates

VALIDATION = Path(__file__).resolve().parent.parent / "sample_traces" / "validation"


def _render(path: Path) -> str:
    console = Console(record=True, width=200, color_system=None)
    render_candidates(json.loads(path.read_text()), console)
    return console.export_text()


def test_a_replay_checked_after_it_reads_yes_with_a_mark_and_says_why() -> None:
    # holdout31's spectral-norm discriminator drifts on every call: its replay was checked
    # against an eager call made right after it
    out = _render(VALIDATION / "holdout31" / "spectral_norm_disc_b16" / "results.json")
    graphed = next(line for line in out.splitlines() if "graphed" in line)
    assert "yes*" in graphed and "346.6" in graphed
    assert "yes*: checked against an eager call made right after the replay" in out
    # the legend speaks only of what the table shows
    assert "capture failed" not in out and "fallback:" not in out
    assert "input copies at 6.4 µs of host each (measured here)" in out


def test_a_failed_capture_is_marked_and_the_legend_says_so() -> None:
    # holdout22's graph readouts copy their segment lengths to the host: capture failed
    out = _render(VALIDATION / "holdout22" / "segment_pool_scatter_b16" / "results.json")
    assert "✗ capture failed (kind)" in out
    assert "yes*" not in out
