"""``--csv DIR``: the analysis as four CSV tables, the numbers ``--json`` gives.

* ``regions.csv`` — one row per region: the columns of :attr:`TraceAnalysis.regions`
  (``name``, ``process``, ``verdict``, ``graphed_us``, ``saving_frac``, ...), plus the
  saving's range and the graph decision (``decision``, ``decision_reason``); ``process`` is
  the region's pid in a multi-process trace, empty otherwise;
* ``kernels.csv`` — one row per kernel name: ``name``, ``count``, ``total_us``,
  ``mean_us``, ``share``;
* ``gaps.csv`` — one row per idle gap of a region occurrence's GPU window: ``start_us``,
  ``end_us`` (the timeline's clock), ``duration_us``, ``device`` and ``stream`` (of the
  activity that ended the gap), ``region``, ``source``, ``process`` (as in ``regions.csv``),
  ``occurrence`` (0-based), ``cause``, ``detail`` and ``next_activity``;
* ``processes.csv`` — one row per process with GPU work in a trace of several (an Nsight
  Systems export of ``torchrun``), the columns of :attr:`TraceAnalysis.processes` (the
  per-process table); only its header for a trace of one process, so that the folder holds
  the same four files after every run (and no table of an earlier trace).

Times are µs; names are whole (the terminal abbreviates them, CSV never does). Empty cells
are unknowns. :func:`csv_tables` builds the tables; the CLI writes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
import pandas as pd

from traceinspect.report.decision import decision_summary

if TYPE_CHECKING:
    from traceinspect.analysis.result import TraceAnalysis

CSV_FILES: Final = ("regions.csv", "kernels.csv", "gaps.csv", "processes.csv")


def csv_tables(analysis: TraceAnalysis) -> dict[str, pd.DataFrame]:
    """File name -> table, for each of :data:`CSV_FILES` (``processes.csv`` without rows
    where the trace holds one process with GPU work)."""
    return {
        "regions.csv": regions_table(analysis),
        "kernels.csv": analysis.kernels.copy(),
        "gaps.csv": gaps_table(analysis),
        "processes.csv": analysis.processes.copy(),
    }


def render_csv(analysis: TraceAnalysis) -> dict[str, str]:
    """File name -> CSV text."""
    return {name: table.to_csv(index=False) for name, table in csv_tables(analysis).items()}


def regions_table(analysis: TraceAnalysis) -> pd.DataFrame:
    table = analysis.regions.copy()
    results = analysis.region_results
    table["saving_low_frac"] = [
        round(r.estimate.saving_low_frac, 4) if r.estimate is not None else np.nan
        for r in results
    ]
    table["saving_high_frac"] = [
        round(r.estimate.saving_high_frac, 4) if r.estimate is not None else np.nan
        for r in results
    ]
    decisions = [getattr(r, "decision", None) for r in results]
    table["decision"] = [d.choice if d is not None else "" for d in decisions]
    table["decision_reason"] = [decision_summary(d) if d is not None else "" for d in decisions]
    return table


def gaps_table(analysis: TraceAnalysis) -> pd.DataFrame:
    gaps = analysis.gaps
    gpu = analysis.timeline.gpu
    rows = np.concatenate(
        [np.asarray(r.gaps.next_row, np.int64) for r in analysis.region_results]
        or [np.empty(0, np.int64)]
    )
    known = rows >= 0
    device = np.full(len(rows), -1, np.int64)
    stream = np.full(len(rows), -1, np.int64)
    device[known] = gpu["device"].to_numpy(np.int64)[rows[known]]
    stream[known] = gpu["stream"].to_numpy(np.int64)[rows[known]]
    start = gaps["start_ns"].to_numpy(np.int64)
    end = gaps["end_ns"].to_numpy(np.int64)
    return pd.DataFrame(
        {
            "start_us": _exact_us(start),
            "end_us": _exact_us(end),
            "duration_us": (end - start) / 1000,
            "device": pd.array(np.where(known, device, -1), dtype="Int64").astype(object),
            "stream": pd.array(np.where(known, stream, -1), dtype="Int64").astype(object),
            "region": gaps["region"].to_numpy(object),
            "source": gaps["source"].to_numpy(object),
            "process": gaps["process"].to_numpy(object),
            "occurrence": gaps["occurrence"].to_numpy(np.int64),
            "cause": gaps["cause"].to_numpy(object),
            "detail": gaps["detail"].to_numpy(object),
            "next_activity": gaps["next_activity"].to_numpy(object),
        }
    )


def _exact_us(ns: np.ndarray) -> list[str]:
    """µs with all the ns, as text (epoch ns would lose digits in a float64)."""
    return [f"{v // 1000}.{v % 1000:03d}" for v in ns.tolist()]
