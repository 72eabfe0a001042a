"""The Nsight Systems reader on real exports (../shared/corpus) and on edited copies of them.

Expected numbers were read from the files with the sqlite3 shell; each is stated inline.
"""

from __future__ import annotations

import functools
import gzip
import os
import shutil
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import corpus_file, sample_file

from traceinspect.errors import TraceFormatError
from traceinspect.model import Timeline
from traceinspect.parse import load_trace, sniff
from traceinspect.parse.nsys import GRAPH_NODES_HIDDEN_NOTE, read_nsys

MOCK = "nsys-ai__mock.sqlite"  # nsys 2026.1.1, RTX 3080, 2 kernels, no NVTX
H100 = "nsys-ai__h100_2gpu_1s.sqlite"  # 1 s cut of a 2×H100 run, emit_nvtx ranges


@pytest.fixture(scope="module")
def mock() -> Timeline:
    return load_trace(corpus_file(MOCK))


@pytest.fixture(scope="module")
def h100() -> Timeline:
    return load_trace(corpus_file(H100))


def edited_copy(tmp_path: Path, name: str, *statements: str) -> Path:
    """A copy of corpus file ``name`` with SQL ``statements`` applied (the original is
    never opened for writing)."""
    copy = tmp_path / name
    shutil.copyfile(corpus_file(name), copy)
    with sqlite3.connect(copy) as conn:
        for sql in statements:
            conn.execute(sql)
    return copy


# --------------------------------------------------------------------------- mock export


def test_mock_kernels_names_times_and_launches(mock: Timeline) -> None:
    mock.validate()
    kernels = mock.kernels
    assert len(kernels) == 2
    first = kernels.iloc[0]
    # demangledName is preferred over shortName ("vectorized_elementwise_kernel").
    assert first["name"] == (
        "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>,"
        " std::array<char *, (unsigned long)1>>(int, T2, T3)"
    )
    assert first["start_ns"] == 1_517_727_052
    assert first["end_ns"] - first["start_ns"] == 1_440
    assert (first["pid"], first["device"], first["stream"]) == (91186, 0, 7)
    assert (first["grid"], first["block"]) == ("1,1,1", "128,1,1")
    assert first["from_graph"] is np.False_
    launch = mock.host.iloc[first["launch_row"]]
    assert (launch["name"], launch["correlation"], launch["kind"]) == (
        "cudaLaunchKernel",
        143,
        "launch",
    )
    assert kernels["name"].iloc[1].startswith("void at::native::reduce_kernel<(int)512")


def test_mock_memcpy_sync_host_and_device(mock: Timeline) -> None:
    copies = mock.gpu[mock.gpu["kind"] == "memcpy"]
    assert len(copies) == 1
    copy = copies.iloc[0]
    # copyKind 2, srcKind 2 (device), dstKind 1 (pinned), 4 bytes: the .item() readback.
    assert copy["name"] == "Memcpy DtoH (Device -> Pinned)"
    assert (copy["copy_kind"], copy["host_memory"], copy["bytes"]) == ("DtoH", "pinned", 4)
    assert mock.host.iloc[copy["launch_row"]]["name"] == "cudaMemcpyAsync"

    host = mock.host
    assert len(host) == 9
    # cuModuleGetLoadingMode is the one driver call; runtime names lose "_v3020"-style tails.
    assert host.loc[host["api"] == "driver", "name"].tolist() == ["cuModuleGetLoadingMode"]
    assert "cudaStreamSynchronize" in set(host["name"])
    assert dict(zip(host["name"], host["kind"], strict=True))["cudaHostAlloc"] == "malloc"
    assert set(host["tid"]) == {91186}

    # The SYNCHRONIZATION row of cudaStreamSynchronize (correlation 172). This export
    # writes syncType 2 for it (stream wait event in ENUM_CUPTI_SYNC_TYPE): read as written.
    assert mock.syncs[["kind", "pid", "tid", "correlation"]].values.tolist() == [
        ["stream_wait_event", 91186, 91186, 172]
    ]
    assert mock.syncs["end_ns"].iloc[0] - mock.syncs["start_ns"].iloc[0] == 13_656

    (device,) = mock.meta.devices
    assert (device.id, device.name) == (0, "NVIDIA GeForce RTX 3080")
    assert device.properties["smCount"] == 68
    assert device.properties["chipName"] == "GA102"
    assert mock.meta.generation == "nsys-3.24.14"
    assert mock.meta.profiler["nsys_version"] == "2026.1.1.204"
    assert mock.meta.profiler["session_start_utc_ns"] == "1776781226557295056"
    assert mock.meta.profiler["clock"] == "ns since the nsys session start"
    assert mock.meta.notes == ()  # a clean export has nothing to report
    # PROCESSES lists 81 processes of the machine; the one that used CUDA is named.
    assert mock.meta.profiler["processes"] == "91186 /home/rich-wsl/nsys-tui/.venv-gpu/bin/python"
    assert mock.meta.graph_nodes_visible
    assert len(mock.annotations) == 0  # no NVTX_EVENTS table in this export


# --------------------------------------------------------------------------- 2×H100 cut


def test_h100_two_processes_two_devices(h100: Timeline) -> None:
    h100.validate()
    kinds = h100.gpu["kind"].value_counts().to_dict()
    assert kinds == {"kernel": 3442, "memcpy": 904, "memset": 22}
    per_process = h100.kernels.groupby(["pid", "device"]).size().to_dict()
    assert per_process == {(111, 0): 1721, (112, 1): 1721}
    assert [d.id for d in h100.meta.devices] == [0, 1]  # no TARGET_INFO_GPU in the cut
    assert len(h100.host) == 5796
    assert set(h100.host["pid"]) == {111, 112}
    assert h100.syncs["kind"].value_counts().to_dict() == {"stream_wait_event": 236, "stream": 8}
    assert h100.host["kind"].value_counts().to_dict() == {
        "launch": 3346,  # cudaLaunchKernel 2788 + cudaLaunchKernelExC 558
        "event": 944,  # record, create, destroy, stream wait: 236 each
        "memcpy": 914,
        "other": 472,  # cudaStreamIsCapturing
        "memset": 112,
        "sync": 8,
    }
    assert h100.meta.profiler["export_schema"] == "3.25.0"
    assert h100.meta.profiler["processes"] == "111 python3, 112 python3"


def test_h100_kernels_join_their_launch_by_process_and_correlation(h100: Timeline) -> None:
    kernels = h100.kernels
    linked = kernels[kernels["launch_row"] >= 0]
    # 1,810 of 3,442 kernels lost their runtime row in the 1 s cut.
    assert len(kernels) - len(linked) == 1810
    calls = h100.host.iloc[linked["launch_row"].to_numpy()]
    assert (calls["pid"].to_numpy() == linked["pid"].to_numpy()).all()
    assert (calls["correlation"].to_numpy() == linked["correlation"].to_numpy()).all()
    assert calls["name"].value_counts().to_dict() == {
        "cudaLaunchKernel": 1336,
        "cudaLaunchKernelExC": 296,
    }
    # Correlation ids repeat across processes: this pid-112 kernel's id 1477640 belongs to a
    # cudaStreamWaitEvent of pid 111. Joined on correlation alone, 11 kernels would be
    # linked to the other process's calls.
    stray = kernels[(kernels["pid"] == 112) & (kernels["correlation"] == 1477640)]
    assert stray["start_ns"].tolist() == [155_370_307_921]
    assert stray["launch_row"].tolist() == [-1]
    note = next(n for n in h100.meta.notes if "no launching API call" in n)
    assert note.startswith("2276 of 4368 GPU activities")


def test_h100_emit_nvtx_ranges(h100: Timeline) -> None:
    # 16,782 push/pop ranges from emit_nvtx ("aten::to, op_id = 317177"): operator ranges
    # become cpu_ops with the decoration dropped; FSDP's own ranges ("FSDP::pre_forward
    # (encoder.block.14.layer.1), op_id = 314311") are the user's: annotations.
    assert len(h100.cpu_ops) + len(h100.annotations) == 16782
    assert len(h100.cpu_ops) == 16546
    assert len(h100.annotations) == 236
    assert h100.annotations["name"].str.startswith("FSDP::").all()
    assert h100.annotations.groupby("pid").size().to_dict() == {111: 118, 112: 118}
    assert set(h100.annotations["source"]) == {"nvtx"}
    counts = h100.annotations["name"].str.replace(r" \(.*\)$", "", regex=True).value_counts()
    assert counts.to_dict() == {
        "FSDP::post_forward": 116,
        "FSDP::pre_forward": 116,
        "FSDP::root_pre_forward": 2,
        "FSDP::inputs_to_device": 2,
    }
    root = h100.annotations[h100.annotations["name"] == "FSDP::root_pre_forward"]
    assert root[["pid", "start_ns", "end_ns", "depth"]].values.tolist() == [
        [112, 156_065_857_929, 156_066_054_299, 0],
        [111, 156_065_916_453, 156_066_129_592, 0],
    ]
    # "detach_, op_id = 317134" opens inside "aten::detach_, op_id = 317133": the operator's
    # own inner call, an operator too.
    detach = h100.cpu_ops[h100.cpu_ops["name"] == "detach_"]
    assert detach[["pid", "start_ns", "depth"]].values.tolist() == [
        [112, 156_065_614_599, 1],
        [112, 156_065_643_705, 1],
        [111, 156_065_653_109, 1],
        [111, 156_065_681_389, 1],
    ]
    assert not h100.cpu_ops["name"].str.contains("op_id|FSDP").any()
    assert h100.cpu_ops["name"].value_counts().head(2).to_dict() == {
        "aten::as_strided": 2200,
        "aten::to": 1190,
    }
    assert h100.cpu_ops["depth"].max() == 4
    assert int((h100.cpu_ops["depth"] == 0).sum()) == 5008
    assert set(h100.cpu_ops["tid"]) == {111, 112}
    assert not h100.gpu["collective"].any()  # an FSDP run cut before any NCCL kernel


# --------------------------------------------------------------------------- inputs


def test_database_is_opened_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    copy = folder / MOCK
    shutil.copyfile(corpus_file(MOCK), copy)
    before = (copy.read_bytes(), copy.stat().st_mtime_ns)
    copy.chmod(stat.S_IRUSR)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)  # no journal could be created here either
    try:
        assert len(load_trace(copy).kernels) == 2
    finally:
        folder.chmod(stat.S_IRWXU)
    assert (copy.read_bytes(), copy.stat().st_mtime_ns) == before
    assert sorted(p.name for p in folder.iterdir()) == [MOCK]


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield scratch


def test_gzipped_export_loads_and_leaves_no_temporary_file(
    tmp_path: Path, private_tmp: Path
) -> None:
    packed = tmp_path / "mock.sqlite.gz"
    with gzip.open(packed, "wb") as f:
        f.write(corpus_file(MOCK).read_bytes())
    assert sniff(packed) == "sqlite.gz"
    timeline = load_trace(packed)
    assert len(timeline.kernels) == 2
    assert timeline.meta.path == str(packed)
    assert list(private_tmp.iterdir()) == []


def test_truncated_gzipped_export_is_a_format_error(tmp_path: Path, private_tmp: Path) -> None:
    packed = tmp_path / "cut.sqlite.gz"
    data = gzip.compress(corpus_file(MOCK).read_bytes())
    packed.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated or corrupt gzip"):
        load_trace(packed)
    assert list(private_tmp.iterdir()) == []


FAKE_NSYS = """#!{python}
import os, shutil, sys
args = sys.argv[1:]
assert args[0] == "export" and args[args.index("--type") + 1] == "sqlite", args
out = args[args.index("--output") + 1]
with open(os.environ["FAKE_NSYS_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
shutil.copyfile({source!r}, out)
"""


def test_nsys_rep_is_exported_into_the_cache_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nsys"
    fake.write_text(FAKE_NSYS.format(python=sys.executable, source=str(corpus_file(MOCK))))
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_NSYS_LOG", str(log))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reports = tmp_path / "reports"
    reports.mkdir()
    report = reports / "run.nsys-rep"
    report.write_bytes(b"not really a report: the fake nsys ignores it")

    first = load_trace(report)
    again = load_trace(report)

    assert len(first.kernels) == len(again.kernels) == 2
    assert first.meta.path == str(report)
    assert len(log.read_text().splitlines()) == 1  # the second load used the cache
    cached = list((tmp_path / "cache" / "traceinspect").iterdir())
    assert len(cached) == 1 and cached[0].name.startswith("run-")
    assert cached[0].suffix == ".sqlite"
    assert sorted(p.name for p in reports.iterdir()) == ["run.nsys-rep"]


def test_nsys_rep_without_nsys_says_how_to_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"\x00" * 64)
    with pytest.raises(TraceFormatError) as err:
        load_trace(report)
    assert "nsys export --type sqlite -o report.sqlite report.nsys-rep" in str(err.value)
    assert "\n" not in str(err.value)


def test_failing_nsys_export_is_a_format_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nsys"
    fake.write_text("#!/bin/sh\necho 'Error: report version 9.9 is not supported' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = tmp_path / "run.nsys-rep"
    report.write_bytes(b"\x00" * 64)
    with pytest.raises(TraceFormatError, match="nsys export failed: Error: report version 9.9"):
        read_nsys(report)
    assert list((tmp_path / "cache" / "traceinspect").iterdir()) == []


# --------------------------------------------------------------------------- schema drift


def test_tables_created_only_when_used_may_be_absent(tmp_path: Path) -> None:
    copy = edited_copy(
        tmp_path,
        MOCK,
        "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY",
        "DROP TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "DROP TABLE TARGET_INFO_GPU",
        "DROP TABLE META_DATA_EXPORT",
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName",
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN graphId",
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN gridX",
    )
    timeline = load_trace(copy)
    timeline.validate()
    assert timeline.gpu["kind"].tolist() == ["kernel", "kernel"]
    # Without demangledName the mangled name is the next best.
    assert timeline.gpu["name"].iloc[0].startswith("_ZN2at6native29vectorized_elementwise")
    assert timeline.gpu["grid"].tolist() == ["", ""]
    assert timeline.gpu["block"].tolist() == ["128,1,1", "16,1,1"]
    assert len(timeline.syncs) == 0
    assert [(d.id, d.name) for d in timeline.meta.devices] == [(0, "")]
    assert timeline.meta.generation == "nsys"


def test_core_table_without_its_times_is_a_format_error(tmp_path: Path) -> None:
    copy = edited_copy(tmp_path, MOCK, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN end")
    with pytest.raises(TraceFormatError, match="CUPTI_ACTIVITY_KIND_KERNEL lacks column"):
        load_trace(copy)


def test_sqlite_that_is_not_an_export_is_a_format_error(tmp_path: Path) -> None:
    other = tmp_path / "notes.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER, body TEXT)")
    with pytest.raises(TraceFormatError, match="not an Nsight Systems export"):
        load_trace(other)


def test_nvtx_domains_text_ids_start_end_and_profiler_steps(tmp_path: Path) -> None:
    # GIVEN the mock export with an NVTX_EVENTS table added (schema of nsys 2026.2), on the
    # python thread (globalTid 283004824020018 = pid 91186, tid 91186)
    gtid = 283004824020018
    rows = [
        # (start, end, eventType, text, textId, domainId)
        (100, None, 75, "train", None, 5),  # domain create
        (1_300, 1_400, 59, "read", None, 6),  # domain 6 is created without a thread
        (1_000, 9_000, 59, "ProfilerStep#3", None, 0),
        (1_100, 4_000, 59, None, 900001, 5),  # text via StringIds, domain "train"
        (1_200, 2_000, 60, "prefetch", None, 0),  # start/end range
        (4_000, 8_000, 59, "backward", None, 5),  # starts where "forward" ended
        (5_000, None, 59, "never closed", None, 0),
    ]
    statements = [
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER"
        " NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid"
        " INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER)",
        "INSERT INTO StringIds (id, value) VALUES (900001, 'forward')",
    ]
    statements += [
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, domainId, globalTid)"
        f" VALUES ({s}, {'NULL' if e is None else e}, {t}, {'NULL' if x is None else repr(x)},"
        f" {'NULL' if i is None else i}, {d}, {gtid})"
        for s, e, t, x, i, d in rows
    ]
    statements.append(
        "INSERT INTO NVTX_EVENTS (start, eventType, text, domainId) VALUES (50, 75, 'io', 6)"
    )
    # WHEN it is read
    timeline = load_trace(edited_copy(tmp_path, MOCK, *statements))
    # THEN
    ann = timeline.annotations
    assert ann[["name", "source", "domain", "depth"]].values.tolist() == [
        ["ProfilerStep#3", "profiler_step", "", 0],
        ["forward", "nvtx", "train", 1],
        ["prefetch", "nvtx", "", 2],
        ["read", "nvtx", "io", 3],
        ["backward", "nvtx", "train", 1],
    ]
    assert set(ann["pid"]) == set(ann["tid"]) == {91186}
    assert any("1 NVTX ranges still open" in n for n in timeline.meta.notes)


def test_emit_nvtx_shapes_become_input_shapes(tmp_path: Path) -> None:
    text = "aten::mm, seq = 12, op_id = 40, sizes = [[2, 3], [3, 4]], input_op_ids = [(39, 0)]"
    copy = edited_copy(
        tmp_path,
        MOCK,
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
        " globalTid INTEGER)",
        f"INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, '{text}', 283004824020018)",
        "INSERT INTO NVTX_EVENTS VALUES (10, 30, 59, 'step, op_id = 39', 283004824020018)",
    )
    timeline = load_trace(copy)
    assert timeline.cpu_ops[["name", "input_shapes", "depth"]].values.tolist() == [
        ["aten::mm", "[[2, 3], [3, 4]]", 0]
    ]
    assert timeline.annotations["name"].tolist() == ["step"]


# --------------------------------------------------------------------------- CUDA graphs


def test_node_level_graph_kernels_carry_graph_ids(tmp_path: Path) -> None:
    copy = edited_copy(
        tmp_path,
        MOCK,
        "INSERT INTO StringIds (id, value) VALUES (900002, 'cudaGraphLaunch_v10000')",
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = 900002 WHERE correlationId = 143",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphId = 7, graphNodeId = 70"
        " WHERE correlationId = 143",
    )
    timeline = load_trace(copy)
    kernels = timeline.kernels
    assert kernels[["graph_id", "graph_node_id", "from_graph"]].values.tolist() == [
        [7, 70, True],
        [-1, -1, False],
    ]
    assert timeline.host.iloc[kernels["launch_row"].iloc[0]]["kind"] == "graph_launch"
    assert timeline.meta.graph_nodes_visible


def test_graph_level_trace_gives_graph_rows_and_a_note(tmp_path: Path) -> None:
    # Columns as CUpti_ActivityGraphTrace2 names them; start = end = 0 means "not timed".
    copy = edited_copy(
        tmp_path,
        MOCK,
        "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER"
        " NOT NULL, deviceId INTEGER, contextId INTEGER, streamId INTEGER, correlationId"
        " INTEGER, globalPid INTEGER, graphId INTEGER, graphExecId INTEGER)",
        "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES"
        " (1517727000, 1517729000, 0, 1, 7, 143, 283004823928832, 3, 4),"
        " (0, 0, 0, 1, 7, 159, 283004823928832, 3, 4),"
        # deviceId INT_MAX: the graph's first node ran on the host
        " (1535979000, 1535982000, 2147483647, 1, 7, 159, 283004823928832, 3, 4)",
    )
    timeline = load_trace(copy)
    graphs = timeline.gpu[timeline.gpu["kind"] == "graph"]
    assert graphs[["name", "graph_id", "from_graph", "correlation", "device"]].values.tolist() == [
        ["CUDA graph 3", 3, True, 143, 0],
        ["CUDA graph 3", 3, True, 159, -1],
    ]
    assert [d.id for d in timeline.meta.devices] == [0]
    assert (graphs["end_ns"] - graphs["start_ns"]).tolist() == [2_000, 3_000]
    assert timeline.host.iloc[graphs["launch_row"].iloc[0]]["correlation"] == 143
    assert not timeline.meta.graph_nodes_visible
    assert GRAPH_NODES_HIDDEN_NOTE in timeline.meta.notes
    assert "nsys profile --cuda-graph-trace=node" in GRAPH_NODES_HIDDEN_NOTE
    assert any("1 graph executions had no timestamps" in n for n in timeline.meta.notes)


def test_per_thread_stream_and_version_suffixes_are_stripped(tmp_path: Path) -> None:
    copy = edited_copy(
        tmp_path,
        MOCK,
        "UPDATE StringIds SET value = 'cudaLaunchKernel_ptsz_v7000'"
        " WHERE value = 'cudaLaunchKernel_v7000'",
        "UPDATE StringIds SET value = 'cuMemcpyHtoDAsync_v2' WHERE value = 'cudaMemcpyAsync_v3020'",
    )
    host = load_trace(copy).host
    calls = host[["name", "api", "kind"]].drop_duplicates().values.tolist()
    assert ["cudaLaunchKernel", "runtime", "launch"] in calls
    assert ["cuMemcpyHtoDAsync", "driver", "memcpy"] in calls
    assert int((host["name"] == "cudaLaunchKernel").sum()) == 2


def test_nvtx_text_with_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    copy = edited_copy(
        tmp_path,
        MOCK,
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
        " globalTid INTEGER)",
        # 'step' followed by a lone continuation byte 0x80
        "INSERT INTO NVTX_EVENTS VALUES (10, 30, 59, CAST(X'7374657080' AS TEXT), 283004824020018)",
    )
    assert load_trace(copy).annotations["name"].tolist() == ["step\ufffd"]


# --------------------------------------------------------------------------- H200 samples
# sample_traces/nsys: the project's own exports (nsys 2025.3.2, schema 3.20.3), the same
# workloads as the Kineto traces beside them. 3 warm-up steps in an NVTX range "warmup",
# then 5 NVTX "step" ranges; Kineto has 5 record_function "step" ranges.

#: file -> (kernels, memcpys, memsets, graph rows, kernels launched by a graph)
H200_EXPORTS = {
    "tiny_mlp.eager": (772, 96, 0, 0, 0),
    "tiny_mlp.graphed.node": (1062, 105, 0, 0, 768),  # 8 replays × 96 nodes
    "tiny_mlp.graphed.graph": (294, 105, 0, 8, 0),  # node kernels not recorded
    "mixed.eager": (593, 0, 16, 0, 0),
    "mixed.graphed.node": (816, 9, 22, 0, 584),  # 8 × 73
    "big_gemm.eager": (104, 0, 96, 0, 0),
    "decode_step.graphed.node": (1854, 230, 0, 0, 1344),  # 8 × 168
    "two_streams.eager": (270, 0, 0, 0, 0),
    "host_sync.eager": (692, 8, 0, 0, 0),
}


@functools.cache
def h200(name: str) -> Timeline:
    """``sample_traces/nsys/<name>.sqlite.gz``, read through load_trace (gzip sniffed)."""
    return load_trace(sample_file(f"nsys/{name}.sqlite.gz"))


@functools.cache
def kineto(name: str) -> Timeline:
    return load_trace(sample_file(f"{name}.json.gz"))


@pytest.mark.parametrize("name", sorted(H200_EXPORTS))
def test_h200_exports_load(name: str) -> None:
    timeline = h200(name)
    timeline.validate()
    kinds = timeline.gpu["kind"].value_counts()
    counts = tuple(int(kinds.get(k, 0)) for k in ("kernel", "memcpy", "memset", "graph"))
    launched_by_graph = int((timeline.kernels["from_graph"]).sum())
    assert (*counts, launched_by_graph) == H200_EXPORTS[name]
    assert int((timeline.gpu["launch_row"] < 0).sum()) == 0  # nothing cut: all joined
    assert [(d.id, d.name) for d in timeline.meta.devices] == [(0, "NVIDIA H200")]
    assert timeline.meta.generation == "nsys-3.20.3"
    # The capture option as recorded ("Node"/"Graph"), lower-cased.
    mode = timeline.meta.profiler["cuda_graph_trace"]
    assert mode == ("node" if ".node" in name else "graph" if ".graph" in name else mode)
    assert timeline.meta.graph_nodes_visible == (not name.endswith(".graph"))


def test_h200_gunzipped_by_hand_reads_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "tiny_mlp.eager.sqlite"
    with gzip.open(sample_file("nsys/tiny_mlp.eager.sqlite.gz"), "rb") as src:
        plain.write_bytes(src.read())
    assert sniff(plain) == "sqlite"
    direct, packed = load_trace(plain), h200("tiny_mlp.eager")
    for table, frame in direct.tables().items():
        assert frame.equals(packed.tables()[table]), table


def kernels_per_step(timeline: Timeline) -> list[tuple[int, int]]:
    """(kernels, summed kernel ns) launched from inside each host "step" range: the launching
    call starts in the range, on its thread."""
    ann = timeline.annotations
    steps = ann[(ann["name"] == "step") & (ann["source"].isin(["nvtx", "record_function"]))]
    kernels = timeline.kernels[timeline.kernels["launch_row"] >= 0]
    calls = timeline.host.iloc[kernels["launch_row"].to_numpy()]
    start, pid, tid = (calls[c].to_numpy() for c in ("start_ns", "pid", "tid"))
    dur = (kernels["end_ns"] - kernels["start_ns"]).to_numpy()
    result = []
    for step in steps.sort_values("start_ns").itertuples():
        inside = (start >= step.start_ns) & (start < step.end_ns)
        inside &= (pid == step.pid) & (tid == step.tid)
        result.append((int(inside.sum()), int(dur[inside].sum())))
    return result


@pytest.mark.parametrize(
    ("kineto_name", "nsys_name", "kernels"),
    [
        # Summed kernel time per step, µs, Kineto vs nsys (5 steps each):
        ("tiny_mlp.eager", "tiny_mlp.eager", 96),  # 142.5–145.8 vs 143.4–146.5
        ("tiny_mlp.graphed", "tiny_mlp.graphed.node", 96),  # 153.9–157.6 vs 157.7–158.0
        ("mixed.eager", "mixed.eager", 73),  # 2093–2110 vs 1938–1939 (nsys −7.7 %)
        ("mixed.graphed", "mixed.graphed.node", 73),  # 1958–1962 vs 1941–1945
        ("big_gemm.eager", "big_gemm.eager", 12),  # 18525–19705 vs 18948–19470
        ("two_streams.eager", "two_streams.eager", 33),  # 499–502 vs 462–464 (−7.6 %)
        ("host_sync.eager", "host_sync.eager", 86),  # 282.2–282.5 vs 266.3–266.6 (−5.6 %)
        ("decode_step.graphed", "decode_step.graphed.node", 168),  # 475.8–478.5 vs 473.8–477.9
    ],
)
def test_kernels_per_step_match_the_torch_profiler_trace(
    kineto_name: str, nsys_name: str, kernels: int
) -> None:
    # GIVEN the same workload recorded once by torch.profiler and once by nsys (two runs)
    from_kineto = kernels_per_step(kineto(kineto_name))
    from_nsys = kernels_per_step(h200(nsys_name))
    # THEN every step launched the same kernels, and their time agrees within 10 %
    assert [n for n, _ in from_kineto] == [n for n, _ in from_nsys] == [kernels] * 5
    kineto_ns = sum(t for _, t in from_kineto)
    nsys_ns = sum(t for _, t in from_nsys)
    assert abs(nsys_ns - kineto_ns) <= 0.10 * kineto_ns


@pytest.mark.parametrize(
    ("name", "regions"),
    [
        ("mixed.eager", {"attention", "mlp"}),
        ("two_streams.eager", {"branch_a", "branch_b"}),
        ("host_sync.eager", {"prepare", "check", "refine"}),
    ],
)
def test_nvtx_ranges_are_the_record_function_regions(name: str, regions: set[str]) -> None:
    record_function = kineto(name).annotations
    record_function = record_function[record_function["source"] == "record_function"]
    assert set(record_function["name"]) == {"step"} | regions
    nvtx = h200(name).annotations
    assert set(nvtx["source"]) == {"nvtx"}
    assert set(nvtx["domain"]) == {""}  # torch.cuda.nvtx writes to the default domain
    assert set(nvtx["name"]) == {"step", "warmup"} | regions
    # The step (and warm-up) ranges are outermost, the regions sit one level inside them;
    # each region ran once per step: 3 warm-up + 5 steps = 8 occurrences.
    depth = nvtx.groupby("name")["depth"].agg(["min", "max", "count"])
    assert depth.loc[["step", "warmup"], ["min", "max"]].to_numpy().tolist() == [[0, 0]] * 2
    assert depth.loc[sorted(regions), ["min", "max"]].to_numpy().tolist() == [[1, 1]] * len(regions)
    assert depth.loc[sorted(regions), "count"].tolist() == [8] * len(regions)


def test_graph_level_export_has_one_graph_row_per_replay() -> None:
    timeline = h200("tiny_mlp.graphed.graph")
    graphs = timeline.gpu[timeline.gpu["kind"] == "graph"]
    assert len(graphs) == 8  # 3 warm-up replays + 5 steps
    assert set(graphs["graph_id"]) == {1} and graphs["from_graph"].all()
    assert set(timeline.host.iloc[graphs["launch_row"].to_numpy()]["name"]) == {"cudaGraphLaunch"}
    durations = (graphs["end_ns"] - graphs["start_ns"]).to_numpy()
    assert durations.min() == 169_631 and durations.max() == 170_495
    assert not timeline.meta.graph_nodes_visible
    assert GRAPH_NODES_HIDDEN_NOTE in timeline.meta.notes
    # Each step range launched exactly one graph replay (and, eagerly, no kernel).
    steps = timeline.annotations[timeline.annotations["name"] == "step"]
    calls = timeline.host.iloc[graphs["launch_row"].to_numpy()]["start_ns"].to_numpy()
    per_step = [
        int(((calls >= s) & (calls < e)).sum()) for s, e in steps[["start_ns", "end_ns"]].to_numpy()
    ]
    assert per_step == [1] * 5
    assert kernels_per_step(timeline) == [(0, 0)] * 5


def test_node_level_export_shows_every_node() -> None:
    timeline = h200("tiny_mlp.graphed.node")
    assert timeline.meta.graph_nodes_visible
    assert GRAPH_NODES_HIDDEN_NOTE not in timeline.meta.notes
    nodes = timeline.kernels[timeline.kernels["from_graph"]]
    # Schema 3.20 has graphNodeId but no graphId column.
    assert (nodes["graph_node_id"] > 0).all() and set(nodes["graph_id"]) == {-1}
    assert nodes["graph_node_id"].nunique() == 96
    launches = timeline.host.iloc[nodes["launch_row"].to_numpy()]
    assert set(launches["kind"]) == {"graph_launch"}
    assert launches["correlation"].nunique() == 8  # 8 replays, 96 kernels each


def test_graph_launches_without_graph_records_still_mean_hidden_nodes(tmp_path: Path) -> None:
    # GIVEN the graph-level H200 export with its GRAPH_TRACE table removed (as an nsys that
    # does not export it would leave it): cudaGraphLaunch calls, no GPU record of them
    plain = tmp_path / "graph.sqlite"
    with gzip.open(sample_file("nsys/tiny_mlp.graphed.graph.sqlite.gz"), "rb") as src:
        plain.write_bytes(src.read())
    with sqlite3.connect(plain) as conn:
        conn.execute("DROP TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
    conn.close()
    timeline = load_trace(plain)
    assert int((timeline.host["kind"] == "graph_launch").sum()) == 8
    assert not timeline.meta.graph_nodes_visible
    assert GRAPH_NODES_HIDDEN_NOTE in timeline.meta.notes
