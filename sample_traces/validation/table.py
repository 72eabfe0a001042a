"""Print the validation set's table (markdown) from the recorded results.json files.

    python sample_traces/validation/table.py [FOLDER]

One row per workload folder (``<name>/results.json``) and per unannotated script's --mark
run (``unannotated/<name>/mark.results.json``): eager and graphed host p50 over all rounds,
the range of the rounds' p50s, the first eager round's p50, the saving, kernels per step
(kernel activities in the candidate's eager trace / profiled steps) and the estimator's
prediction made by the collector from the eager trace.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:,.1f}"


def _kernels(trace: Path, steps: int) -> float | None:
    if not trace.is_file():
        return None
    with gzip.open(trace, "rt") as f:
        events = json.load(f)["traceEvents"]
    return sum(e.get("cat") == "kernel" for e in events) / steps


def rows(folder: Path) -> list[dict[str, Any]]:
    found = sorted(folder.glob("*/results.json")) + sorted(
        folder.glob("unannotated/*/mark.results.json")
    )
    out = []
    for path in found:
        data = json.loads(path.read_text())
        by_mode = {r["mode"]: r for r in data["rows"] if r["in_bucket_set"]}
        eager, graphed = by_mode.get("eager"), by_mode.get("graphed")
        if not eager or not graphed or eager["host_p50_ns"] is None:
            continue
        prefix = "mark." if path.name.startswith("mark.") else ""
        steps = data["options"]["profile_steps"]
        name = path.parent.name if not prefix else f"unannotated/{path.parent.name}"
        out.append(
            {
                "name": name,
                "eager": eager,
                "graphed": graphed,
                "kernels": _kernels(path.parent / f"{prefix}{eager['trace']}", steps),
                "saving": 1 - graphed["host_p50_ns"] / eager["host_p50_ns"]
                if graphed["host_p50_ns"]
                else None,
            }
        )
    return out


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    print(
        "| workload | eager p50 µs (rounds' p50 min–max) | eager round 1 µs "
        "| graphed p50 µs (min–max) | saving | kernels/step | predicted µs | correct |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows(folder):
        e, g = r["eager"], r["graphed"]
        print(
            f"| `{r['name']}` "
            f"| {_us(e['host_p50_ns'])} ({_us(e['round_host_p50_min_ns'])}–"
            f"{_us(e['round_host_p50_max_ns'])}) "
            f"| {_us(e['round_host_p50_ns'][0])} "
            f"| {_us(g['host_p50_ns'])} ({_us(g['round_host_p50_min_ns'])}–"
            f"{_us(g['round_host_p50_max_ns'])}) "
            f"| {'-' if r['saving'] is None else format(r['saving'], '.1%')} "
            f"| {'-' if r['kernels'] is None else format(r['kernels'], 'g')} "
            f"| {_us(g['predicted_ns'])} "
            f"| {'-' if g['correct'] is None else ('yes' if g['correct'] else 'NO')} |"
        )


if __name__ == "__main__":
    main()
