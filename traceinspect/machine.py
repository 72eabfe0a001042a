"""What this machine lets the analysis use: cores and memory, as a container limits them.

A container may show every core and all the host's memory while its cgroup allows it a few
cores and a few gigabytes. Counting from ``os.cpu_count()`` and ``/proc/meminfo`` there
oversubscribes the cores (slower) and, worse, starts more rank workers than memory holds (the
kernel kills them). Both counts here take the cgroup's limits into account.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The unified (v2) hierarchy and the v1 memory controller, where Linux mounts them.
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")


@functools.cache
def usable_cores() -> int:
    """Cores this process may use: those its CPU affinity allows, capped by a cgroup CPU
    quota (a container shown 64 cores but allowed 2 gets 2), as loky counts them for
    joblib. loky is imported here, not at start-up (50 ms): only work large enough to split
    asks."""
    try:
        from loky import cpu_count

        return max(1, int(cpu_count(only_physical_cores=False)))
    except (ImportError, OSError, ValueError):
        return affinity_cores()


def affinity_cores() -> int:
    """Cores the CPU affinity allows (all of them where there is no affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def available_memory(root: Path = CGROUP_ROOT, proc: Path = Path("/proc")) -> int | None:
    """Bytes this process can still allocate: the kernel's ``MemAvailable``, lowered to what
    its cgroup's memory limit leaves (the limit less the usage that cannot be reclaimed: page
    cache that is inactive is); None where neither is known."""
    limits = [m for m in (_meminfo_available(proc), _cgroup_headroom(root, proc)) if m is not None]
    return min(limits) if limits else None


def _meminfo_available(proc: Path) -> int | None:
    try:
        with open(proc / "meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_headroom(root: Path, proc: Path) -> int | None:
    """The least headroom of this process's memory cgroup and its parents (a limit set on a
    parent binds as well), v2 or v1; None where none sets a limit."""
    headrooms = []
    for folder, names in _memory_cgroups(root, proc):
        for directory in (folder, *folder.parents):
            if not directory.is_relative_to(names.root):
                break
            headroom = _headroom(directory, names)
            if headroom is not None:
                headrooms.append(headroom)
    return min(headrooms) if headrooms else None


@dataclass(frozen=True)
class _Names:
    """A hierarchy's root and the names of its limit, usage and reclaimable-cache entries."""

    root: Path
    limit: str
    usage: str
    inactive: str


def _names(version: int, root: Path) -> _Names:
    if version == 2:
        return _Names(root, "memory.max", "memory.current", "inactive_file")
    return _Names(
        root / "memory", "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
    )


def _memory_cgroups(root: Path, proc: Path) -> list[tuple[Path, _Names]]:
    """This process's memory cgroup folders from ``/proc/self/cgroup``: the v2 one (``0::``)
    and the v1 memory controller's. Inside a container the path named there may not be
    mounted (the container sees its own cgroup as the root), so the root is tried too."""
    try:
        lines = (proc / "self" / "cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            names = _names(2, root)
        elif "memory" in controllers.split(","):
            names = _names(1, root)
        else:
            continue
        if ".." in Path(path).parts:
            continue
        folder = names.root / path.lstrip("/")
        found.append((folder if folder.is_dir() else names.root, names))
    return found


def _headroom(directory: Path, names: _Names) -> int | None:
    try:
        limit_text = (directory / names.limit).read_text(encoding="ascii").strip()
        if limit_text == "max":
            return None
        limit = int(limit_text)
        usage = int((directory / names.usage).read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return None
    # v1 writes "no limit" as the largest page-aligned 64-bit number.
    if limit >= 1 << 62:
        return None
    inactive = 0
    try:
        for line in (directory / "memory.stat").read_text(encoding="ascii").splitlines():
            key, _, value = line.partition(" ")
            if key == names.inactive:
                inactive = int(value)
                break
    except (OSError, ValueError):
        pass
    return max(0, limit - max(0, usage - inactive))
