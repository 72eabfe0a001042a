"""The timeline of the HTML report: lanes, the activities drawn on them, and a utilization
overview that stays true at every zoom.

Zoomed out, a lane holds far more activities than pixels: drawing each at a minimum width
would paint a lane full of whatever is most numerous (0.7 µs memsets look like 100 % of a
GPU). So the page shows each lane's *busy share* per time bin, stacked by kind, whenever a
lane has more activities in view than it could draw apart, and the activities themselves as
blocks once zoomed in. :func:`timeline_data` supplies both: every activity (up to
:data:`MAX_EMBEDDED_ACTIVITIES`, beyond which short neighbours are merged into counted
blocks) and the exact busy share per lane and kind over :data:`OVERVIEW_BINS` bins of the
whole trace, for the first paint. The page computes the share for a zoomed window from the
activities themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.model import Timeline

#: Most activities (GPU, host calls, annotations together) embedded in the page. A 300 MB
#: trace holds about 340,000 (10 MB of page data, parsed in well under a second); beyond the
#: cap, runs of short, closely spaced activities of one kind on one lane are merged into one
#: block (hover shows how many), at the finest resolution that meets the cap; the page says so.
MAX_EMBEDDED_ACTIVITIES: Final = 400_000

#: Bins of the whole-trace utilization overview (the first paint, before any zoom): about
#: one per pixel of a laptop-wide plot.
OVERVIEW_BINS: Final = 1_000

#: Annotation nesting levels drawn per host thread; deeper ranges are counted, not drawn
#: (emit_nvtx traces nest a range per operator, tens of levels deep).
MAX_ANNOTATION_DEPTH_LANES: Final = 6

#: Series key -> (legend label, colour), every colour distinct: a GPU activity and the host
#: call that issued it never share one. Keys: a GPU kind, ``<kind> (graph)`` for
#: graph-launched activities, ``call:<host kind>`` for API calls, or an annotation source.
SERIES_STYLE: Final[Mapping[str, tuple[str, str]]] = {
    "kernel": ("kernel", "#4c78a8"),
    "kernel (graph)": ("kernel, graph-launched", "#72b7b2"),
    "memcpy": ("memcpy", "#f58518"),
    "memcpy (graph)": ("memcpy, graph-launched", "#ffbf79"),
    "memset": ("memset", "#54a24b"),
    "memset (graph)": ("memset, graph-launched", "#a1d99b"),
    "graph": ("whole graph", "#b279a2"),
    "call:launch": ("launch call", "#9d755d"),
    "call:graph_launch": ("graph launch call", "#17becf"),
    "call:memcpy": ("memcpy call", "#e7ba52"),
    "call:memset": ("memset call", "#bcbd22"),
    "call:sync": ("sync call", "#e45756"),
    "call:malloc": ("malloc call", "#393b79"),
    "call:free": ("free call", "#6b6ecf"),
    "call:event": ("event call", "#ff9da6"),
    "call:graph_build": ("graph build call", "#ce6dbd"),
    "call:other": ("other API call", "#bab0ac"),
    "profiler_step": ("ProfilerStep", "#2f4b7c"),
    "record_function": ("record_function", "#665191"),
    "nvtx": ("NVTX range", "#a05195"),
    "gpu_user_annotation": ("annotation on GPU", "#d45087"),
}
_UNKNOWN_STYLE: Final = ("other", "#7f7f7f")

IntArray = npt.NDArray[np.int64]

_NS_PER_US: Final = 1000


@dataclass(frozen=True)
class _Lanes:
    """Lane labels in display order, and the lane of every drawn row of each table."""

    labels: list[dict[str, str]]
    gpu: IntArray
    host: IntArray
    annotations: IntArray  # -1: not drawn (too deep)


def timeline_data(
    timeline: Timeline, *, cap: int | None = None, bins: int = OVERVIEW_BINS
) -> dict[str, Any]:
    """Lanes, per-series activity arrays and the utilization overview of the timeline (times
    in µs since the trace start).

    ``cap`` is the most activities embedded (default :data:`MAX_EMBEDDED_ACTIVITIES`).
    ``series[i]`` holds parallel lists ``lane``, ``start_us``, ``end_us``, ``name`` (index
    into ``names``) and ``count`` (activities merged into that block, 1 when embedded as is),
    sorted by lane, then start; ``busy_us`` (summed duration) is present on series where
    blocks were merged. ``downsampled`` is None when every activity is embedded as recorded.
    ``overview`` is :func:`utilization` over the whole span in ``bins`` bins.
    """
    lanes = _lanes(timeline)
    items = _items(timeline, lanes)
    total = len(items.start)
    too_deep = int((lanes.annotations < 0).sum())
    result: dict[str, Any] = {
        "t0_ns": 0,
        "span_us": 0.0,
        "lanes": lanes.labels,
        "names": [],
        "series": [],
        "total": total,
        "drawn": 0,
        "downsampled": None,
        "annotations_not_drawn": too_deep,
        "overview": None,
    }
    if total == 0:
        return result
    t0 = int(items.start.min())
    cap = MAX_EMBEDDED_ACTIVITIES if cap is None else cap
    blocks, resolution = _downsample(items, cap)
    codes, uniques = pd.factorize(items.name[blocks.first], sort=False)
    bounds = np.flatnonzero(np.diff(items.series[blocks.first])) + 1
    series = []
    for rows in np.split(np.arange(len(blocks.first)), bounds):
        first = blocks.first[rows]
        key = items.keys[int(items.series[first[0]])]
        label, colour = SERIES_STYLE.get(key, _UNKNOWN_STYLE)
        count = blocks.count[rows]
        entry: dict[str, Any] = {
            "key": key,
            "label": label,
            "color": colour,
            "lane": items.lane[first].tolist(),
            "start_us": us_since(items.start[first], t0),
            "end_us": us_since(blocks.end[rows], t0),
            "name": codes[rows].tolist(),
            "count": count.tolist(),
        }
        if bool((count > 1).any()):
            entry["busy_us"] = (blocks.busy[rows] / _NS_PER_US).round(3).tolist()
        series.append(entry)
    result.update(
        t0_ns=t0,
        span_us=(int(items.end.max()) - t0) / _NS_PER_US,
        names=[str(n) for n in uniques],
        series=series,
        drawn=len(blocks.first),
        downsampled=None
        if resolution is None
        else {"cap": cap, "resolution_us": resolution / _NS_PER_US},
        overview=utilization(items, t0, int(items.end.max()), bins),
    )
    return result


def utilization(items: _Items, start_ns: int, end_ns: int, bins: int) -> dict[str, Any]:
    """Busy share per bin of ``[start_ns, end_ns)`` for every (series, lane) with activity.

    The share is the time covered by the union of the lane's activities of that series in
    the bin, over the bin's width: exact, whatever the number of activities. Returns
    ``{"bins", "bin_us", "start_us", "lanes": [{"series", "lane", "share": [...]}]}`` where
    ``series`` is the index in :func:`timeline_data`'s ``series`` list (series appear in the
    items' order) and ``share`` holds ``bins`` values rounded to 3 decimals.
    """
    # Relative ns first: absolute epoch ns lose precision in a float64.
    edges = np.linspace(0.0, float(end_ns - start_ns), bins + 1)
    width = (end_ns - start_ns) / bins
    rel_start, rel_end = items.start - np.int64(start_ns), items.end - np.int64(start_ns)
    out: list[dict[str, Any]] = []
    group_start = np.ones(len(items.start), dtype=bool)
    group_start[1:] = (np.diff(items.series) != 0) | (np.diff(items.lane) != 0)
    bounds = np.append(np.flatnonzero(group_start), len(items.start))
    series_index = -1
    previous_series = None
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        if items.series[lo] != previous_series:
            series_index += 1
            previous_series = items.series[lo]
        covered = covered_before(rel_start[lo:hi], rel_end[lo:hi], edges)
        share = np.diff(covered) / width if width > 0 else np.ones(bins)
        out.append(
            {
                "series": series_index,
                "lane": int(items.lane[lo]),
                "share": np.clip(share, 0.0, 1.0).round(3).tolist(),
            }
        )
    return {
        "bins": bins,
        "bin_us": width / _NS_PER_US,
        "start_us": 0.0,
        "lanes": out,
    }


def covered_before(start: IntArray, end: IntArray, at: npt.NDArray[np.float64]) -> Any:
    """Time covered by the union of ``[start, end)`` intervals (sorted by start) before each
    instant of ``at``."""
    reach = np.maximum.accumulate(end)
    opens = np.ones(len(start), dtype=bool)
    opens[1:] = start[1:] > reach[:-1]
    first = np.flatnonzero(opens)
    union_start = start[first]
    union_end = np.maximum.reduceat(end, first)
    before = np.concatenate([[0], np.cumsum(union_end - union_start)[:-1]])
    k = np.searchsorted(union_start, at, side="right") - 1
    inside = np.clip(at - union_start[np.maximum(k, 0)], 0, None)
    inside = np.minimum(inside, (union_end - union_start)[np.maximum(k, 0)])
    return np.where(k >= 0, before[np.maximum(k, 0)] + inside, 0.0)


def us_since(ns: IntArray, t0: int) -> list[float]:
    # int64 subtraction first: the absolute epoch-ns values would lose ns in a float64.
    return ((ns - np.int64(t0)) / _NS_PER_US).round(3).tolist()  # type: ignore[no-any-return]


def _lanes(timeline: Timeline) -> _Lanes:
    """One lane per annotation depth and per API-calling host thread, then per GPU stream."""
    host, ann, gpu = timeline.host, timeline.annotations, timeline.gpu
    host_ann = ann[ann["source"] != "gpu_user_annotation"]
    gpu_ann = ann[ann["source"] == "gpu_user_annotation"]
    threads = sorted(_pairs(host, "pid", "tid") | _pairs(host_ann, "pid", "tid"))
    several_pids = len({pid for pid, _ in threads}) > 1
    depth = host_ann["depth"].clip(lower=0)
    depths = (
        depth.groupby([host_ann["pid"], host_ann["tid"]]).max().to_dict() if len(host_ann) else {}
    )
    labels: list[dict[str, str]] = []
    ann_keys: list[tuple[int, int, int]] = []
    api_keys: list[tuple[int, int]] = []
    ann_lane: list[int] = []
    api_lane: list[int] = []
    for pid, tid in threads:
        thread = f"pid {pid} tid {tid}" if several_pids else f"thread {tid}"
        deepest = depths.get((pid, tid), -1)
        for level in range(min(deepest + 1, MAX_ANNOTATION_DEPTH_LANES)):
            ann_keys.append((pid, tid, level))
            ann_lane.append(len(labels))
            labels.append(
                {"label": f"{thread} · regions {level}", "group": "region", "block": thread}
            )
        api_keys.append((pid, tid))
        api_lane.append(len(labels))
        labels.append({"label": f"{thread} · API calls", "group": "host", "block": thread})
    gpu_ann_streams = _pairs(gpu_ann, "device", "stream")
    gpu_ann_keys: list[tuple[int, int]] = []
    gpu_ann_lane: list[int] = []
    stream_keys: list[tuple[int, int]] = []
    stream_lane: list[int] = []
    for device, stream in sorted(_pairs(gpu, "device", "stream") | gpu_ann_streams):
        if (device, stream) in gpu_ann_streams:
            gpu_ann_keys.append((device, stream))
            gpu_ann_lane.append(len(labels))
            labels.append(
                {
                    "label": f"GPU {device} · stream {stream} · regions",
                    "group": "gpu_region",
                    "block": f"GPU {device}",
                }
            )
        stream_keys.append((device, stream))
        stream_lane.append(len(labels))
        labels.append(
            {"label": f"GPU {device} · stream {stream}", "group": "gpu", "block": f"GPU {device}"}
        )

    ann_lanes = np.full(len(ann), -1, dtype=np.int64)
    is_host_ann = (ann["source"] != "gpu_user_annotation").to_numpy()
    ann_lanes[is_host_ann] = _lookup([host_ann["pid"], host_ann["tid"], depth], ann_keys, ann_lane)
    ann_lanes[~is_host_ann] = _lookup(
        [gpu_ann["device"], gpu_ann["stream"]], gpu_ann_keys, gpu_ann_lane
    )
    return _Lanes(
        labels=labels,
        gpu=_lookup([gpu["device"], gpu["stream"]], stream_keys, stream_lane),
        host=_lookup([host["pid"], host["tid"]], api_keys, api_lane),
        annotations=ann_lanes,
    )


def _pairs(frame: pd.DataFrame, a: str, b: str) -> set[tuple[int, int]]:
    distinct = frame[[a, b]].drop_duplicates()
    return set(zip(distinct[a].tolist(), distinct[b].tolist(), strict=True))


def _lookup(
    columns: Sequence[pd.Series], keys: Sequence[tuple[int, ...]], lanes: Sequence[int]
) -> IntArray:
    """Lane of each row whose key columns equal one of ``keys``; -1 where none does."""
    if len(columns[0]) == 0:
        return np.empty(0, dtype=np.int64)
    if not keys:
        return np.full(len(columns[0]), -1, dtype=np.int64)
    index = pd.MultiIndex.from_tuples(list(keys))
    rows = pd.MultiIndex.from_arrays([c.to_numpy(np.int64) for c in columns])
    position = index.get_indexer(rows)
    out = np.asarray(lanes, dtype=np.int64)[position]
    out[position < 0] = -1
    return out


@dataclass(frozen=True)
class _Items:
    """Every drawable activity, sorted by (series, lane, start); ``series`` indexes ``keys``."""

    keys: list[str]
    series: IntArray
    lane: IntArray
    start: IntArray
    end: IntArray
    name: npt.NDArray[np.object_]


def _items(timeline: Timeline, lanes: _Lanes) -> _Items:
    gpu, host, ann = timeline.gpu, timeline.host, timeline.annotations
    keys = list(SERIES_STYLE)  # series codes follow this order, unknown kinds appended
    kind_codes, kinds = pd.factorize(gpu["kind"], sort=False)
    plain = _key_codes([str(k) for k in kinds], keys)
    graph = _key_codes([f"{k} (graph)" if k != "graph" else "graph" for k in kinds], keys)
    from_graph = gpu["from_graph"].to_numpy(bool)
    series = np.concatenate(
        [
            np.where(from_graph, graph[kind_codes], plain[kind_codes]),
            _series_codes(host["kind"], keys, prefix="call:"),
            _series_codes(ann["source"], keys),
        ]
    )
    lane = np.concatenate([lanes.gpu, lanes.host, lanes.annotations])
    drawn = lane >= 0
    start, end, name = (
        np.concatenate([t[col].to_numpy(dtype) for t in (gpu, host, ann)])[drawn]
        for col, dtype in (("start_ns", np.int64), ("end_ns", np.int64), ("name", object))
    )
    series, lane = series[drawn], lane[drawn]
    order = np.lexsort((start, lane, series))
    return _Items(keys, series[order], lane[order], start[order], end[order], name[order])


def _series_codes(values: pd.Series, keys: list[str], prefix: str = "") -> IntArray:
    """Index into ``keys`` of ``prefix + value`` per row (new keys appended)."""
    codes, uniques = pd.factorize(values, sort=False)
    return _key_codes([f"{prefix}{u}" for u in uniques], keys)[codes]


def _key_codes(names: list[str], keys: list[str]) -> IntArray:
    keys.extend(n for n in dict.fromkeys(names) if n not in keys)
    return np.array([keys.index(n) for n in names], dtype=np.int64)


@dataclass(frozen=True)
class _Blocks:
    """Drawn blocks: ``first`` row of each in the items, its end, how many, summed duration."""

    first: IntArray
    end: IntArray
    count: IntArray
    busy: IntArray


def _downsample(items: _Items, cap: int) -> tuple[_Blocks, int | None]:
    """Merge runs of short, close activities per (series, lane) until at most ``cap`` remain.

    An activity joins the run before it when both last at most the resolution and the gap
    between them is at most the resolution. Returns the blocks and the resolution in ns: the
    smallest that meets the cap (found by doubling, then bisection; the block count only falls
    as it grows), None when everything is drawn as recorded.
    """
    start, end = items.start, items.end
    dur = end - start
    n = len(start)
    if n <= cap:
        rows = np.arange(n, dtype=np.int64)
        return _Blocks(rows, end, np.ones(n, dtype=np.int64), dur), None
    group_start = np.ones(n, dtype=bool)
    group_start[1:] = (np.diff(items.series) != 0) | (np.diff(items.lane) != 0)
    # Latest end among the earlier activities of the same (series, lane): what a gap is from.
    bounds = np.append(np.flatnonzero(group_start), n)
    reach = np.empty_like(end)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        reach[lo:hi] = np.maximum.accumulate(end[lo:hi])
    gap = np.zeros_like(start)
    gap[1:] = start[1:] - reach[:-1]

    def firsts(resolution: int) -> IntArray:
        short = dur <= resolution
        joins = ~group_start
        joins[1:] &= short[1:] & short[:-1] & (gap[1:] <= resolution)
        return np.flatnonzero(~joins)

    span = int(end.max() - start.min())
    fits = max(1, span // (cap * 4))  # a first guess: a quarter of a cap-sized mean spacing
    while len(firsts(fits)) > cap and fits <= span:
        fits *= 2
    too_fine = 0
    while fits - too_fine > 1:
        middle = (too_fine + fits) // 2
        if len(firsts(middle)) <= cap:
            fits = middle
        else:
            too_fine = middle
    first = firsts(fits)
    return (
        _Blocks(
            first=first,
            end=np.maximum.reduceat(end, first),
            count=np.diff(np.append(first, n)),
            busy=np.add.reduceat(dur, first),
        ),
        fits,
    )
