"""A multi-stream workload's predicted replay node by node, beside its profiled replays.

For each graph of several streams in the step's first occurrence, the schedule's start and
end of every node (:meth:`GraphSchedule.spans_ns`, from the eager trace, as ``analyze``
predicts it) is printed beside the same kernel's start and end in the graphed trace's
replays (the median over replays, and the earliest and latest start). Kernels are matched
by name and grid, in start order within each; replays whose kernels do not match the
graph's one for one are left out (a graph none matches is shown without the replay's
columns). Where two branches run the same kernels (two LSTMs, twin towers) side by side,
their k-th kernels may swap between the schedule and a replay: read such rows by branch,
not one by one. Times are µs from the graph's first node::

    python bench/replay_nodes.py holdout32/conv_beside_gemm_2streams_b8 [--all]

``--all`` lists every node, not only the matrix kernels and each stream's first;
``--graphs N`` shows the first N graphs scheduled (one by default: each occurrence of the
step schedules its own); ``--handed-over`` schedules a library's hand-overs as the range's
low end reads them (cuDNN's multi-layer RNNs: ``holdout45/gru_fp32_one_stream_b16``'s layer
2 starts 207 µs in, the replays' 202, the prediction's 362). ``--score SETS`` prints, per
multi-stream workload of the named sets, the median distance of its graph's node ends from
the replays' (a share of the replays' span)::

    python bench/replay_nodes.py --score holdout31,holdout32

``--late-streams SETS`` prints, per multi-stream workload of the named sets, each stream's
first kernel: how many of the graph's nodes were launched (captured) before it, whether it
waits on another stream (forked) or is a root, and its predicted and replayed start; then
the median lateness per node captured before, over the streams captured 10th or later::

    python bench/replay_nodes.py --late-streams holdout42,holdout42_rerun

``--root-handover SETS`` prints, per graph of two or more root branches (first kernels that
wait on no other stream) whose first kernel starts while its launch call runs (the GPU idle
when it was called), when the root captured last starts, as a share of the call's length
from its start (the median over replays), then the median over graphs::

    python bench/replay_nodes.py --root-handover holdout15,holdout42

``--first-replays`` compares, in every graphed trace of the validation sets, the first
replay's span with the median of the others', for graphs of several streams and of one::

    python bench/replay_nodes.py --first-replays
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from validation_table import VALIDATION_DIR, prepare, set_workloads  # noqa: E402

from traceinspect.analysis.estimate import occurrence  # noqa: E402
from traceinspect.analysis.estimate.columns import launch_times  # noqa: E402
from traceinspect.calibration import calibration_for  # noqa: E402
from traceinspect.parse import load_trace  # noqa: E402


def predicted_graphs(name: str, handed_over: bool = False) -> tuple[Any, list[Any]]:
    """The prepared workload ``SET/WORKLOAD`` and the multi-stream graphs its estimate
    schedules, in the order first scheduled; ``handed_over``: with the dependencies the
    range's low end reads a library's hand-overs by (``infer_dependencies`` ``pipelined``)
    where they differ."""
    group, workload = name.split("/", 1)
    found = [w for w in set_workloads([group]) if w.name == name]
    if not found:
        raise SystemExit(f"{name}: no such workload under {VALIDATION_DIR}")
    prepared = prepare(found[0])
    seen: dict[int, Any] = {}
    original = occurrence._Graph.path_ns

    def spy(self: Any, *args: Any, **kwargs: Any) -> float:
        if self.share is not None and self.rows is not None:
            seen.setdefault(id(self), self)
        return original(self, *args, **kwargs)

    occurrence._Graph.path_ns = spy  # type: ignore[method-assign]
    try:
        prepared.estimate(calibration_for(prepared.timeline))
    finally:
        occurrence._Graph.path_ns = original  # type: ignore[method-assign]
    graphs = list(seen.values())
    if handed_over:
        graphs = [g if g.handover is None else replace(g, deps=g.handover) for g in graphs]
    return prepared, graphs


def graphed_trace(prepared: Any) -> Path | None:
    """The graphed trace recorded beside a prepared workload's eager one, if any."""
    found = sorted(prepared.workload.trace.parent.glob("*.graphed.json.gz"))
    return found[0] if found else None


@lru_cache(maxsize=1)  # replays() and launch_calls() of one trace parse it once
def _load(trace: Path) -> Any:
    return load_trace(trace)


def _launches(trace: Path) -> Iterator[tuple[Any, Any]]:
    """Per replay in ``trace``, its correlation and its kernels, in correlation order."""
    gpu = _load(trace).gpu
    yield from gpu[gpu["from_graph"].astype(bool) & (gpu["kind"] == "kernel")].groupby(
        "correlation"
    )


def replays(trace: Path) -> list[dict[tuple[str, str], list[tuple[float, float]]]]:
    """Per replay in ``trace`` (kernels of one graph launch), each (name, grid)'s kernels'
    (start, end) in ns, in start order."""
    out = []
    for _, launch in _launches(trace):
        launch = launch.sort_values("start_ns")
        first = int(launch["start_ns"].min())
        by: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for name, grid, s, e in zip(
            launch["name"], launch["grid"], launch["start_ns"], launch["end_ns"], strict=True
        ):
            by[(str(name), str(grid))].append((int(s) - first, int(e) - first))
        out.append(dict(by))
    return out


def launch_calls(trace: Path) -> list[tuple[float, float] | None]:
    """Per replay in ``trace``, in :func:`replays`' order, its launch call's start and end
    in ns from the replay's first kernel (None where the trace holds no call for it)."""
    calls = _load(trace).host.drop_duplicates("correlation").set_index("correlation")
    out: list[tuple[float, float] | None] = []
    for correlation, launch in _launches(trace):
        first = int(launch["start_ns"].min())
        if correlation in calls.index:
            call = calls.loc[correlation]
            out.append((int(call["start_ns"]) - first, int(call["end_ns"]) - first))
        else:
            out.append(None)
    return out


@dataclass(frozen=True)
class Aligned:
    """One graph's schedule beside its traced replays: per kernel node (in predicted start
    order) its index, (name, grid) and which of those it is; the replays whose kernels
    match the graph's one for one."""

    start: np.ndarray
    end: np.ndarray
    nodes: list[tuple[int, tuple[str, str], int]]
    replays: list[dict[tuple[str, str], list[tuple[float, float]]]]
    #: Which of the traced replays those are (their indices).
    kept: list[int]

    @classmethod
    def of(cls, timeline_gpu: Any, graph: Any, traced: list[Any]) -> Aligned:
        start, end = graph.schedule.spans_ns(graph.duration, graph.overhead)
        names = timeline_gpu["name"].to_numpy()[graph.rows].astype(str)
        grids = timeline_gpu["grid"].to_numpy()[graph.rows].astype(str)
        kernels = timeline_gpu["kind"].to_numpy()[graph.rows] == "kernel"
        nth: dict[tuple[str, str], int] = defaultdict(int)
        nodes = []
        for i in np.argsort(start, kind="stable"):
            if kernels[i]:
                k = (names[i], grids[i])
                nodes.append((int(i), k, nth[k]))
                nth[k] += 1
        kept = [
            j for j, r in enumerate(traced) if all(len(r.get(k, [])) == n for k, n in nth.items())
        ]
        matching = [traced[j] for j in kept]
        return cls(start - start.min(), end - start.min(), nodes, matching, kept)

    def kernels(self) -> dict[int, tuple[tuple[str, str], int]]:
        """Node -> its kernel's (name, grid) and which of that kernel it is in the replays."""
        return {i: (k, n) for i, k, n in self.nodes}

    def spans(self) -> list[float]:
        """Each matching replay's span (ns)."""
        return [max(e for v in r.values() for _, e in v) for r in self.replays]


def first_graph_aligned(name: str) -> tuple[Any, Any, Aligned] | None:
    """The prepared workload ``name``, its first multi-stream graph and that graph aligned
    with the replays of its graphed trace; None where it has no such graph, no graphed
    trace, or no replay matching the graph."""
    prepared, graphs = predicted_graphs(name)
    graphed = graphed_trace(prepared)
    if not graphs or graphed is None:
        return None
    a = Aligned.of(prepared.timeline.gpu, graphs[0], replays(graphed))
    return (prepared, graphs[0], a) if a.replays else None


def aligned_graphs(sets: list[str]) -> Iterator[tuple[str, Any, Any, Aligned]]:
    """Per workload of the named sets with one (:func:`first_graph_aligned`): its name, the
    prepared workload, its first multi-stream graph and that graph beside its replays."""
    for w in set_workloads(sets):
        found = first_graph_aligned(w.name)
        if found is not None:
            yield (w.name, *found)


def node_error(name: str) -> float | None:
    """How far the schedule's node ends are from the replays' in ``name``'s first
    multi-stream graph: the median over its kernels of |predicted end − the replays' median
    end|, as a share of the replays' median span; None where no replay matches."""
    found = first_graph_aligned(name)
    return None if found is None else _node_error(found[2])


def _node_error(a: Aligned) -> float:
    off = [abs(a.end[i] - float(np.median([r[k][n][1] for r in a.replays]))) for i, k, n in a.nodes]
    return float(np.median(off)) / float(np.median(a.spans()))


def capture_rank(prepared: Any, rows: np.ndarray) -> np.ndarray:
    """Per node, how many of the graph's nodes were launched before it (capture order)."""
    launched_at, _ = launch_times(prepared.columns, rows)
    key = np.where(launched_at >= 0, launched_at, np.iinfo(np.int64).max)
    rank = np.empty(len(rows), np.int64)
    rank[np.argsort(key, kind="stable")] = np.arange(len(rows))
    return rank


def stream_heads(prepared: Any, graph: Any) -> tuple[np.ndarray, dict[int, int], np.ndarray]:
    """Per node its capture rank (:func:`capture_rank`), each stream's first node in capture
    order (stream -> node), and per node whether it waits on another stream's (is forked)."""
    rank = capture_rank(prepared, np.asarray(graph.rows))
    forked = np.zeros(len(rank), bool)
    forked[[dst for _, dst in graph.deps]] = True
    heads = {
        int(s): int(min(np.flatnonzero(graph.keys == s), key=lambda i: rank[i]))
        for s in np.unique(graph.keys)
    }
    return rank, heads, forked


def late_streams(sets: list[str]) -> None:
    """Print when each stream's first kernel starts in the schedule and in the replays,
    beside how many nodes were captured before it (see the module's docstring)."""
    per_node: list[float] = []
    for name, prepared, graph, a in aligned_graphs(sets):
        rank, heads, forked = stream_heads(prepared, graph)
        kernels = a.kernels()
        print(f"{name}: {len(rank)} nodes")
        for s, first in heads.items():
            if first not in kernels:
                continue
            k, n = kernels[first]
            replayed = float(np.median([r[k][n][0] for r in a.replays]))
            late = replayed - float(a.start[first])
            if rank[first] >= 10:
                per_node.append(late / rank[first])
            print(
                f"  stream {s % 1000:4d} captured #{rank[first]:<4d} "
                f"{'forked' if forked[first] else 'root  '} predicted {a.start[first] / 1000:7.1f} "
                f"replay {replayed / 1000:7.1f} µs  {k[0][:50]}"
            )
    if per_node:
        print(
            f"{len(per_node)} streams captured 10th or later: a median "
            f"{np.median(per_node):.0f} ns late per node captured before them"
        )


def root_handover(sets: list[str]) -> None:
    """Print, for each graph of two or more root branches whose first kernel starts while
    its launch call runs, when the root captured last starts, as a share of the call's
    length from its start (see the module's docstring)."""
    shares: list[float] = []
    for name, prepared, graph, a in aligned_graphs(sets):
        graphed = graphed_trace(prepared)
        assert graphed is not None  # aligned with its replays
        calls = launch_calls(graphed)
        rank, heads, forked = stream_heads(prepared, graph)
        kernels = a.kernels()
        roots = [first for first in heads.values() if not forked[first]]
        last = max(roots, key=lambda i: rank[i]) if len(roots) > 1 else None
        timed = [(r, span) for r, j in zip(a.replays, a.kept, strict=True) if (span := calls[j])]
        if last not in kernels or not timed:
            continue
        k, n = kernels[last]
        call = float(np.median([end - start for _, (start, end) in timed]))
        first_in = float(np.median([-start for _, (start, _) in timed]))
        if first_in >= 0.8 * call:  # the GPU was busy when the call began
            continue
        share = float(
            np.median([(r[k][n][0] - start) / (end - start) for r, (start, end) in timed])
        )
        shares.append(share)
        print(
            f"{name:60s} {len(roots)} roots, the last captured #{rank[last]} of {len(rank)}: "
            f"call {call / 1000:7.1f} µs, first kernel {first_in / call:4.2f} into it, "
            f"the last root {share:4.2f}"
        )
    if shares:
        v = np.array(shares)
        q1, mid, q3 = np.percentile(v, [25, 50, 75])
        print(
            f"{len(v)} graphs: the root captured last starts a median {mid:.2f} of the launch "
            f"call's length after it begins (middle half {q1:.2f}-{q3:.2f}); within 12 % of "
            f"its end on {int((abs(v - 1) <= 0.12).sum())}"
        )


def first_replays() -> None:
    """Print how the first replay of each graphed trace compares with the others."""
    out: dict[bool, list[float]] = {True: [], False: []}
    for trace in sorted(VALIDATION_DIR.glob("*/*/*.graphed.json.gz")):
        if trace.parts[-3].endswith("_workloads"):
            continue
        gpu = load_trace(trace).gpu
        launched = gpu[gpu["from_graph"].astype(bool)]
        spans = [
            float(x["end_ns"].max() - x["start_ns"].min())
            for _, x in sorted(
                launched.groupby("correlation"), key=lambda t: t[1]["start_ns"].min()
            )
        ]
        if len(spans) >= 3:
            out[launched["stream"].nunique() > 1].append(spans[0] / np.median(spans[1:]) - 1)
    for several, label in ((True, "several streams"), (False, "one stream")):
        v = np.array(out[several])
        print(
            f"{label}: {len(v)} graphed traces, the first replay a median {np.median(v):+.1%} "
            f"against the rest; more than 5 % longer in {(v > 0.05).sum()}, shorter in "
            f"{(v < -0.05).sum()}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "workload", nargs="?", help="SET/WORKLOAD under sample_traces/validation, or SETS"
    )
    ap.add_argument(
        "--score",
        action="store_true",
        help="WORKLOAD names comma-separated sets: print each multi-stream workload's node error",
    )
    ap.add_argument("--all", action="store_true", help="every node, not only the main ones")
    ap.add_argument("--graphs", type=int, default=1, help="how many graphs to show (1)")
    ap.add_argument(
        "--handed-over",
        action="store_true",
        help="schedule a library's hand-overs as the range's low end reads them (cuDNN's RNNs)",
    )
    ap.add_argument(
        "--first-replays", action="store_true", help="how each trace's first replay compares"
    )
    ap.add_argument(
        "--root-handover",
        action="store_true",
        help="WORKLOAD names comma-separated sets: when the root captured last starts",
    )
    ap.add_argument(
        "--late-streams",
        action="store_true",
        help="WORKLOAD names comma-separated sets: when each stream's first kernel starts",
    )
    args = ap.parse_args()
    if args.first_replays:
        first_replays()
        return 0
    if args.workload is None:
        ap.error(
            "name a workload (SET/WORKLOAD), or sets with --score, --late-streams or "
            "--root-handover, or --first-replays"
        )
    if args.late_streams:
        late_streams(args.workload.split(","))
        return 0
    if args.root_handover:
        root_handover(args.workload.split(","))
        return 0
    if args.score:
        errors = []
        for name, _, _, a in aligned_graphs(args.workload.split(",")):
            errors.append(_node_error(a))
            print(f"{name:60s} {errors[-1]:6.1%}")
        print(
            f"{len(errors)} workloads: node end error median {np.median(errors):.1%}, "
            f"mean {np.mean(errors):.1%}"
        )
        return 0
    prepared, graphs = predicted_graphs(args.workload, args.handed_over)
    gpu = prepared.timeline.gpu
    graphed = graphed_trace(prepared)
    traced = replays(graphed) if graphed is not None else []
    if not graphs:
        print(f"{args.workload}: no multi-stream graph")
        return 0
    for graph in graphs[: args.graphs]:
        a = Aligned.of(gpu, graph, traced)
        print(
            f"graph of {len(graph.rows)} nodes, {len(np.unique(graph.keys))} streams: predicted "
            f"{a.end.max() / 1000:.1f} µs; {len(a.replays)} of {len(traced)} replays match"
            + (", spanning " + ", ".join(f"{s / 1000:.1f}" for s in a.spans()) + " µs")
            * bool(a.replays)
        )
        kernel_rows = [i for i, _, _ in a.nodes]
        first_of_stream = {
            min((i for i in kernel_rows if graph.keys[i] == s), key=lambda i: a.start[i])
            for s in np.unique(graph.keys[kernel_rows])
        }
        print(
            f"{'stream':>6s} {'start':>7s} {'end':>7s} {'dur':>6s} | {'replay':>7s} "
            f"{'(min':>7s} {'max)':>7s} {'end':>7s} {'dur':>6s}  kernel"
        )
        for i, k, n in a.nodes:
            matrix = bool(graph.packing.matrix[i])
            if not args.all and not matrix and i not in first_of_stream:
                continue
            line = (
                f"{int(graph.keys[i]) % 1000:6d} {a.start[i] / 1000:7.1f} {a.end[i] / 1000:7.1f} "
                f"{(a.end[i] - a.start[i]) / 1000:6.1f} | "
            )
            if a.replays:
                s = np.array([r[k][n][0] for r in a.replays]) / 1000
                e = np.array([r[k][n][1] for r in a.replays]) / 1000
                line += (
                    f"{np.median(s):7.1f} {s.min():7.1f} {s.max():7.1f} {np.median(e):7.1f} "
                    f"{np.median(e - s):6.1f}"
                )
            else:
                line += " " * 38
            print(f"{line}  {'M' if matrix else ' '} {k[0][:70]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
