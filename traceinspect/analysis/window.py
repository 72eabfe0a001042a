"""One stretch of a timeline as a timeline of its own.

``traceinspect profile --nsys`` records the script and the measured graph candidates in one
Nsight Systems report, each part inside an NVTX section; the script's diagnosis and each
candidate's prediction read their own section, as the torch-profiler path reads its separate
trace files.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from traceinspect.model import Timeline
from traceinspect.parse._nesting import nesting_depth


def section_bounds(timeline: Timeline, name: str) -> tuple[int, int] | None:
    """[start, end) of the first host annotation named ``name``, or None."""
    ann = timeline.annotations
    found = ann[(ann["name"] == name) & (ann["pid"] >= 0)]
    if not len(found):
        return None
    first = found.iloc[0]
    return int(first["start_ns"]), int(first["end_ns"])


def window(timeline: Timeline, start_ns: int, end_ns: int, *, drop_prefix: str = "") -> Timeline:
    """The part of ``timeline`` issued in [``start_ns``, ``end_ns``): host calls, operators,
    annotations and syncs that start in it, the GPU activities those calls launched (and,
    without a launch record, those starting in it). Annotations named with ``drop_prefix``
    (the sections themselves) are left out, and the others' nesting depths recomputed."""
    host = timeline.host
    host_start = host["start_ns"].to_numpy()
    keep_host = (host_start >= start_ns) & (host_start < end_ns)
    new_row = np.full(len(host) + 1, -1, dtype=np.int64)  # last slot: launch_row -1
    new_row[np.flatnonzero(keep_host)] = np.arange(int(keep_host.sum()), dtype=np.int64)
    gpu = timeline.gpu
    launch = gpu["launch_row"].to_numpy()
    gpu_start = gpu["start_ns"].to_numpy()
    keep_gpu = np.where(
        launch >= 0,
        keep_host[np.maximum(launch, 0)] if len(host) else False,
        (gpu_start >= start_ns) & (gpu_start < end_ns),
    ).astype(bool)
    sliced_gpu = gpu[keep_gpu].reset_index(drop=True)
    sliced_gpu["launch_row"] = new_row[sliced_gpu["launch_row"].to_numpy()]

    def starting(frame: pd.DataFrame) -> pd.DataFrame:
        begin = frame["start_ns"].to_numpy()
        return frame[(begin >= start_ns) & (begin < end_ns)].reset_index(drop=True)

    annotations = starting(timeline.annotations)
    if drop_prefix:
        annotations = annotations[~annotations["name"].str.startswith(drop_prefix)]
        annotations = annotations.reset_index(drop=True)
        # Without the sections, the ranges they held are outermost again.
        annotations["depth"] = nesting_depth(
            annotations["pid"].to_numpy(),
            annotations["tid"].to_numpy(),
            annotations["start_ns"].to_numpy(),
            annotations["end_ns"].to_numpy(),
        )
    sliced = replace(
        timeline,
        gpu=sliced_gpu,
        host=host[keep_host].reset_index(drop=True),
        cpu_ops=starting(timeline.cpu_ops),
        annotations=annotations,
        syncs=starting(timeline.syncs),
    )
    sliced.validate()
    return sliced
