"""The per-rank table for a folder of per-rank traces: one row per rank, stragglers flagged.

:func:`rank_row` reduces one :class:`~traceinspect.model.Timeline` to a small JSON-ready
dict (it runs in the worker process that parsed the trace, so only the row crosses back);
:func:`ranks_report` gathers the rows and failures, flags stragglers and adds the
cross-rank view (:func:`cross_rank`: how verdicts and launch waits spread over the ranks,
and why the slowest ranks are slow); :func:`render_ranks` draws it with rich.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, Literal

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.diagnose import process_steps
from traceinspect.analysis.intervals import IntArray, union_ns
from traceinspect.analysis.result import TraceAnalysis
from traceinspect.analysis.summary import TraceSummary
from traceinspect.model import Timeline

#: A rank whose median step wall time exceeds the median over ranks by this factor is a
#: straggler: ranks of one data-parallel job wait for each other every step, so a 20 %
#: slower rank costs every rank 20 %; smaller spreads are within step-to-step jitter.
STRAGGLER_STEP_RATIO: Final = 1.2

#: The rank number in a file name: ``rank-3.json``, ``rank_3.pt.trace.json``, ``rank3.json``.
RANK_IN_NAME: Final = re.compile(r"rank[-_.]?(\d+)", re.IGNORECASE)

#: Slowest ranks explained in the cross-rank view.
SLOWEST_RANKS: Final = 3
#: Per-step time components compared between a slow rank and the median rank, in the order
#: they are named when equal: (JSON key, words).
STEP_COMPONENTS: Final = (
    ("launch_gap_ns", "launch gaps"),
    ("sync_ns", "host syncs"),
    ("collective_ns", "waiting in collectives"),
    ("compute_ns", "GPU work"),
)
#: A component explains a slow rank's step when it exceeds the median rank's by at least this
#: share of the median step (smaller differences are step-to-step jitter).
EXPLAINS_SHARE: Final = 0.02

#: ``TraceMeta.profiler`` key under which readers expose ``distributedInfo.rank``.
PROFILER_RANK_KEY: Final = "distributed_rank"
PROFILER_WORLD_KEY: Final = "distributed_world_size"


def rank_of(timeline: Timeline, file_name: str) -> tuple[int | None, str]:
    """The rank and where it came from: ``distributedInfo`` in the trace, else the file name."""
    text = timeline.meta.profiler.get(PROFILER_RANK_KEY, "")
    if text.strip().lstrip("-").isdigit():
        return int(text), "distributedInfo"
    match = RANK_IN_NAME.search(file_name)
    if match:
        return int(match.group(1)), "file name"
    return None, ""


def step_diagnosis(analysis: TraceAnalysis) -> dict[str, Any] | None:
    """The diagnosis of the rank's step (:attr:`TraceAnalysis.step`): verdict, idle by cause
    (median per step, ns), the share of the step's GPU window spent waiting on host
    launches and the share of the step replay would save (``saving_frac``, None without an
    estimate). ``None`` when nothing ran on the GPU."""
    step = analysis.step
    if not analysis.timeline.has_gpu_activity or step is None:
        return None
    idle = {cause: int(ns) for cause, ns in step.idle_ns.items()}
    return {
        "region": step.region.name,
        "occurrences": step.region.occurrences,
        "verdict": step.verdict,
        "window_ns": int(step.window_ns),
        "launch_wait_share": idle.get("host_launch", 0) / step.window_ns
        if step.window_ns
        else None,
        "idle_by_cause_ns": idle,
        "saving_frac": _saving_frac(step.estimate),
    }


def rank_step_walls(analysis: TraceAnalysis) -> IntArray | None:
    """The wall times (ns) of the rank's steps as its regions hold them: its profiler steps
    (an empty last step the profiler stopped in left out: :attr:`Region.cut_last_ns`), else
    its step region's occurrences (:attr:`TraceAnalysis.step`: a ``train_step`` range, the
    found step), as the step columns of a trace's per-process table read them; ``None``
    where the rank has neither (its step is the whole trace)."""
    walls = [
        r.region.wall_ns for r in analysis.region_results if r.region.source == "profiler_step"
    ]
    if walls:
        return np.concatenate(walls)
    step = analysis.step
    if step is None or step.region.source == "whole_trace":
        return None
    return np.asarray(step.region.wall_ns, np.int64)


def _saving_frac(estimate: Any) -> float | None:
    """The replay estimate's saving as a share of the eager step (JSON-ready)."""
    saving = getattr(estimate, "saving_frac", None)
    return float(saving) if saving is not None else None


def rank_row(
    timeline: Timeline,
    summary: TraceSummary,
    file_name: str,
    *,
    diagnosis: Mapping[str, Any] | None = None,
    step_walls_ns: IntArray | None = None,
) -> dict[str, Any]:
    """One rank's numbers, JSON-ready: busy time from the trace ``summary``; ``diagnosis``
    (verdict and idle causes) is passed through as given; the steps' wall times are
    ``step_walls_ns`` (:func:`rank_step_walls`) where given, else the trace's profiler
    step ranges; times are integer ns, shares in [0, 1] or ``None`` when undefined."""
    rank, rank_source = rank_of(timeline, file_name)
    gpu = timeline.gpu
    names = {d.id: d.name for d in summary.devices}
    devices = [d.device for d in summary.gpu]
    busy_ns = sum(d.busy_ns for d in summary.gpu)
    span_ns = sum(d.span_ns for d in summary.gpu)
    kernels = timeline.kernels
    # Collective kernels (NCCL/RCCL, ``gpu.collective``): the time ranks spend in them grows
    # when they wait for a straggler.
    collective = kernels["collective"].to_numpy(bool)
    collective_ns = union_ns(
        kernels["start_ns"].to_numpy()[collective], kernels["end_ns"].to_numpy()[collective]
    )
    if step_walls_ns is None:
        ann = timeline.annotations
        steps = ann[ann["source"] == "profiler_step"]
        step_walls = (steps["end_ns"] - steps["start_ns"]).to_numpy()
    else:
        step_walls = step_walls_ns
    world = timeline.meta.profiler.get(PROFILER_WORLD_KEY, "")
    return {
        "file": file_name,
        "rank": rank,
        "rank_source": rank_source,
        "world_size": int(world) if world.isdigit() else None,
        "format": timeline.meta.format,
        "devices": [{"id": d, "name": names.get(d, "")} for d in devices],
        "kernels": len(kernels),
        "gpu_activities": len(gpu),
        **_time_fields(span_ns, busy_ns, collective_ns, step_walls),
        "diagnosis": dict(diagnosis) if diagnosis is not None else None,
    }


def _time_fields(
    span_ns: int, busy_ns: int, collective_ns: int, step_walls: IntArray
) -> dict[str, Any]:
    """A row's GPU span, busy and collective times and shares, and its steps' count and
    median wall (:func:`rank_row`, :func:`process_rows`)."""
    return {
        "gpu_span_ns": span_ns,
        "gpu_busy_ns": busy_ns,
        "gpu_busy_share": busy_ns / span_ns if span_ns else None,
        "collective_kernel_ns": collective_ns,
        "collective_share": collective_ns / busy_ns if busy_ns else None,
        "steps": len(step_walls),
        "step_wall_median_ns": int(np.median(step_walls)) if len(step_walls) else None,
    }


def process_rows(analysis: TraceAnalysis) -> list[dict[str, Any]]:
    """The per-rank table's rows for one trace of several processes with GPU work (an
    Nsight Systems export of ``torchrun``, FSDP, DDP), one per process: what
    :func:`rank_row` gives a rank's own trace, read from that process's activities and its
    own step (:func:`~traceinspect.analysis.diagnose.process_steps`). Empty for a trace of
    one such process. A process's rank is unknown from the trace: ``rank`` is None,
    ``file`` reads ``pid N``."""
    timeline = analysis.timeline
    gpu = timeline.gpu
    if len(gpu) == 0:
        return []
    pid = gpu["pid"].to_numpy(np.int64)
    pids = np.unique(pid)
    if len(pids) < 2:
        return []
    start = gpu["start_ns"].to_numpy(np.int64)
    end = gpu["end_ns"].to_numpy(np.int64)
    device = gpu["device"].to_numpy(np.int64)
    kernel = (gpu["kind"] == "kernel").to_numpy(bool)
    collective = kernel & gpu["collective"].to_numpy(bool)
    names = {d.id: d.name for d in analysis.summary.devices}
    steps = process_steps(analysis.region_results, analysis.step.region if analysis.step else None)
    rows = []
    for p in pids.tolist():
        mine = pid == p
        devices = np.unique(device[mine]).tolist()
        span_ns = busy_ns = 0
        for d in devices:
            on = mine & (device == d)
            span_ns += int(end[on].max() - start[on].min())
            busy_ns += union_ns(start[on], end[on])
        collective_ns = union_ns(start[mine & collective], end[mine & collective])
        own = steps.get(p)
        walls = own.region.wall_ns if own is not None else np.empty(0, np.int64)
        diagnosis = None
        if own is not None:
            diagnosis = step_diagnosis(replace(analysis, step=own))
        rows.append(
            {
                "file": f"pid {p}",
                "process": p,
                "rank": None,
                "rank_source": "",
                "world_size": None,
                "format": timeline.meta.format,
                "devices": [{"id": d, "name": names.get(d, "")} for d in devices],
                "kernels": int((mine & kernel).sum()),
                "gpu_activities": int(mine.sum()),
                **_time_fields(span_ns, busy_ns, collective_ns, walls),
                "diagnosis": diagnosis,
            }
        )
    return rows


def processes_report(analysis: TraceAnalysis) -> dict[str, Any] | None:
    """:func:`ranks_report` over the processes of one trace (:func:`process_rows`), with
    ``unit`` ``process``; None for a trace of one process with GPU work."""
    rows = process_rows(analysis)
    if not rows:
        return None
    report = ranks_report(rows, [], folder="")
    del report["folder"], report["failed"], report["ignored_files"]  # one trace: none of these
    job = analysis.job.to_json() if analysis.job is not None else None
    return {"unit": "process", **report, "replayed_together": job}


def ranks_report(
    rows: Sequence[Mapping[str, Any]],
    failures: Sequence[Mapping[str, str]],
    *,
    folder: str,
    ignored_files: int = 0,
) -> dict[str, Any]:
    """All ranks, sorted by rank (then file), stragglers flagged against the median step."""
    ordered = sorted(
        (dict(r) for r in rows),
        key=lambda r: (r["rank"] is None, r["rank"] if r["rank"] is not None else 0, r["file"]),
    )
    walls = [r["step_wall_median_ns"] for r in ordered if r["step_wall_median_ns"] is not None]
    median_wall = statistics.median(walls) if len(walls) >= 2 else None
    for row in ordered:
        wall = row["step_wall_median_ns"]
        if median_wall and wall is not None:
            row["step_vs_median"] = wall / median_wall
            row["straggler"] = wall > STRAGGLER_STEP_RATIO * median_wall
        else:
            row["step_vs_median"] = None
            row["straggler"] = False
    notes: list[str] = []
    repeated = Counter(r["rank"] for r in ordered if r["rank"] is not None)
    notes.extend(
        f"rank {rank} appears in {count} files" for rank, count in repeated.items() if count > 1
    )
    worlds = sorted({r["world_size"] for r in ordered if r["world_size"] is not None})
    if len(worlds) > 1:
        sizes = ", ".join(str(w) for w in worlds)
        notes.append(f"world sizes differ ({sizes}): traces from different jobs?")
    elif worlds:
        seen = len({r["rank"] for r in ordered if r["rank"] is not None})
        if seen < worlds[0]:
            notes.append(f"{seen} of {worlds[0]} ranks present")
    return {
        "schema_version": 1,
        "folder": folder,
        "ranks": ordered,
        "cross_rank": cross_rank(ordered, median_wall),
        "failed": [dict(f) for f in failures],
        "ignored_files": ignored_files,
        "step_wall_median_ns": int(median_wall) if median_wall is not None else None,
        "straggler_step_ratio": STRAGGLER_STEP_RATIO,
        "stragglers": [
            r["rank"] if r["rank"] is not None else r["file"] for r in ordered if r["straggler"]
        ],
        "notes": notes,
    }


def step_components(row: Mapping[str, Any]) -> dict[str, float] | None:
    """Where one rank's step goes, ns per step: GPU idle waiting on host launches and on
    host syncs (medians over the step's occurrences, from the diagnosis), time in collective
    kernels (a rank waiting for its peers spends it there) and other GPU work (both averaged
    over the trace's steps). None without steps or a diagnosis."""
    diagnosis = row.get("diagnosis") or {}
    idle = diagnosis.get("idle_by_cause_ns")
    steps = row.get("steps") or 0
    if not idle or not steps:
        return None
    collective = row.get("collective_kernel_ns", 0) / steps
    return {
        "launch_gap_ns": float(idle.get("host_launch", 0)),
        "sync_ns": float(idle.get("sync", 0)),
        "collective_ns": collective,
        "compute_ns": max(0.0, row.get("gpu_busy_ns", 0) / steps - collective),
    }


def _spread(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = np.sort(np.asarray(values, dtype=float))
    return {
        "min": float(ordered[0]),
        "median": float(np.median(ordered)),
        "p90": float(np.quantile(ordered, 0.9)),
        "max": float(ordered[-1]),
    }


def cross_rank(rows: Sequence[Mapping[str, Any]], median_wall: float | None) -> dict[str, Any]:
    """The launch-bound diagnosis across ranks: how many ranks got each verdict, the spread
    of the launch-wait share and of the replay saving over ranks, and the slowest ranks
    with the step components in which they exceed the median rank."""
    diagnoses = [r["diagnosis"] for r in rows if r.get("diagnosis") and "verdict" in r["diagnosis"]]
    verdicts = Counter(str(d["verdict"]) for d in diagnoses)
    launch = [d["launch_wait_share"] for d in diagnoses if d.get("launch_wait_share") is not None]
    saving = [d["saving_frac"] for d in diagnoses if d.get("saving_frac") is not None]
    components = [c for c in map(step_components, rows) if c is not None]
    typical = (
        {key: float(np.median([c[key] for c in components])) for key, _ in STEP_COMPONENTS}
        if components
        else None
    )
    slowest = []
    # Ranks slower than the median rank, slowest first.
    slower = [r for r in rows if (r.get("step_vs_median") or 0) > 1]
    slower.sort(key=lambda r: -r["step_wall_median_ns"])
    for row in slower[:SLOWEST_RANKS]:
        mine = step_components(row)
        excess = (
            {key: mine[key] - typical[key] for key, _ in STEP_COMPONENTS}
            if mine is not None and typical is not None
            else {}
        )
        floor = EXPLAINS_SHARE * (median_wall or 0)
        reasons = sorted(
            (key for key, ns in excess.items() if ns > floor), key=lambda k: -excess[k]
        )
        slowest.append(
            {
                "rank": row["rank"],
                "file": row["file"],
                "step_wall_median_ns": row["step_wall_median_ns"],
                "step_vs_median": row.get("step_vs_median"),
                "excess_ns": excess,
                "why": reasons,
            }
        )
    return {
        "ranks_with_diagnosis": len(diagnoses),
        "verdicts": dict(sorted(verdicts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "launch_wait_share": _spread(launch),
        "saving_frac": _spread(saving),
        "median_rank_step_ns": typical,
        "slowest": slowest,
    }


def _ms(ns: int | float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.2f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


_SHORT_CAUSE: Final = {"host_launch": "launch", "dependency": "dep"}


def _diagnosis_cells(diagnosis: Mapping[str, Any] | None) -> list[str]:
    if not diagnosis or "verdict" not in diagnosis:
        return ["-", "-", "-", "-"]
    idle = diagnosis.get("idle_by_cause_ns") or {}
    total = sum(idle.values())
    cause, ns = max(idle.items(), key=lambda kv: kv[1]) if idle else ("", 0)
    top_idle = f"{_SHORT_CAUSE.get(cause, cause)} {ns / total:.0%}" if total and ns else "-"
    saving = diagnosis.get("saving_frac")
    return [
        str(diagnosis["verdict"]),
        _share(diagnosis.get("launch_wait_share")),
        top_idle,
        "-" if saving is None else f"{saving:.0%}",
    ]


def render_ranks(data: Mapping[str, Any], console: Console) -> None:
    """The per-rank table of a folder of per-rank traces, or (``unit`` ``process``:
    :func:`processes_report`) the per-process table of one trace of several processes."""
    rows = data["ranks"]
    failed = data.get("failed", [])
    processes = data.get("unit") == "process"
    unit = "processes" if processes else "ranks"
    if processes:
        console.print(f"{len(rows)} processes with GPU work in this trace")
    else:
        console.print(
            f"[bold]{escape(data['folder'])}[/bold]  {len(rows)} rank traces analyzed"
            + (f", {len(failed)} failed" if failed else "")
            + (f", {data['ignored_files']} other files ignored" if data["ignored_files"] else "")
        )
    if rows:
        with_diagnosis = any(r["diagnosis"] for r in rows)
        headers = ["rank", "file", "GPU", "kernels", "busy", "comm", "steps", "step ms", "×median"]
        if processes:
            headers = headers[1:]
            headers[0] = "process"
        if with_diagnosis:
            headers += ["verdict", "launch", "top idle", "saving"]
        body = []
        for r in rows:
            ratio = "-" if r["step_vs_median"] is None else f"{r['step_vs_median']:.2f}"
            cells = [
                str(r["rank"]) if r["rank"] is not None else "-",
                r["file"],
                ",".join(str(d["id"]) for d in r["devices"]) or "-",
                f"{r['kernels']:,}",
                _share(r["gpu_busy_share"]),
                _share(r["collective_share"]),
                f"{r['steps']:,}",
                _ms(r["step_wall_median_ns"]),
                ratio + ("*" if r["straggler"] else ""),
            ]
            if processes:
                cells = cells[1:]
            if with_diagnosis:
                cells += _diagnosis_cells(r["diagnosis"])
            body.append(cells)
        title = "Per process" if processes else "Per rank"
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for i, header in enumerate(headers):
            width = max(len(header), *(len(cells[i]) for cells in body))
            if header == "file":
                # The file name gives way first when the terminal is narrow.
                table.add_column(header, overflow="ellipsis", max_width=40)
            else:
                numeric = header not in ("GPU", "verdict", "top idle")
                justify: Literal["left", "right"] = "right" if numeric else "left"
                table.add_column(header, justify=justify, no_wrap=True, min_width=width)
        for r, cells in zip(rows, body, strict=True):
            style = "bold red" if r["straggler"] else None
            table.add_row(*(escape(c) for c in cells), style=style)
        console.print(table)
        if data["step_wall_median_ns"] is not None:
            console.print(
                f"Median step over {unit}: {_ms(data['step_wall_median_ns'])} ms; "
                f"* straggler (step > {data['straggler_step_ratio']:.2f}× median): "
                + (", ".join(str(s) for s in data["stragglers"]) or "none")
            )
        if with_diagnosis:
            console.print(
                "verdict: the step's; launch: share of the step's GPU window spent waiting on "
                "host launches; top idle: the largest cause of GPU idle in the step; saving: "
                "what replaying the step as CUDA graphs would save (estimated from the trace)"
            )
    _render_cross_rank(data.get("cross_rank"), console, unit)
    together = data.get("replayed_together")
    if together:
        console.print(escape(replayed_together_said(together, unit)))
    for failure in failed:
        console.print(f"[red]failed:[/] {escape(failure['file'])}: {escape(failure['error'])}")
    for note in data["notes"]:
        console.print(f"[yellow]note:[/] {escape(note)}")


_COMPONENT_WORDS: Final = dict(STEP_COMPONENTS)


def _render_cross_rank(
    view: Mapping[str, Any] | None, console: Console, unit: str = "ranks"
) -> None:
    if not view or not view["ranks_with_diagnosis"]:
        return
    one = "process" if unit == "processes" else "rank"
    counts = ", ".join(f"{verdict} {n}" for verdict, n in view["verdicts"].items())
    line = f"Across {view['ranks_with_diagnosis']} {unit}: {counts}"
    launch = view["launch_wait_share"]
    if launch:
        line += (
            f"; waiting on launches {launch['median']:.0%} of the step's GPU window at the "
            f"median {one} (p90 {launch['p90']:.0%}, max {launch['max']:.0%})"
        )
    saving = view["saving_frac"]
    if saving:
        line += (
            f"; replay would save {saving['median']:.0%} at the median {one} "
            f"({saving['min']:.0%}–{saving['max']:.0%})"
        )
    console.print(escape(line))
    if view["slowest"]:
        console.print(f"Slowest {unit}, per step against the median {one}:")
    for slow in view["slowest"]:
        who = f"rank {slow['rank']}" if slow["rank"] is not None else slow["file"]
        ratio = slow["step_vs_median"]
        head = f"  {who}: step {_ms(slow['step_wall_median_ns'])} ms" + (
            f" ({ratio:.2f}× median)" if ratio is not None else ""
        )
        excess = slow["excess_ns"]
        if slow["why"]:
            reasons = ", ".join(
                f"{_COMPONENT_WORDS[key]} +{_ms(excess[key])} ms" for key in slow["why"]
            )
            head += f" — more than the median {one} in {reasons} per step"
        elif excess:
            head += f" — no component exceeds the median {one}'s"
        else:
            head += f" — no GPU step diagnosis for this {one}"
        console.print(escape(head))


def replayed_together_said(job: Mapping[str, Any], unit: str = "processes") -> str:
    """The job estimate (:class:`~traceinspect.analysis.job.JobEstimate`, as JSON) in one
    line; ``unit`` ``processes`` (one trace's) or ``ranks`` (a folder's)."""
    ranks = len(job["processes"])
    every = "both" if ranks == 2 else f"all {ranks}"
    one = unit.removesuffix("es") if unit == "processes" else unit.removesuffix("s")
    return (
        f"Replayed together ({every} {unit}' steps as graphs, each collective at its "
        f"wait-free time, the shortest of its kernels over the {unit}): "
        f"{job['graphed_us'] / 1000:,.2f} ms a step (range {job['low_us'] / 1000:,.2f}–"
        f"{job['high_us'] / 1000:,.2f}) against {job['eager_us'] / 1000:,.2f} ms eager, the "
        f"slowest {one}'s ({'measured' if job['eager_source'] == 'measured' else 'trace'}): "
        f"a saving of {job['saving_frac']:.0%} (range {job['saving_low_frac']:.0%} to "
        f"{job['saving_high_frac']:.0%}); with the collectives as traced, "
        f"{job['graphed_as_traced_us'] / 1000:,.2f} ms — {job['wait_us'] / 1000:,.2f} ms a step "
        f"of the collectives' time is waiting on another {one} (median of {job['steps']} "
        "paired steps)"
    )
