"""The trace summary: what is in the trace, before any diagnosis.

:func:`summarize` builds plain JSON-ready data; :func:`render_summary` draws it with rich.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from traceinspect.analysis.intervals import union_ns
from traceinspect.model import Timeline

_OCCURRENCE_SUFFIX = re.compile(r"#\d+$")


def summarize(timeline: Timeline, *, top: int = 10) -> dict[str, Any]:
    """Devices, streams, activity counts, GPU busy share, top kernels, launch APIs, regions."""
    gpu = timeline.gpu
    meta = timeline.meta
    data: dict[str, Any] = {
        "path": meta.path,
        "format": meta.format,
        "generation": meta.generation,
        "devices": [{"id": d.id, "name": d.name} for d in meta.devices],
        "notes": list(meta.notes),
    }
    kinds = gpu["kind"].value_counts()
    data["activities"] = {k: int(kinds.get(k, 0)) for k in ("kernel", "memcpy", "memset", "graph")}
    per_device = []
    devices = gpu["device"].to_numpy()
    streams_col = gpu["stream"].to_numpy()
    starts = gpu["start_ns"].to_numpy()
    ends = gpu["end_ns"].to_numpy()
    is_kernel = (gpu["kind"] == "kernel").to_numpy()
    for device in np.unique(devices):
        on_device = devices == device
        start, end = int(starts[on_device].min()), int(ends[on_device].max())
        busy = union_ns(starts[on_device], ends[on_device])
        streams = []
        for stream in np.unique(streams_col[on_device]):
            sel = on_device & (streams_col == stream)
            streams.append(
                {
                    "stream": int(stream),
                    "activities": int(sel.sum()),
                    "kernels": int((sel & is_kernel).sum()),
                    "busy_ns": union_ns(starts[sel], ends[sel]),
                }
            )
        per_device.append(
            {
                "device": int(device),
                "span_ns": end - start,
                "busy_ns": busy,
                "busy_share": busy / (end - start) if end > start else None,
                "streams": streams,
            }
        )
    data["gpu"] = per_device
    kernels = timeline.kernels
    if len(kernels):
        dur = kernels["end_ns"] - kernels["start_ns"]
        total = int(dur.sum())
        agg = (
            dur.groupby(kernels["name"], sort=False)
            .agg(["count", "sum", "mean"])
            .sort_values("sum", ascending=False)
            .head(top)
        )
        data["top_kernels"] = [
            {
                "name": str(name),
                "count": int(row["count"]),
                "total_ns": int(row["sum"]),
                "mean_ns": int(round(row["mean"])),
                "share": int(row["sum"]) / total if total else None,
            }
            for name, row in agg.iterrows()
        ]
    else:
        data["top_kernels"] = []
    host = timeline.host
    launched = host[host["kind"].isin(["launch", "graph_launch", "memcpy", "memset"])]
    apis = launched.groupby(["name", "api", "kind"], sort=False).size()
    data["launch_apis"] = [
        {"name": str(key[0]), "api": str(key[1]), "kind": str(key[2]), "count": int(count)}
        for key, count in apis.sort_values(ascending=False).items()
        if isinstance(key, tuple)
    ]
    ann = timeline.annotations
    if len(ann):
        base = ann["name"].str.replace(_OCCURRENCE_SUFFIX, "", regex=True)
        counts = ann.groupby([base, ann["source"]], sort=False).size()
        data["annotations"] = [
            {"name": str(key[0]), "source": str(key[1]), "count": int(count)}
            for key, count in counts.sort_values(ascending=False).items()
            if isinstance(key, tuple)
        ]
    else:
        data["annotations"] = []
    unlaunched = int((gpu["launch_row"].to_numpy() == -1).sum()) if len(gpu) else 0
    data["without_launch_record"] = unlaunched
    data["from_graph"] = int(np.count_nonzero(gpu["from_graph"].to_numpy())) if len(gpu) else 0
    return data


def _us(ns: int | float) -> str:
    return f"{ns / 1000:,.1f}"


def render_summary(data: dict[str, Any], console: Console) -> None:
    devices = ", ".join(f"{d['id']}: {d['name'] or '?'}" for d in data["devices"]) or "none listed"
    console.print(
        f"[bold]{escape(data['path'])}[/bold]  {data['format']} ({data['generation']})  "
        f"devices: {escape(devices)}"
    )
    acts = data["activities"]
    if not data["gpu"]:
        console.print("No GPU activity in this trace (CPU-only profile).")
    else:
        console.print(
            f"{acts['kernel']:,} kernels, {acts['memcpy']:,} memcpy, {acts['memset']:,} memset"
            + (f", {acts['graph']:,} whole-graph records" if acts["graph"] else "")
            + (f"; {data['from_graph']:,} from graph launches" if data["from_graph"] else "")
        )
        table = Table(title="GPU busy", title_justify="left")
        for col in ("device", "stream", "activities", "kernels", "busy ms", "busy share"):
            table.add_column(col, justify="right")
        for dev in data["gpu"]:
            share = dev["busy_share"]
            table.add_row(
                str(dev["device"]),
                "all",
                f"{sum(s['activities'] for s in dev['streams']):,}",
                f"{sum(s['kernels'] for s in dev['streams']):,}",
                f"{dev['busy_ns'] / 1e6:,.3f}",
                f"{share:.1%}" if share is not None else "-",
            )
            for s in dev["streams"]:
                table.add_row(
                    "",
                    str(s["stream"]),
                    f"{s['activities']:,}",
                    f"{s['kernels']:,}",
                    f"{s['busy_ns'] / 1e6:,.3f}",
                    "",
                )
        console.print(table)
    if data["top_kernels"]:
        table = Table(title="Top kernels by total time", title_justify="left")
        table.add_column("kernel", overflow="ellipsis", max_width=70, no_wrap=True)
        for col in ("count", "total µs", "mean µs", "share"):
            table.add_column(col, justify="right")
        for k in data["top_kernels"]:
            table.add_row(
                escape(k["name"]),
                f"{k['count']:,}",
                _us(k["total_ns"]),
                _us(k["mean_ns"]),
                f"{k['share']:.1%}" if k["share"] is not None else "-",
            )
        console.print(table)
    if data["launch_apis"]:
        apis = ", ".join(f"{a['name']} ({a['api']}) ×{a['count']:,}" for a in data["launch_apis"])
        console.print(escape(f"Launch APIs: {apis}"))
    if data["without_launch_record"]:
        console.print(
            f"[yellow]{data['without_launch_record']:,} GPU activities have no launch record[/]"
        )
    if data["annotations"]:
        shown = data["annotations"][:12]
        text = ", ".join(f"{a['name']} ({a['source']}) ×{a['count']:,}" for a in shown)
        more = len(data["annotations"]) - len(shown)
        console.print(escape(f"Annotations: {text}" + (f" (+{more} more)" if more > 0 else "")))
