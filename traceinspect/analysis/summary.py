"""What is in a trace, before any diagnosis: devices, streams and their busy time, kernels by
total time, launch APIs, annotation names.

:func:`summarize` is pure: a :class:`~traceinspect.model.Timeline` in, a
:class:`TraceSummary` out. Times are integer ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from traceinspect.analysis.arrays import BoolArray, queued_before_recording
from traceinspect.analysis.intervals import union_ns
from traceinspect.analysis.regions import base_name
from traceinspect.model import Timeline


@dataclass(frozen=True)
class DeviceInfo:
    """A GPU the trace names (``name`` is ``""`` when the trace does not say)."""

    id: int
    name: str


@dataclass(frozen=True)
class StreamBusy:
    """One stream of one device: its activities and their union (busy) time."""

    stream: int
    activities: int
    kernels: int
    busy_ns: int


@dataclass(frozen=True)
class DeviceBusy:
    """One device: first-to-last activity span, the union of all its activity, its streams."""

    device: int
    span_ns: int
    busy_ns: int
    streams: tuple[StreamBusy, ...]

    @property
    def busy_share(self) -> float | None:
        """``busy_ns / span_ns``; ``None`` for an empty span."""
        return self.busy_ns / self.span_ns if self.span_ns > 0 else None


@dataclass(frozen=True)
class KernelTotal:
    """All launches of one kernel name: count, summed duration, mean duration."""

    name: str
    count: int
    total_ns: int
    mean_ns: int
    #: Share of the summed duration of all kernels (``None`` when that sum is 0).
    share: float | None


@dataclass(frozen=True)
class LaunchApiCount:
    """How often one host API launched GPU work."""

    name: str
    api: str  # runtime | driver
    kind: str  # launch | graph_launch | memcpy | memset
    count: int


@dataclass(frozen=True)
class AnnotationCount:
    """How often a range name (``#N`` stripped) occurs, per source."""

    name: str
    source: str
    count: int


@dataclass(frozen=True)
class ActivityCounts:
    kernel: int
    memcpy: int
    memset: int
    graph: int  # whole-graph records (graph-level nsys traces)


@dataclass(frozen=True)
class TraceSummary:
    """The trace's contents. Lists are ordered as reported (largest first)."""

    path: str
    format: str
    generation: str
    devices: tuple[DeviceInfo, ...]
    notes: tuple[str, ...]  # what the reader noticed
    activities: ActivityCounts
    gpu: tuple[DeviceBusy, ...]
    #: Every kernel name, by summed duration (reports show the first few).
    kernels: tuple[KernelTotal, ...]
    launch_apis: tuple[LaunchApiCount, ...]
    annotations: tuple[AnnotationCount, ...]
    without_launch_record: int  # GPU activities whose launch call is unknown
    from_graph: int  # GPU activities launched by a graph launch
    #: Of ``without_launch_record``, those launched before the recording began (their stream
    #: ran them before any launch it recorded: :func:`queued_before_recording`), and how long
    #: the GPU worked through them: from the first GPU activity to the last of their ends.
    queued_before_recording: int = 0
    queued_before_recording_ns: int = 0


def summarize(timeline: Timeline, queued_before: BoolArray | None = None) -> TraceSummary:
    """Devices, streams, activity counts, GPU busy share, kernels, launch APIs, annotations.
    ``queued_before``, where the caller has it (the timeline's index holds it:
    :attr:`~traceinspect.analysis.arrays.TimelineArrays.queued_before`), spares finding the
    work queued before the recording again."""
    gpu = timeline.gpu
    meta = timeline.meta
    kinds = gpu["kind"].value_counts()
    activities = ActivityCounts(
        *(int(kinds.get(k, 0)) for k in ("kernel", "memcpy", "memset", "graph"))
    )
    return TraceSummary(
        path=meta.path,
        format=meta.format,
        generation=meta.generation,
        devices=tuple(DeviceInfo(int(d.id), d.name) for d in meta.devices),
        notes=tuple(meta.notes),
        activities=activities,
        gpu=_device_busy(timeline),
        kernels=_kernel_totals(timeline),
        launch_apis=_launch_apis(timeline),
        annotations=_annotation_counts(timeline),
        without_launch_record=int((gpu["launch_row"].to_numpy() == -1).sum()) if len(gpu) else 0,
        from_graph=int(np.count_nonzero(gpu["from_graph"].to_numpy())) if len(gpu) else 0,
        **_queued_before(timeline, queued_before),
    )


def _queued_before(timeline: Timeline, queued: BoolArray | None) -> dict[str, int]:
    gpu = timeline.gpu
    if len(gpu) == 0:
        return {}
    start = gpu["start_ns"].to_numpy(np.int64)
    if queued is None:
        queued = queued_before_recording(
            gpu["device"].to_numpy(np.int64),
            gpu["stream"].to_numpy(np.int64),
            start,
            gpu["launch_row"].to_numpy(np.int64) >= 0,
        )
    if not queued.any():
        return {}
    span = int(gpu["end_ns"].to_numpy(np.int64)[queued].max() - start.min())
    return {"queued_before_recording": int(queued.sum()), "queued_before_recording_ns": span}


def _device_busy(timeline: Timeline) -> tuple[DeviceBusy, ...]:
    gpu = timeline.gpu
    devices = gpu["device"].to_numpy()
    streams_col = gpu["stream"].to_numpy()
    starts = gpu["start_ns"].to_numpy()
    ends = gpu["end_ns"].to_numpy()
    is_kernel = (gpu["kind"] == "kernel").to_numpy()
    out = []
    for device in np.unique(devices):
        on_device = devices == device
        start, end = int(starts[on_device].min()), int(ends[on_device].max())
        streams = []
        for stream in np.unique(streams_col[on_device]):
            sel = on_device & (streams_col == stream)
            streams.append(
                StreamBusy(
                    stream=int(stream),
                    activities=int(sel.sum()),
                    kernels=int((sel & is_kernel).sum()),
                    busy_ns=union_ns(starts[sel], ends[sel]),
                )
            )
        out.append(
            DeviceBusy(
                device=int(device),
                span_ns=end - start,
                busy_ns=union_ns(starts[on_device], ends[on_device]),
                streams=tuple(streams),
            )
        )
    return tuple(out)


def _kernel_totals(timeline: Timeline) -> tuple[KernelTotal, ...]:
    kernels = timeline.kernels
    if not len(kernels):
        return ()
    dur = kernels["end_ns"] - kernels["start_ns"]
    total = int(dur.sum())
    agg = (
        dur.groupby(kernels["name"], sort=False)
        .agg(["count", "sum", "mean"])
        .sort_values("sum", ascending=False)
    )
    return tuple(
        KernelTotal(
            name=str(name),
            count=int(count),
            total_ns=int(summed),
            mean_ns=int(round(mean)),
            share=int(summed) / total if total else None,
        )
        for name, count, summed, mean in zip(
            agg.index, agg["count"], agg["sum"], agg["mean"], strict=True
        )
    )


def _launch_apis(timeline: Timeline) -> tuple[LaunchApiCount, ...]:
    host = timeline.host
    launched = host[host["kind"].isin(["launch", "graph_launch", "memcpy", "memset"])]
    apis = launched.groupby(["name", "api", "kind"], sort=False).size()
    return tuple(
        LaunchApiCount(name=str(key[0]), api=str(key[1]), kind=str(key[2]), count=int(count))
        for key, count in apis.sort_values(ascending=False).items()
        if isinstance(key, tuple)
    )


def _annotation_counts(timeline: Timeline) -> tuple[AnnotationCount, ...]:
    ann = timeline.annotations
    if not len(ann):
        return ()
    base = ann["name"].map(base_name)
    counts = ann.groupby([base, ann["source"]], sort=False).size()
    return tuple(
        AnnotationCount(name=str(key[0]), source=str(key[1]), count=int(count))
        for key, count in counts.sort_values(ascending=False).items()
        if isinstance(key, tuple)
    )
