"""CUDA runtime, CUDA driver and HIP API names: what kind of host call each is (launch, copy,
sync, …) and the direction of a memcpy. One table, shared by the Kineto and Nsight readers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Final

#: (host.kind, pattern) in priority order, matched against the name without its prefix
#: (``cuda``/``cu``/``hip``) and version suffix. First match wins; no match is ``other``.
HOST_KIND_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("graph_launch", r"^Graph(Exec)?Launch"),
        (
            "graph_build",
            r"^(StreamBeginCapture|StreamEndCapture|Graph(Instantiate|Create|Add|Clone|Upload"
            r"|Destroy|Exec\w*Update|ExecDestroy|Node)|ThreadExchangeStreamCaptureMode)",
        ),
        (
            "launch",
            r"^(LaunchKernel|LaunchCooperativeKernel|Launch$|LaunchGrid|ModuleLaunchKernel"
            r"|ExtModuleLaunchKernel|ExtLaunchKernel|LaunchKernelEx|KernelLaunch)",
        ),
        ("memcpy", r"^Memcpy|^MemcpyPeer"),
        ("memset", r"^Memset"),
        ("sync", r"^(DeviceSynchronize|StreamSynchronize|EventSynchronize|CtxSynchronize)"),
        ("event", r"^(EventRecord|EventQuery|StreamWaitEvent|EventCreate|EventDestroy)"),
        (
            "malloc",
            r"^(Malloc|MemAlloc|MemCreate|HostAlloc|MallocHost|ExtMallocWithFlags|MallocAsync"
            r"|MallocManaged|MallocPitch|Malloc3D|MemAllocAsync|MemAllocManaged|MemAllocHost)",
        ),
        ("free", r"^(Free|MemFree|MemRelease|FreeHost|FreeAsync|MemFreeAsync)"),
    )
)
_API_PREFIX: Final = re.compile(r"^(cuda|cu|hip)(?=[A-Z])")
_VERSION_SUFFIX: Final = re.compile(r"_v\d+$")


@lru_cache(maxsize=4096)
def classify_host_call(name: str) -> tuple[str, str, str]:
    """``(name without version suffix, host.kind, api override or "")`` of a runtime call.

    >>> classify_host_call("cudaStreamGetCaptureInfo_v2")
    ('cudaStreamGetCaptureInfo', 'other', '')
    >>> classify_host_call("cuLaunchKernelEx")
    ('cuLaunchKernelEx', 'launch', 'driver')
    >>> classify_host_call("hipGraphLaunch")
    ('hipGraphLaunch', 'graph_launch', '')
    """
    stripped = _VERSION_SUFFIX.sub("", name)
    prefix = _API_PREFIX.match(stripped)
    api = "driver" if prefix is not None and prefix.group(1) == "cu" else ""
    bare = stripped[prefix.end() :] if prefix is not None else stripped
    for kind, pattern in HOST_KIND_PATTERNS:
        if pattern.search(bare):
            return stripped, kind, api
    return stripped, "other", api


_COPY_KIND: Final = re.compile(r"\b(HtoD|DtoH|DtoD|HtoH|PtoP|DtoA|AtoD|AtoH|HtoA|AtoA)\b")
_COPY_KINDS_KEPT: Final = frozenset({"HtoD", "DtoH", "DtoD", "HtoH", "PtoP"})


@lru_cache(maxsize=1024)
def classify_memcpy(name: str) -> tuple[str, str]:
    """``(copy_kind, host_memory)`` from a memcpy name such as
    ``Memcpy HtoD (Pageable -> Device)``.

    >>> classify_memcpy("Memcpy DtoH (Device -> Pinned)")
    ('DtoH', 'pinned')
    """
    match = _COPY_KIND.search(name)
    copy_kind = match.group(1) if match and match.group(1) in _COPY_KINDS_KEPT else ""
    lowered = name.lower()
    if "pageable" in lowered:
        host_memory = "pageable"
    elif "pinned" in lowered:
        host_memory = "pinned"
    else:
        host_memory = ""
    return copy_kind, host_memory


#: kineto's ``cuda_sync_kind`` (or the event name) -> ``syncs.kind``.
SYNC_KINDS: Final[Mapping[str, str]] = {
    "Stream Sync": "stream",
    "Event Sync": "event",
    "Context Sync": "context",
    "Device Sync": "device",
    "Stream Wait Event": "stream_wait_event",
    "Wait Event": "stream_wait_event",
}
