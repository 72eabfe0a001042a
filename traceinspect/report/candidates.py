"""``traceinspect profile`` on the terminal: the measured graph candidates (one row per
callable, bucket and mode), capture failures with their hints, and each request mix's bucket
sets. Draws the ``results.json`` data the collector measured; nothing is computed here.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from traceinspect.collect.host_probe import valid_host_costs


def render_candidates(results: dict[str, Any], console: Console) -> None:
    """The measured rows, the request mixes, and the recommended bucket sets."""
    rows = results["rows"]
    if all(r["status"] == "cuda_unavailable" for r in rows):
        names = ", ".join(
            f"{c['name']} (buckets {', '.join(map(str, c['buckets']))})"
            for c in results["candidates"]
        )
        console.print(f"Graph candidates not measured (CUDA not available): {names}", markup=False)
    else:
        console.print(_rows_table(rows, results.get("host_costs")))
    for candidate in results["candidates"]:
        for row in rows:
            failure = row["failure"]
            if row["callable"] == candidate["name"] and failure and failure.get("hint"):
                console.print(
                    f"{candidate['name']} b{row['bucket']}: capture failed "
                    f"({failure['kind']}): {failure['message']}\n  hint: {failure['hint']}",
                    markup=False,
                )
                break
        _render_mix(candidate, console)


def _rows_table(rows: list[dict[str, Any]], host_costs: Any = None) -> Table:
    notes = []
    if any(r["status"] == "capture_failed" for r in rows):
        notes.append("✗ capture failed (kind)")
    if any(not r["in_bucket_set"] for r in rows):
        notes.append("fallback: eager at a request size that is not a bucket")
    if any(r.get("checked_against") == "eager_after_replay" for r in rows):
        notes.append(
            "yes*: checked against an eager call made right after the replay (the step "
            "drifts a little on every call)"
        )
    if any(r.get("repeatable") is False for r in rows):
        notes.append("correct -: two eager calls differ, the replay is not checked")
    if any(r["predicted_ns"] is not None for r in rows):
        predicted = "predicted: the estimator's graphed time from the eager trace"
        costs = valid_host_costs(host_costs)
        if costs is not None:
            predicted += f", input copies at {costs[1] / 1e3:.1f} µs of host each (measured here)"
        notes.append(predicted)
    caption = "; ".join(notes) or None
    table = Table(
        title="CUDA graph candidates: µs per step, unprofiled (host wall clock unless GPU)",
        title_justify="left",
        caption=caption,
        caption_justify="left",
    )
    for col, justify in (
        ("callable", "left"),
        ("batch", "right"),
        ("mode", "left"),
        ("status", "left"),
        ("capture ms", "right"),
        ("1st replay", "right"),
        ("p50", "right"),
        ("p95", "right"),
        ("GPU p50", "right"),
        ("pool MiB", "right"),
        ("correct", "left"),
        ("predicted", "right"),
        ("error", "right"),
    ):
        table.add_column(col, justify=justify, no_wrap=col in ("callable", "mode", "status"))  # type: ignore[arg-type]
    for row in rows:
        table.add_row(
            row["callable"],
            "-" if row["bucket"] is None else str(row["bucket"]),
            row["mode"] if row["in_bucket_set"] else "fallback",
            _status(row),
            _num(row["capture_ns"], 1e6, ".2f"),
            _num(row["first_replay_ns"], 1e3, ".1f"),
            _num(row["host_p50_ns"], 1e3, ".1f"),
            _num(row["host_p95_ns"], 1e3, ".1f"),
            _num(row["gpu_p50_ns"], 1e3, ".1f"),
            _num(row["graph_pool_bytes"], 2**20, ".1f"),
            _correct(row),
            _num(row["predicted_ns"], 1e3, ".1f"),
            "-" if row["prediction_error"] is None else f"{row['prediction_error']:+.0%}",
        )
    return table


def _correct(row: dict[str, Any]) -> str:
    if row["correct"] is None:
        return "-"
    if not row["correct"]:
        return "NO"
    return "yes*" if row.get("checked_against") == "eager_after_replay" else "yes"


def _status(row: dict[str, Any]) -> str:
    failure = row["failure"] or {}
    if row["status"] == "capture_failed":
        return f"✗ {failure.get('kind', '?')}"
    if row["status"] in ("error", "skipped"):
        return f"{row['status']}: {failure.get('phase', '?')}"
    return str(row["status"] or "-")


def _render_mix(candidate: dict[str, Any], console: Console) -> None:
    mix = candidate["request_mix"]
    if mix is None:
        return
    registered = mix["registered_set"]
    measured = mix["measured"] or {}
    line = (
        f"{candidate['name']}: request mix (size:weight) "
        + " ".join(f"{size}:{weight:g}" for size, weight in mix["sizes"].items())
        + f" on buckets {','.join(map(str, registered['buckets']))}: "
        f"{registered['fallback_share']:.0%} of requests fall back to eager, padding "
        + (
            "-"
            if registered["padding_share"] is None
            else f"{registered['padding_share']:.0%} of graphed rows"
        )
        + f", expected {_num(registered['expected_latency_ns'], 1e3, '.1f')} µs/request"
    )
    if measured.get("mean_ns") is not None:
        line += f", measured {measured['mean_ns'] / 1e3:.1f} µs over {measured['requests']}"
    console.print(line, markup=False)
    rec = candidate["recommendation"]
    if rec is None:
        return
    table = Table(title=f"{candidate['name']}: bucket sets for this mix", title_justify="left")
    for col in ("buckets", "expected µs/request", "fallback", "padding", "graph MiB", ""):
        table.add_column(col, justify="left" if col == "buckets" else "right")
    chosen = rec["chosen"]["buckets"] if rec["chosen"] else None
    for s in rec["candidates"]:
        table.add_row(
            "none (eager)" if not s["buckets"] else ",".join(map(str, s["buckets"])),
            _num(s["expected_latency_ns"], 1e3, ".1f"),
            f"{s['fallback_share']:.0%}",
            "-" if s["padding_share"] is None else f"{s['padding_share']:.0%}",
            _num(s["graph_memory_bytes"], 2**20, ".1f"),
            "← pick" if s["buckets"] == chosen else "",
        )
    console.print(table)
    console.print(f"rule: {rec['rule']} ({rec['sets_evaluated']} sets evaluated)", markup=False)


def _num(value: float | None, scale: float, spec: str) -> str:
    return "-" if value is None else format(value / scale, spec)
