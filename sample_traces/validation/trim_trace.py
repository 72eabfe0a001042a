"""Cut a Kineto trace after the K-th occurrence of an event, to keep a recording small.

Host events (operators, runtime calls, annotations, Python functions) that start after the
cut are dropped and those that span it end at it; GPU activities and flow events are kept
exactly when their launch (``correlation``) is kept, GPU-side annotations (which have none)
when they start before the cut. Metadata stays. Timestamps are not touched: the trimmed
trace is the head of the recorded one.

    python trim_trace.py IN.json.gz OUT.json.gz --after "Optimizer.step#AdamW.step" \
        --max-bytes 1500000

``--after`` is a substring of the event name; the cut is the end of its K-th occurrence,
with the largest K (at most ``--count``) that keeps OUT under ``--max-bytes``. Prints K.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

GPU = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}
FLOW = {"ac2g"}


def trim(events: list[dict[str, Any]], cut: Decimal) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    correlations = set()
    for e in events:
        cat = e.get("cat")
        if e.get("ph") == "M" or cat in GPU or cat in FLOW or "ts" not in e:
            continue
        ts = Decimal(str(e["ts"]))
        if ts > cut:
            continue
        if "dur" in e and ts + Decimal(str(e["dur"])) > cut:
            e = {**e, "dur": cut - ts}
        corr = (e.get("args") or {}).get("correlation")
        if corr is not None:
            correlations.add(corr)
        kept.append(e)
    for e in events:
        cat = e.get("cat")
        if e.get("ph") == "M" or "ts" not in e:
            kept.append(e)
        elif cat == "gpu_user_annotation":
            # Kineto gives these no launch to follow: kept where they start before the cut.
            if Decimal(str(e["ts"])) <= cut:
                kept.append(e)
        elif cat in GPU:
            if (e.get("args") or {}).get("correlation") in correlations:
                kept.append(e)
        elif cat in FLOW and e.get("id") in correlations:
            kept.append(e)
    return kept


def _dumps(doc: dict[str, Any]) -> str:
    """JSON with every number written as it was read (floats kept as exact decimals)."""
    text = json.dumps(doc, default=lambda d: f"@@num@@{d}", separators=(",", ":"))
    return _NUM.sub(r"\1", text)


_NUM = re.compile(r'"@@num@@([-0-9.eE+]+)"')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("dst", type=Path)
    ap.add_argument("--after", required=True, help="substring of the event name to cut after")
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--max-bytes", type=int, default=1_500_000)
    args = ap.parse_args()
    with gzip.open(args.src, "rt") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc["traceEvents"]
    marks = sorted(
        (Decimal(str(e["ts"])) + Decimal(str(e.get("dur", 0))))
        for e in events
        if e.get("ph") == "X" and args.after in str(e.get("name", "")) and e.get("cat") not in GPU
    )
    for k in range(min(args.count, len(marks)), 0, -1):
        out = {**doc, "traceEvents": trim(events, marks[k - 1])}
        out.setdefault("traceinspect_trimmed", {})
        out["traceinspect_trimmed"] = {"after": args.after, "occurrences_kept": k,
                                       "occurrences_recorded": len(marks)}  # fmt: skip
        data = gzip.compress(_dumps(out).encode(), 9, mtime=0)
        if len(data) <= args.max_bytes or k == 1:
            args.dst.write_bytes(data)
            print(f"{args.dst}: kept {k} of {len(marks)} ({len(data):,} bytes)")
            return


if __name__ == "__main__":
    main()
