"""Cores and memory as a container's cgroup limits them (traceinspect.machine), on cgroup
trees written the way Linux lays them out, v2 and v1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traceinspect import machine
from traceinspect.commands.ranks import worker_count

GiB = 1 << 30


def _write(folder: Path, **files: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("__", ".")).write_text(text)


def _proc(tmp_path: Path, cgroup: str, available_kib: int | None = 64 * GiB // 1024) -> Path:
    proc = tmp_path / "proc"
    _write(proc / "self", cgroup=cgroup)
    if available_kib is not None:
        _write(proc, meminfo=f"MemTotal: 1 kB\nMemAvailable: {available_kib} kB\n")
    return proc


def test_v2_limit_less_usage_that_cannot_be_reclaimed(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    # 2 GiB allowed, 1.5 GiB charged of which 0.5 GiB is inactive page cache: 1 GiB left.
    _write(
        root,
        memory__max=f"{2 * GiB}\n",
        memory__current=f"{3 * GiB // 2}\n",
        memory__stat=f"anon 1\ninactive_file {GiB // 2}\nactive_file 7\n",
    )
    assert machine.available_memory(root, _proc(tmp_path, "0::/\n")) == GiB


def test_v2_a_parents_limit_binds_the_child(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _write(root / "a" / "b", memory__max="max\n", memory__current="5\n")
    _write(root / "a", memory__max=f"{GiB}\n", memory__current=f"{GiB // 4}\n")
    proc = _proc(tmp_path, "0::/a/b\n")
    assert machine.available_memory(root, proc) == 3 * GiB // 4


def test_v2_without_a_limit_meminfo_decides(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _write(root, memory__max="max\n", memory__current="123\n")
    proc = _proc(tmp_path, "0::/\n", available_kib=1000)
    assert machine.available_memory(root, proc) == 1000 * 1024


def test_v1_unmounted_path_falls_back_to_the_containers_root(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    # The path /proc names (the host's) is not mounted inside the container: its root is.
    _write(
        root / "memory",
        memory__limit_in_bytes=f"{4 * GiB}\n",
        memory__usage_in_bytes=f"{GiB}\n",
        memory__stat="cache 9\ntotal_inactive_file 0\n",
    )
    proc = _proc(tmp_path, "5:devices:/\n4:memory:/docker/0123abcd\n1:cpu,cpuacct:/\n")
    assert machine.available_memory(root, proc) == 3 * GiB


def test_v1_no_limit_is_the_largest_page_aligned_number(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    _write(
        root / "memory",
        memory__limit_in_bytes="9223372036854771712\n",
        memory__usage_in_bytes=f"{GiB}\n",
    )
    proc = _proc(tmp_path, "4:memory:/\n", available_kib=2048)
    assert machine.available_memory(root, proc) == 2048 * 1024


def test_nothing_known_is_none(tmp_path: Path) -> None:
    assert machine.available_memory(tmp_path / "none", tmp_path / "noproc") is None


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cgroup=st.text(max_size=60),
    limit=st.text(max_size=30),
    usage=st.text(max_size=30),
    stat=st.text(max_size=60),
    meminfo=st.text(max_size=60),
)
def test_garbage_in_the_files_never_raises(
    tmp_path_factory: pytest.TempPathFactory,
    cgroup: str,
    limit: str,
    usage: str,
    stat: str,
    meminfo: str,
) -> None:
    base = tmp_path_factory.mktemp("garbage")
    root = base / "cgroup"
    files = {"memory.max": limit, "memory.current": usage, "memory.stat": stat}
    root.mkdir()
    for name, text in files.items():
        (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    (base / "proc" / "self").mkdir(parents=True)
    (base / "proc" / "self" / "cgroup").write_bytes(cgroup.encode("utf-8", "surrogatepass"))
    (base / "proc" / "meminfo").write_bytes(meminfo.encode("utf-8", "surrogatepass"))
    memory = machine.available_memory(root, base / "proc")
    assert memory is None or memory >= 0


def test_this_machine() -> None:
    cores = machine.usable_cores()
    assert 1 <= cores <= machine.affinity_cores()
    memory = machine.available_memory()
    assert memory is None or memory > 0


def test_usable_cores_is_lokys_count_or_the_affinity(monkeypatch: pytest.MonkeyPatch) -> None:
    import loky

    machine.usable_cores.cache_clear()
    monkeypatch.setattr(loky, "cpu_count", lambda only_physical_cores=False: 3)
    try:
        assert machine.usable_cores() == 3
        machine.usable_cores.cache_clear()
        monkeypatch.setitem(sys.modules, "loky", None)  # import fails
        assert machine.usable_cores() == machine.affinity_cores()
    finally:
        machine.usable_cores.cache_clear()


def test_rank_workers_follow_the_usable_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = []
    for i in range(4):
        path = tmp_path / f"rank{i}.json"
        path.write_bytes(b" " * 100)
        files.append(path)
    monkeypatch.setattr(machine, "usable_cores", lambda: 2)
    assert worker_count(files, available_bytes=10**9) == 2
    monkeypatch.setattr(machine, "available_memory", lambda: 300)  # 200 bytes a worker
    assert worker_count(files) == 1
