"""Regions of Nsight Systems exports: per process, library domains kept out, and GPU work
launched for a range by another thread of its process.

Expected numbers were read from the files with the sqlite3 shell; each is stated inline.
"""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_file, sample_file

from traceinspect.analysis.arrays import index_timeline
from traceinspect.analysis.diagnose import diagnose
from traceinspect.analysis.regions import find_regions
from traceinspect.parse import load_trace
from traceinspect.report.json_report import report_data

H100 = "nsys-ai__h100_2gpu_1s.sqlite"  # 1 s cut of a 2×H100 FSDP run, emit_nvtx, pids 111/112
MIXED = "nsys/mixed.eager.sqlite.gz"  # H200, NVTX step > attention/mlp, one thread
MAIN_TID = 281489556112229  # globalTid of the only thread of the mixed export (pid 0x...)


@cache
def report_of(path: Path) -> dict[str, Any]:
    return report_data(diagnose(load_trace(path)))


def unpacked(tmp_path: Path, name: str, *statements: str) -> Path:
    """The bundled gzipped export ``name``, unpacked into ``tmp_path`` and edited."""
    plain = tmp_path / "export.sqlite"
    with gzip.open(sample_file(name)) as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    with sqlite3.connect(plain) as conn:
        for sql in statements:
            conn.execute(sql)
    return plain


@pytest.mark.corpus
def test_fsdp_ranges_are_regions_of_their_own_process() -> None:
    report = report_of(corpus_file(H100))
    regions = [r for r in report["regions"] if r["source"] == "nvtx"]
    # 102 distinct FSDP range names per process; the 40 longest (name, process) pairs shown,
    # past 25 that made copies only the GPU ran after the 1 s window closed (their hosts
    # 424 ms ahead): left out, and health says so
    assert len(regions) == 40
    (ended,) = [h["message"] for h in report["health"] if h["kind"] == "recording_ended"]
    assert ended.startswith(
        "the recording ended before the GPU ran the last 2,280 launches (the host was ahead of "
        "it): 25 ranges that made them left out ([pid 111] FSDP::pre_forward "
        "(encoder.block.13.layer.1), "
    )
    assert ended.endswith("; the last occurrence of 16 other regions left out")
    assert all(r["name"].startswith("FSDP::") for r in regions)
    assert {r["process"] for r in regions} == {111, 112}
    names = {r["name"] for r in report["regions"]}
    assert not {n for n in names if n.startswith("aten::") or n == "detach_"}
    layer = [
        r for r in report["regions"] if r["name"] == "FSDP::pre_forward (encoder.block.14.layer.1)"
    ]
    # Two occurrences per process, never mixed: 387,749 and 448,118 ns on 111, 411,583 and
    # 375,037 ns on 112; the later one of each made copies the GPU ran after the window closed
    # (their GPU work is not in the trace: left out)
    assert sorted(
        (r["process"], r["occurrences"], r["wall_us"], r["activities"]) for r in layer
    ) == [(111, 1, 387.749, 8), (112, 1, 411.583, 8)]


@pytest.mark.corpus
def test_every_fsdp_range_name_is_a_region_per_process() -> None:
    timeline = load_trace(corpus_file(H100))
    regions = find_regions(timeline, index_timeline(timeline), max_regions=1000)
    # 102 names × 2 processes, plus `whole trace` (the ranges launched < half the GPU work),
    # plus each process's `startup` and `step (detected)`: no range marks the 23 repeats of a
    # 78-call launch sequence in either (only process 111's, the busier, were looked for
    # before) — less 44 (name, process) pairs whose every occurrence made copies or launches
    # the GPU ran only after the window closed (207 while they stayed)
    assert len(regions) == 165
    detected = [r for r in regions if r.source == "detected"]
    assert [(r.name, r.occurrences, r.pid[0], r.process) for r in detected] == [
        ("startup", 1, 111, 111),
        ("step (detected)", 23, 111, 111),
        ("startup", 1, 112, 112),
        ("step (detected)", 23, 112, 112),
    ]
    # each process's regions listed together, the step before the ranges inside it
    assert [r.process for r in regions[1:]] == sorted(r.process for r in regions[1:])
    root = [r for r in regions if r.name == "FSDP::root_pre_forward"]
    assert [(r.process, r.wall_ns.tolist()) for r in root] == [(111, [213_139]), (112, [196_370])]


@pytest.mark.corpus
def test_fsdp_occurrences_own_only_their_process_gpu_work() -> None:
    timeline = load_trace(corpus_file(H100))
    regions = find_regions(timeline, index_timeline(timeline))
    gpu_pid = timeline.gpu["pid"].to_numpy()
    owned = [r for r in regions if r.source == "nvtx" and any(len(x) for x in r.rows)]
    assert owned
    for region in owned:
        assert set(region.pid.tolist()) == {region.process}
        for rows in region.rows:
            assert set(gpu_pid[rows].tolist()) <= {region.process}


@pytest.mark.corpus
def test_a_step_whose_gpu_stays_busy_reads_compute_bound_however_long_its_host_waits() -> None:
    """The FSDP run's detected step: its host launches ahead and then waits in a sync for
    the whole step (100 % of its 29.3 ms wall), while the step's own kernels keep the GPU
    busy 99 % of it. The GPU sets its pace: compute-bound, the wait kept as evidence (it
    read sync-bound, the wait 1 % longer than the work)."""
    steps = [r for r in report_of(corpus_file(H100))["regions"] if r["name"] == "step (detected)"]
    assert [r["process"] for r in steps] == [111, 112]  # each rank's own steps
    for step in steps:
        assert step["verdict"] == "compute-bound"
        assert "host blocked in syncs 100% of wall" in step["evidence"]
        assert step["gpu_busy_share"] >= 0.99


@pytest.mark.corpus
def test_work_queued_before_the_window_joins_no_range() -> None:
    """FSDP's ``pre_forward`` of a block's second layer makes eight copies (three 167 MB
    host-to-device ones of 6 ms each, three device-to-device ones, two small ones) in about
    400 µs of host time; the GPU runs them 411-430 ms later, on a stream still working
    through what the host had launched before the 1 s window opened (2,276 activities with no
    launch record, all before the first launched one of their stream). Joined by time, 12-13
    of those landed in the range while its host was in it: it read ``idle``, its own work 6 %
    of a 429.5 ms window, the rest "the device busy with work outside the region". Now the
    range is its eight copies: compute-bound, 18.6 ms, busy 99.7 %, nothing joined by time.
    (Its second occurrence per process made copies the GPU ran after the window closed: left
    out, see ``test_fsdp_ranges_are_regions_of_their_own_process``.)"""
    regions = report_of(corpus_file(H100))["regions"]
    pre = [r for r in regions if r["name"] == "FSDP::pre_forward (encoder.block.14.layer.1)"]
    assert [(r["process"], r["verdict"], r["activities"], r["overlap_matched"]) for r in pre] == [
        (111, "compute-bound", 8, 0),
        (112, "compute-bound", 8, 0),
    ]
    assert [r["window_us"] for r in pre] == pytest.approx([18_579.276, 18_568.645])
    assert [r["gpu_busy_share"] for r in pre] == pytest.approx([0.9971, 0.9975])
    # no analyzed range of either process reads idle over GPU work any more
    assert not [r["name"] for r in regions if r["verdict"] == "idle" and r["activities"]]


@pytest.mark.corpus
def test_the_regions_table_keeps_each_ranks_process_prefix_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 100 columns the FSDP ranges' names do not fit: they are shortened, but the
    ``[pid N]`` prefix that tells the two ranks' ranges apart stays whole (its ``[`` was
    taken for decoration and dropped: ``pid 111] F…orward (…)``), and the cut keeps the
    layer that tells one rank's ranges apart (every one read ``FSDP:…er.1)`` or ``…er.0)``)."""
    from traceinspect.cli import main

    monkeypatch.setenv("COLUMNS", "100")
    assert main(["analyze", str(corpus_file(H100))]) == 0
    rows = [line.strip() for line in capsys.readouterr().out.splitlines()]
    table = [row for row in rows if row.startswith(("[pid 111] ", "[pid 112] "))]
    assert len(table) >= 40
    # (the per-process table after the regions names them `pid 111`, as its rows)
    regions_part = rows[: rows.index("2 processes with GPU work in this trace")]
    assert not [row for row in regions_part if row.startswith("pid ")]
    labels = [row.split("  ")[0] for row in table]
    assert "[pid 111] …4.layer.1)" in labels and "[pid 112] …5.layer.1)" in labels
    assert len(set(labels)) == len(labels)  # no two ranges read alike
    # AND the summary says what the activities without a launch record were
    text = " ".join(" ".join(rows).split())
    assert (
        "2,276 GPU activities have no launch record: all launched before the recording began"
        " (the GPU spent its first 423.9 ms on work queued earlier); they join no region"
    ) in text


def test_library_domains_and_nccl_collectives_are_not_regions(tmp_path: Path) -> None:
    # GIVEN the mixed export with an NCCL domain (id 7) and a cuDNN domain (id 8) created on
    # its thread, and ranges in them inside the first `step`
    start, end = 3_587_427_496, 3_589_038_277  # the first `step` range
    insert = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES "
    path = unpacked(
        tmp_path,
        MIXED,
        insert + f"({start}, NULL, 75, 'NCCL', {MAIN_TID}, 7)",
        insert + f"({start}, NULL, 75, 'cuDNN', {MAIN_TID}, 8)",
        insert + f"({start + 10}, {start + 900}, 59, 'ncclAllReduce', {MAIN_TID}, 7)",
        insert + f"({start + 1000}, {start + 1900}, 59, 'ncclCommInitRankConfig', {MAIN_TID}, 7)",
        insert + f"({start + 2000}, {start + 2900}, 59, 'cudnnConvolutionForward', {MAIN_TID}, 8)",
        # an old NCCL writing into the default domain
        insert + f"({start + 3000}, {end - 10}, 59, 'ncclSend', {MAIN_TID}, 0)",
    )
    # WHEN it is read
    timeline = load_trace(path)
    ann = timeline.annotations
    # THEN the library ranges are annotations of their own sources, with their domains
    found = ann[ann["source"].isin(["collective", "library"])]
    assert found[["name", "source", "domain"]].values.tolist() == [
        ["ncclAllReduce", "collective", "NCCL"],
        ["ncclCommInitRankConfig", "library", "NCCL"],
        ["cudnnConvolutionForward", "library", "cuDNN"],
        ["ncclSend", "collective", ""],
    ]
    # and none of them is a region; the user's are unchanged
    names = {r["name"] for r in report_data(diagnose(timeline))["regions"]}
    assert names == {"warmup", "step", "attention", "mlp"}


def test_a_range_owns_the_work_another_thread_of_its_process_launched(tmp_path: Path) -> None:
    # GIVEN the mixed export where every API call inside `mlp` ranges was made by another
    # thread of the process (as the autograd engine's thread launches backward's kernels)
    helper = MAIN_TID + 1
    mlp = (
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE COALESCE(n.text, s.value) = 'mlp'"
    )
    path = unpacked(
        tmp_path,
        MIXED,
        f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = {helper} WHERE EXISTS "
        f"(SELECT 1 FROM ({mlp}) m WHERE CUPTI_ACTIVITY_KIND_RUNTIME.start >= m.start "
        "AND CUPTI_ACTIVITY_KIND_RUNTIME.start < m.end)",
    )
    original = {r["name"]: r for r in report_of(sample_file(MIXED))["regions"]}
    moved = load_trace(path)
    assert int((moved.host["tid"] == helper & 0xFFFFFF).sum()) > 0
    # WHEN it is analyzed THEN `mlp` still owns its kernels, as before the move
    regions = {r["name"]: r for r in report_data(diagnose(moved))["regions"]}
    assert regions["mlp"]["kernels"] == original["mlp"]["kernels"] == 7
    assert regions["mlp"]["verdict"] == original["mlp"]["verdict"] == "compute-bound"
    assert regions["step"]["kernels"] == original["step"]["kernels"]


@pytest.mark.corpus
def test_a_measured_step_applies_to_each_processs_step() -> None:
    """``--eager-us 29500`` (one step, measured without the profiler) is each rank's step
    time: both processes' detected steps take it, and nothing else does."""
    analysis = diagnose(load_trace(corpus_file(H100)), eager_unprofiled_ns=29_500_000)
    measured = {
        r.region.label: r.estimate.eager_ns
        for r in analysis.region_results
        if r.estimate is not None and r.estimate.eager_source == "measured"
    }
    assert measured == {
        "[pid 111] step (detected)": 29_500_000,
        "[pid 112] step (detected)": 29_500_000,
    }
