"""Copies of real traces with their step annotations removed, for the step-detection tests.

``strip_kineto`` drops ``ProfilerStep#N`` (as ``cpu_op`` or ``user_annotation``), every
``record_function`` range (``user_annotation``) and its GPU projection
(``gpu_user_annotation``) from a Kineto trace; ``strip_nsys`` empties the NVTX tables of an
Nsight Systems SQLite export. Everything else — kernels, launches, copies, syncs, operators —
stays byte-for-byte what was recorded, so a detector sees exactly what an unannotated run of
the same script would have produced.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

ANNOTATION_CATS = frozenset({"user_annotation", "gpu_user_annotation"})


def is_annotation(event: dict[str, Any]) -> bool:
    name = str(event.get("name", ""))
    return event.get("cat") in ANNOTATION_CATS or name.startswith("ProfilerStep#")


def strip_kineto(source: Path, dest_dir: Path) -> Path:
    """Write ``source`` without annotation events to ``dest_dir`` (same file name)."""
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", encoding="utf-8") as f:
        trace = json.load(f)
    trace["traceEvents"] = [e for e in trace["traceEvents"] if not is_annotation(e)]
    dest = dest_dir / source.name
    with gzip.open(dest, "wt", encoding="utf-8") as f:
        json.dump(trace, f)
    return dest


def strip_nsys(source: Path, dest_dir: Path) -> Path:
    """Write ``source`` (``.sqlite`` or ``.sqlite.gz``) without its NVTX ranges."""
    dest = dest_dir / source.name.removesuffix(".gz")
    if source.suffix == ".gz":
        with gzip.open(source, "rb") as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out)
    else:
        shutil.copyfile(source, dest)
    with sqlite3.connect(dest) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in tables:
            if table.startswith("NVTX_EVENTS"):
                db.execute(f"DELETE FROM {table}")
    return dest
