"""``analyze DIR --cluster``: the per-rank report from dask workers equals the local run's.

One test starts a LocalCluster in-process (``--cluster local``); another starts a real
``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 and runs the CLI against
it. Both are bounded in time (they fail, not hang, when the cluster does not come up).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, corpus_file, ddp_rank_folder
from rich.console import Console

from traceinspect import cluster
from traceinspect.commands.ranks import run_analyze_dir
from traceinspect.errors import UsageError

pytest.importorskip("distributed")

# Three ranks of real jobs (A100 control rank 3, NCCL rank 0, a CPU-only rank 34) and one
# truncated trace: the report must list it as failed, and the others must still come back.
RANKS = (
    "HolisticTraceAnalysis__trace_diff__control.json.gz",
    "HolisticTraceAnalysis__nccl_data.json.gz",
    "HolisticTraceAnalysis__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
)
#: Seconds for a scheduler and its workers to come up on a loaded 2-core machine.
CLUSTER_START_S = 90
DASK = Path(sys.executable).with_name("dask")


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ranks")
    for name in RANKS:
        shutil.copy(corpus_file(name), folder / name)
    text = (folder / RANKS[0]).read_bytes()
    (folder / "rank-9.json.gz").write_bytes(text[: len(text) // 3])
    # A link: listed under its own name, whether run locally or on the cluster.
    (folder / "rank-5.json.gz").symlink_to(folder / RANKS[1])
    return folder


def _report(folder: Path, out: Path, **options: Any) -> dict[str, Any]:
    with open(out.with_suffix(".txt"), "w") as text:
        run_analyze_dir(folder, json_out=str(out), console=Console(file=text), **options)
    data: dict[str, Any] = json.loads(out.read_text())
    return data


@pytest.fixture(scope="module")
def local_report(job: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _report(job, tmp_path_factory.mktemp("local") / "ranks.json", workers=2)


@pytest.mark.corpus
def test_local_run_has_the_real_rows(local_report: dict[str, Any]) -> None:
    # The reference the cluster runs are compared with holds real values, not empties.
    ranks = {r["file"]: r for r in local_report["ranks"]}
    assert ranks[RANKS[0]]["kernels"] == 8568
    assert ranks[RANKS[1]]["step_wall_median_ns"] == 222_442_191
    assert ranks[RANKS[2]]["rank"] == 34
    assert ranks["rank-5.json.gz"]["kernels"] == ranks[RANKS[1]]["kernels"]
    assert [f["file"] for f in local_report["failed"]] == ["rank-9.json.gz"]
    assert "truncated" in local_report["failed"][0]["error"]


@pytest.mark.corpus
def test_local_dask_cluster_gives_the_local_report(
    job: Path, local_report: dict[str, Any], tmp_path: Path
) -> None:
    started = time.monotonic()
    on_cluster = _report(job, tmp_path / "ranks.json", workers=2, cluster="local")
    assert on_cluster == local_report
    assert time.monotonic() - started < CLUSTER_START_S + 60


def test_the_ranks_replayed_together_on_a_cluster(tmp_path: Path) -> None:
    # GIVEN the bundled DDP step's two Kineto rank traces, whose steps hold all-reduces
    folder = ddp_rank_folder(tmp_path)
    # WHEN a local dask cluster runs both passes (rows, then the steps replayed together)
    on_cluster = _report(folder, tmp_path / "cluster.json", workers=2, cluster="local")
    here = _report(folder, tmp_path / "here.json", workers=1)
    # THEN the job estimate comes back as a local run gives it
    assert on_cluster["replayed_together"]["graphed_us"] == 876.814
    assert on_cluster == here


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """A ``dask scheduler`` and two single-threaded ``dask worker`` processes on
    127.0.0.1; yields the scheduler's address once both workers have joined."""
    if not DASK.exists():
        pytest.skip(f"no dask command beside {sys.executable}")
    info = tmp_path / "scheduler.json"
    common = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": tmp_path}
    processes = [
        subprocess.Popen(
            [
                str(DASK),
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(info),
            ],
            start_new_session=True,
            **common,
        )  # fmt: skip
    ]
    worker = [str(DASK), "worker", "--scheduler-file", str(info), "--nthreads", "1",
              "--memory-limit", "2GB", "--no-dashboard", "--death-timeout", "60",
              "--host", "127.0.0.1"]  # fmt: skip
    try:
        processes.extend(
            subprocess.Popen(worker, start_new_session=True, **common) for _ in range(2)
        )
        from distributed import Client

        deadline = time.monotonic() + CLUSTER_START_S
        while not info.exists() or not info.read_text().strip():
            assert time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
            assert len(client.scheduler_info()["workers"]) == 2
        yield address
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.corpus
def test_scheduler_with_two_workers_gives_the_local_report(
    job: Path, local_report: dict[str, Any], scheduler: str, tmp_path: Path
) -> None:
    # GIVEN a real scheduler with two worker processes (addressed as tcp://127.0.0.1:PORT)
    assert scheduler.startswith("tcp://127.0.0.1:")
    out = tmp_path / "ranks.json"
    # WHEN the CLI runs the folder's ranks on it
    done = subprocess.run(
        [sys.executable, "-m", "traceinspect", "analyze", str(job), "--cluster", scheduler,
         "--json", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    # THEN it succeeds with the broken rank listed, and the report is the local run's
    assert done.returncode == 0, done.stderr
    assert "failed: rank-9.json.gz" in done.stdout
    assert json.loads(out.read_text()) == local_report
    # No progress line off a terminal.
    assert "ranks:" not in done.stderr


def test_unreachable_scheduler_is_a_usage_error(
    tmp_path: Path, job: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2)
    with pytest.raises(UsageError, match="cannot reach the scheduler"):
        _report(job, tmp_path / "r.json", cluster="tcp://127.0.0.1:9")


def test_cluster_on_one_file_is_a_usage_error(job: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "traceinspect", "analyze", str(job / RANKS[0]), "--cluster",
         "local"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--cluster runs the ranks of a folder" in done.stderr
