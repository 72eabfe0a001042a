"""The HTML timeline's data: exact busy share per lane and kind, distinct colours."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sample_file

from traceinspect.analysis.summary import summarize
from traceinspect.model import Timeline, TraceMeta, make_table
from traceinspect.parse import load_trace
from traceinspect.report.html_timeline import OVERVIEW_BINS, SERIES_STYLE, timeline_data

EPOCH_NS = 1_700_000_000_000_000_123


def memset_storm(units: int = 2_000) -> Timeline:
    """Per 30 µs: one 25 µs kernel, then five 0.7 µs memsets. Memsets are 5 of every 6
    activities but 11.7 % of the time; kernels 83.3 %."""
    period, kernel, memset = 30_000, 25_000, 700
    base = EPOCH_NS + np.arange(units, dtype=np.int64) * period
    kinds, starts, ends = [], [], []
    for unit_start in base:
        kinds.append("kernel")
        starts.append(unit_start)
        ends.append(unit_start + kernel)
        for j in range(5):
            s = unit_start + kernel + j * memset
            kinds.append("memset")
            starts.append(s)
            ends.append(s + memset)
    n = len(kinds)
    gpu = make_table(
        "gpu",
        {
            "kind": kinds,
            "name": ["gemm" if k == "kernel" else "Memset (Device)" for k in kinds],
            "device": [0] * n,
            "stream": [7] * n,
            "start_ns": np.array(starts, dtype=np.int64),
            "end_ns": np.array(ends, dtype=np.int64),
        },
    )
    return Timeline(meta=TraceMeta(path="storm.json", format="kineto", generation="k"), gpu=gpu)


def test_overview_is_the_exact_busy_share_per_kind() -> None:
    data = timeline_data(memset_storm(), bins=100)
    overview = data["overview"]
    assert overview["bins"] == 100
    # 1,999 whole units of 30 µs, then the last unit's 25 µs kernel and 3.5 µs of memsets
    assert data["span_us"] == 59_998.5
    shares = {data["series"][e["series"]]["key"]: e["share"] for e in overview["lanes"]}
    assert set(shares) == {"kernel", "memset"}
    # each bin covers 19.99 units: the share is exact to rounding, not "memset everywhere"
    assert np.mean(shares["kernel"]) == pytest.approx(25 / 30, abs=0.002)
    assert np.mean(shares["memset"]) == pytest.approx(3.5 / 30, abs=0.002)
    assert max(shares["memset"]) < 0.125
    assert all(k + m <= 1.0 for k, m in zip(shares["kernel"], shares["memset"], strict=True))


def test_overview_of_a_real_trace_adds_up_to_the_gpu_busy_time() -> None:
    # GIVEN the mixed H200 step: 365 kernels and 10 memsets on stream 7
    timeline = load_trace(sample_file("mixed.eager.json.gz"))
    data = timeline_data(timeline)
    overview = data["overview"]
    assert overview["bins"] == OVERVIEW_BINS
    labels = [lane["label"] for lane in data["lanes"]]
    gpu_lane = labels.index("GPU 0 · stream 7")
    on_gpu = [e for e in overview["lanes"] if e["lane"] == gpu_lane]
    busy_us = sum(sum(e["share"]) for e in on_gpu) * overview["bin_us"]
    # THEN the binned shares integrate to the summary's busy time (10,509.8 µs), to rounding
    summary_busy_us = summarize(timeline).gpu[0].busy_ns / 1000
    assert summary_busy_us == pytest.approx(10_509.8, abs=0.1)
    assert busy_us == pytest.approx(summary_busy_us, rel=0.002)
    kinds = {data["series"][e["series"]]["key"] for e in on_gpu}
    assert kinds == {"kernel", "memset"}


def test_every_series_has_its_own_colour() -> None:
    colours = [colour for _, colour in SERIES_STYLE.values()]
    assert len(set(colours)) == len(colours)
    for kind in ("memset", "memcpy", "graph_launch"):
        gpu_key = "kernel (graph)" if kind == "graph_launch" else kind
        assert SERIES_STYLE[gpu_key][1] != SERIES_STYLE[f"call:{kind}"][1]
    labels = [label for label, _ in SERIES_STYLE.values()]
    assert len(set(labels)) == len(labels)
