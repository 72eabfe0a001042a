"""Merge calibrations of one GPU model into one profile: each number the mean of the files'
(table rows matched by position), text fields from the first file, and the input copy's host
cost, when recordings are given, the median of their ``traceinspect profile`` copy probes
(``host_costs``), as the built-in H200 profile's is.

    python sample_traces/validation/calibrations/merge.py OUT CAL.json [CAL.json ...] \
        [--probes SET_DIR ...]

Made the built-in H100 profile (``traceinspect/calibration/nvidia-h100-80gb-hbm3.json``)
from ``h100-2026-12-02-a.json`` and ``-b.json`` and the probes of ``h100_holdout17`` and
``h100_holdout18``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def mean(values: list[Any]) -> Any:
    first = values[0]
    if isinstance(first, bool) or not isinstance(first, (int, float, list, dict)):
        return first
    if isinstance(first, dict):
        return {k: mean([v[k] for v in values]) for k in first}
    if isinstance(first, list):
        if any(len(v) != len(first) for v in values):
            raise SystemExit("tables differ in length")
        return [mean([v[i] for v in values]) for i in range(len(first))]
    m = sum(values) / len(values)
    return int(round(m)) if all(isinstance(v, int) for v in values) else m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("calibrations", type=Path, nargs="+")
    parser.add_argument("--probes", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    files = [json.loads(p.read_text()) for p in args.calibrations]
    merged = {k: mean([f[k] for f in files]) for k in files[0] if all(k in f for f in files)}
    merged["merged_from"] = [p.name for p in args.calibrations]
    warm, first = [], []
    for folder in args.probes:
        for results in sorted(folder.glob("*/results.json")):
            for probe in (json.loads(results.read_text()).get("host_costs") or {}).get(
                "probes", []
            ):
                warm.append(probe["copy_warm_host_ns"])
                first.append(probe["copy_first_host_ns"])
    if warm:
        merged["copy_warm_host_ns"] = int(statistics.median(warm))
        merged["copy_launch_host_ns"] = int(statistics.median(first))
        merged["copy_probes"] = len(warm)
    args.out.write_text(json.dumps(merged, indent=1) + "\n")
    print(f"wrote {args.out} from {len(files)} calibrations and {len(warm)} copy probes")


if __name__ == "__main__":
    main()
