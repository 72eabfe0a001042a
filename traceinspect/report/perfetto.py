"""``--perfetto PATH``: the trace's events plus the diagnosis, as Chrome trace JSON.

Perfetto UI (ui.perfetto.dev) and chrome://tracing open it. It holds:

* the input's events: for a Kineto trace its ``traceEvents`` copied byte for byte (and its
  other top-level keys); for an Nsight Systems export the GPU activities, API calls and
  NVTX ranges as traceinspect read them (one process per GPU, one thread per stream);
* ``traceinspect · regions``: one slice per region occurrence, one track per nesting depth,
  each slice's args carrying the verdict, the replay estimate (graphed µs, saving) and the
  capture pre-flight's verdict;
* ``traceinspect · idle GPU``: every idle gap of a region occurrence's GPU window as a
  slice named by its cause (``host_launch``, ``sync``, ...), one track per region depth,
  args naming the region, the occurrence and the activity that ended the gap;
* ``GPU <d> busy %``: a counter per device, the share of each bin the device was busy.

Times: the trace's own clock in µs (``ts``), written from integer ns as exact decimals;
relative to ``baseTimeNanoseconds`` where the trace has one, as its own events are.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import msgspec
import numpy as np

from traceinspect.analysis.gaps import CAUSES
from traceinspect.report.html_timeline import covered_before

if TYPE_CHECKING:
    from traceinspect.analysis.result import TraceAnalysis
    from traceinspect.model import Timeline

#: Our processes' ids: far above real pids so they never share a track with the trace's.
REGIONS_PID: Final = 2_000_000_001
GAPS_PID: Final = 2_000_000_002
COUNTERS_PID: Final = 2_000_000_003
#: Synthesized GPU processes (Nsight input): this plus the device id.
GPU_PID_BASE: Final = 2_000_001_000
#: Bins of the busy counter over the trace's GPU span (and never finer than 1 µs).
BUSY_BINS: Final = 2_000

_ENCODER = msgspec.json.Encoder()


class _TopLevel(msgspec.Struct, frozen=True):
    """A Kineto file's top level, events left undecoded."""

    traceEvents: msgspec.Raw = msgspec.Raw(b"[]")  # noqa: N815
    baseTimeNanoseconds: int | None = None  # noqa: N815


def write_perfetto(analysis: TraceAnalysis, out: IO[bytes]) -> int:
    """Write the Chrome trace JSON of ``analysis`` to ``out``; return the events added."""
    timeline = analysis.timeline
    base_ns, raw_events, extra_keys = _source(timeline)
    out.write(b'{"traceEvents":')
    if raw_events is not None:
        body = raw_events.rstrip()
        assert body.endswith(b"]")
        body = body[:-1].rstrip()
        out.write(body)
        first = body == b"["
    else:
        out.write(b"[")
        first = True
        for event in timeline_events(timeline, base_ns):
            out.write((b"" if first else b",\n") + _ENCODER.encode(event))
            first = False
    added = 0
    for event in diagnosis_events(analysis, base_ns):  # streamed: never all in memory
        out.write((b"" if first else b",\n") + _ENCODER.encode(event))
        first = False
        added += 1
    out.write(b"]")
    for key, value in extra_keys.items():
        out.write(b"," + _ENCODER.encode(key) + b":" + value)
    out.write(b"}\n")
    return added


def _source(timeline: Timeline) -> tuple[int, bytes | None, dict[str, bytes]]:
    """For a Kineto input: its base time, its raw ``traceEvents`` and other top-level keys."""
    if timeline.meta.format != "kineto":
        return 0, None, {}
    path = Path(timeline.meta.path)
    with path.open("rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        text = f.read()
    top = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
    meta = msgspec.json.decode(text, type=_TopLevel)
    # Every other top-level key as it was (baseTimeNanoseconds included: our own slices are
    # written relative to it, like the copied events).
    keep = {k: bytes(v) for k, v in top.items() if k != "traceEvents"}
    return int(meta.baseTimeNanoseconds or 0), bytes(top.get("traceEvents", b"[]")), keep


def _ts(ns: int, base_ns: int) -> msgspec.Raw:
    """µs as an exact decimal (a 16-digit epoch µs with ns would lose them in a float64)."""
    rel = int(ns) - base_ns
    sign, rel = ("-", -rel) if rel < 0 else ("", rel)
    return msgspec.Raw(f"{sign}{rel // 1000}.{rel % 1000:03d}".encode())


def diagnosis_events(analysis: TraceAnalysis, base_ns: int) -> Iterator[dict[str, Any]]:
    """Our tracks: regions, idle gaps by cause, GPU busy counters (with their metadata)."""
    yield from _process(REGIONS_PID, "traceinspect · regions", -3)
    yield from _process(GAPS_PID, "traceinspect · idle GPU (by cause)", -2)
    yield from _process(COUNTERS_PID, "traceinspect · GPU busy", -1)
    depths: set[int] = set()
    gpu = analysis.timeline.gpu
    next_names = gpu["name"].to_numpy(object)
    for r in analysis.region_results:
        region = r.region
        depth = int(region.depth)
        depths.add(depth)
        args: dict[str, Any] = {
            "region": region.name,
            "source": region.source,
            "verdict": r.verdict,
            "capture": r.capture.verdict,
        }
        est = r.estimate
        if est is not None:
            args.update(
                graphed_us=round(est.graphed_ns / 1000, 3),
                eager_us=round(est.eager_ns / 1000, 3),
                saving_us=round(est.saving_ns / 1000, 3),
                saving_frac=round(est.saving_frac, 4),
                eager_source=est.eager_source,
            )
        decision = getattr(r, "decision", None)
        if decision is not None:
            args["decision"] = decision.choice
        for i, (start, end) in enumerate(zip(region.start_ns, region.end_ns, strict=True)):
            yield {
                "ph": "X",
                "pid": REGIONS_PID,
                "tid": depth,
                "name": region.name,
                "cat": "traceinspect.region",
                "ts": _ts(start, base_ns),
                "dur": _ts(int(end) - int(start), 0),
                "args": {**args, "occurrence": i},
            }
        g = r.gaps
        for k in range(len(g.start_ns)):
            row = int(g.next_row[k])
            yield {
                "ph": "X",
                "pid": GAPS_PID,
                "tid": depth,
                "name": CAUSES[int(g.cause[k])],
                "cat": "traceinspect.idle",
                "ts": _ts(g.start_ns[k], base_ns),
                "dur": _ts(int(g.end_ns[k]) - int(g.start_ns[k]), 0),
                "args": {
                    "region": region.name,
                    "occurrence": int(g.occurrence[k]),
                    "next_activity": str(next_names[row]) if row >= 0 else None,
                },
            }
    for depth in sorted(depths):
        yield _thread_name(REGIONS_PID, depth, f"regions, depth {depth}")
        yield _thread_name(GAPS_PID, depth, f"idle gaps of depth-{depth} regions")
    yield from busy_counter_events(analysis.timeline, base_ns)


def busy_counter_events(timeline: Timeline, base_ns: int) -> Iterator[dict[str, Any]]:
    """Per device, a ``GPU <d> busy %`` counter: the busy share of each of :data:`BUSY_BINS`
    bins over the device's span (union of its streams), then 0 at the end."""
    gpu = timeline.gpu
    if not len(gpu):
        return
    devices = gpu["device"].to_numpy()
    starts = gpu["start_ns"].to_numpy(np.int64)
    ends = gpu["end_ns"].to_numpy(np.int64)
    for device in np.unique(devices):
        mine = devices == device
        s, e = starts[mine], ends[mine]
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
        lo, hi = int(s[0]), int(e.max())
        width = max(1_000, -(-(hi - lo) // BUSY_BINS))
        edges = np.arange(0, hi - lo + width, width, dtype=np.int64)
        covered = covered_before(s - lo, e - lo, edges.astype(np.float64))
        share = np.diff(covered) / width
        name = f"GPU {int(device)} busy %"
        for left, value in zip(edges[:-1].tolist(), share.tolist(), strict=True):
            yield {
                "ph": "C",
                "pid": COUNTERS_PID,
                "name": name,
                "ts": _ts(lo + left, base_ns),
                "args": {"busy %": round(100 * value, 2)},
            }
        yield {
            "ph": "C",
            "pid": COUNTERS_PID,
            "name": name,
            "ts": _ts(lo + int(edges[-1]), base_ns),
            "args": {"busy %": 0},
        }


#: Kineto's ``cat`` for each GPU activity kind, so our own reader reads the file back.
_GPU_CAT: Final = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}


def timeline_events(timeline: Timeline, base_ns: int) -> Iterator[dict[str, Any]]:
    """The timeline's activities as Kineto-style slices (for inputs that are not Kineto):
    GPU activities (one process per device, one thread per stream), API calls and host
    ranges on their threads, linked by ``correlation`` as Kineto links them."""
    gpu, host, ann = timeline.gpu, timeline.host, timeline.annotations
    for device in sorted(set(gpu["device"].tolist())):
        yield from _process(GPU_PID_BASE + int(device), f"GPU {int(device)}", 10 + int(device))
    pairs = set(zip(gpu["device"].tolist(), gpu["stream"].tolist(), strict=True))
    for device, stream in sorted(pairs):
        yield _thread_name(GPU_PID_BASE + int(device), int(stream), f"stream {int(stream)}")
    kind, name = gpu["kind"].to_numpy(object), gpu["name"].to_numpy(object)
    device, stream = gpu["device"].to_numpy(np.int64), gpu["stream"].to_numpy(np.int64)
    start, end = gpu["start_ns"].to_numpy(np.int64), gpu["end_ns"].to_numpy(np.int64)
    launch = gpu["launch_row"].to_numpy(np.int64)
    for i in range(len(gpu)):
        event = _slice(GPU_PID_BASE + int(device[i]), int(stream[i]), str(name[i]),
                       _GPU_CAT.get(str(kind[i]), str(kind[i])), int(start[i]), int(end[i]),
                       base_ns)
        event["args"] = {"device": int(device[i]), "stream": int(stream[i])}
        if launch[i] >= 0:
            event["args"]["correlation"] = int(launch[i]) + 1
        yield event
    api, name = host["api"].to_numpy(object), host["name"].to_numpy(object)
    pid, tid = host["pid"].to_numpy(np.int64), host["tid"].to_numpy(np.int64)
    start, end = host["start_ns"].to_numpy(np.int64), host["end_ns"].to_numpy(np.int64)
    for i in range(len(host)):
        cat = "cuda_driver" if str(api[i]) == "driver" else "cuda_runtime"
        event = _slice(int(pid[i]), int(tid[i]), str(name[i]), cat, int(start[i]), int(end[i]),
                       base_ns)
        event["args"] = {"correlation": i + 1}
        yield event
    host_ann = ann[ann["source"] != "gpu_user_annotation"]
    name = host_ann["name"].to_numpy(object)
    pid, tid = host_ann["pid"].to_numpy(np.int64), host_ann["tid"].to_numpy(np.int64)
    start, end = host_ann["start_ns"].to_numpy(np.int64), host_ann["end_ns"].to_numpy(np.int64)
    for i in range(len(host_ann)):
        yield _slice(int(pid[i]), int(tid[i]), str(name[i]), "user_annotation", int(start[i]),
                     int(end[i]), base_ns)


def _slice(
    pid: int, tid: int, name: str, cat: str, start: int, end: int, base_ns: int
) -> dict[str, Any]:
    return {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat,
            "ts": _ts(start, base_ns), "dur": _ts(end - start, 0)}


def _process(pid: int, name: str, sort_index: int) -> Iterator[dict[str, Any]]:
    yield {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}}
    yield {"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index",
           "args": {"sort_index": sort_index}}


def _thread_name(pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


__all__ = ["busy_counter_events", "diagnosis_events", "timeline_events", "write_perfetto"]
