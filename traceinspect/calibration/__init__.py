"""Calibration profiles: what launches, graph replays and syncs cost on one GPU model.

A profile is a JSON file written by ``traceinspect calibrate`` (which runs
:func:`traceinspect.collect.calibrate.measure` on the GPU). Built-in profiles live beside
this module as ``<device-slug>.json`` (``nvidia-h200.json`` for "NVIDIA H200",
``nvidia-h100-80gb-hbm3.json`` for "NVIDIA H100 80GB HBM3").

Profile fields (``schema_version`` 1; times in integer or fractional nanoseconds), as
:func:`traceinspect.collect.calibrate.measure` writes them:

=================================  =========================================================
``device_name``                    ``torch.cuda.get_device_name()`` of the measured GPU
``torch`` ``cuda`` ``driver``      software versions it was measured with
``measured_at``                    ISO-8601 time of the measurement
``eager_launch_host_ns``           host time of one tiny eager op launch, unprofiled
``eager_launch_host_ns_profiled``  the same under the PyTorch profiler (optional: 2× the
                                   unprofiled cost when absent, the H200 ratio)
``graph_launch_host_ns``           host time of one ``CUDAGraph.replay()`` of a 1-node graph;
                                   a number, or a mapping ``{"<nodes>": ns}``
``graph_launch_host_table``        rows ``{nodes, host_ns}``: replay() host time by graph
                                   size (optional; preferred over the single number)
``graph_launch_latency_ns``        wall of replay() + synchronize of a 1-node graph of a tiny
                                   kernel, minus that kernel's duration: the fixed cost of
                                   one synchronized replay plus one node's overhead
``graph_node_overhead_ns``         per-node cost inside a replayed graph of tiny kernels
``node_overhead_table``            rows ``{nodes, kernel_ns, graph_gpu_ns, graph_wall_ns,
                                   per_node_ns}``: a chain of ``nodes`` kernels of
                                   ``kernel_ns`` each, replayed; ``per_node_ns`` is what each
                                   node costs beyond its kernel (optional)
``sync_ns``                        ``torch.cuda.synchronize()`` on an idle device
``copy_table``                     rows ``{bytes, host_ns, device_ns}`` of eager
                                   device-to-device ``copy_`` calls (optional)
``copy_fixed_ns``,                 fixed device cost and bandwidth of a device-to-device
``copy_bandwidth_bytes_per_us``    copy (optional)
``copy_launch_host_ns``,           host / device time of a small input copy (optional;
``copy_gpu_ns``                    else the smallest ``copy_table`` row, else defaults)
``spread_frac``                    relative run-to-run spread of the overheads (optional)
``copy_warm_host_ns``              host time of a small copy issued right after another
                                   CUDA call (optional; else ``eager_launch_host_ns``)
``cold_call_ns``                   extra host time of the first CUDA call after a
                                   ``torch.cuda.synchronize()`` over the same call made warm
                                   (optional; :data:`DEFAULT_COLD_CALL_NS`)
``graph_node_extra_ns``            per-node replay cost beyond ``node_overhead_table`` seen in
                                   real graphs (optional; :data:`DEFAULT_GRAPH_NODE_EXTRA_NS`)
``graph_copy_transition_ns``       per-node replay cost of a kernel that follows a memset node
                                   (or a copy node other than device-to-device) on its stream
                                   (optional; :data:`DEFAULT_GRAPH_COPY_TRANSITION_NS`)
``profiler_op_ns``                 host time torch.profiler adds per recorded CPU operator
                                   (optional; :data:`DEFAULT_PROFILER_COST`)
``profiler_op_shapes_ns``          what ``record_shapes=True`` adds on top, per operator
``profiler_call_ns``               host time it adds per CUDA runtime/driver call
``profiler_floor_frac``            a host stretch keeps at least this share of its
                                   profiled time (less the Python calls' cost) when the
                                   costs are removed
``profiler_python_ns``             host time it adds per recorded Python function call
                                   (``with_stack=True``)
``profiler_bare_*_ns``             what ``traceinspect calibrate`` measured the profiler to
                                   add to a bare operator, CUDA call, shapes record and
                                   Python frame: kept in :attr:`Calibration.extra`, not read
                                   by the eager model, whose ``profiler_*`` costs are fitted
                                   on real steps (:data:`DEFAULT_PROFILER_COST`)
=================================  =========================================================

Unknown extra fields are kept in :attr:`Calibration.extra` (numbers only) and ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from traceinspect.errors import TraceFormatError, TraceinspectError
from traceinspect.model import Timeline

SCHEMA_VERSION: Final = 1

#: Folder holding the built-in profiles (``<slug>.json``).
BUILTIN_DIR: Final = Path(__file__).resolve().parent

#: Profile used for a device no built-in profile matches; analyses say so when they use it.
GENERIC_FALLBACK: Final = "nvidia-h200"

#: Profiler inflation of host launch cost when a profile does not state it: the profiled
#: eager launch on the H200 costs about twice the unprofiled one.
DEFAULT_PROFILER_LAUNCH_INFLATION: Final = 2.0

#: Relative spread of the calibrated overheads when a profile does not state one: run-to-run
#: variation across calibrate runs on the H200 (eager launch 6.1 vs 6.8 µs, fixed replay cost
#: 12.2 vs 12.9 µs, per-node 0.45 vs 0.43 µs).
DEFAULT_SPREAD_FRAC: Final = 0.10

#: Host time of one eager ``Tensor.copy_`` when a profile does not state it, ns: about one
#: eager op launch plus dispatch on current PyTorch.
DEFAULT_COPY_LAUNCH_HOST_NS: Final = 6_000

#: GPU time of a small device-to-device copy when a profile does not state it, ns.
DEFAULT_COPY_GPU_NS: Final = 2_000

#: Extra host time of the first CUDA call after a synchronize, ns, when a profile does not
#: state it: in the 8 H200 sample eager traces (``sample_traces/``, synchronized steps) the
#: first launch call of a step takes 1.1 to 19.4 µs longer than the trace's median launch
#: call; 4.55 µs is the median over the 8 (taken as is: the profiler's per-call cost is
#: paid by both calls and cancels in the difference).
DEFAULT_COLD_CALL_NS: Final = 4_550


@dataclass(frozen=True)
class ProfilerCost:
    """What torch.profiler adds to host time, per recorded event (ns): the eager model
    (:mod:`traceinspect.analysis.estimate.eager`) removes it from a profiled trace."""

    #: Per recorded CPU operator (enter + exit callbacks, the event's record).
    op_ns: float
    #: Added per operator when input shapes are recorded (``record_shapes=True``).
    op_shapes_ns: float
    #: Per CUDA runtime or driver call (CUPTI's callback and its activity record).
    call_ns: float
    #: A host stretch never shrinks below this share of its profiled length (once the
    #: Python calls' cost, :attr:`python_ns`, is taken off).
    floor_frac: float
    #: Per recorded Python function call (``with_stack=True``: the profiler's Python tracer).
    python_ns: float = 0.0


#: The profiler's costs when a profile does not state them. A host stretch keeps 45 % of
#: its profiled time once 24 µs per recorded operator and 1 µs per CUDA runtime or driver
#: call would take more: on real steps the floor decides almost every stretch, and the
#: per-operator cost only bounds what a long stretch with few operators (the host's own
#: work: Python logic, a CPU operator, data loading) can lose. The profiler's cost grows with
#: the work inside an operator (nested operators, dispatch, allocator and CUDA calls): the
#: bare ``x.view(-1)`` that ``traceinspect calibrate`` times shows 0.8-3 µs on eight H200
#: leases, a fraction of what real steps lose. Fitted against each workload's unprofiled
#: eager p50 (``bench/validation_table.py --fit``) on the 553 H200 recordings timed in a
#: fresh process through ``holdout42``: eager median |error| 13.2 % (15.8 % with the 30 µs,
#: no per-call cost and 40 % floor fitted on the first 108 of them; mean |log error| 0.188
#: against 0.194). Cross-validated in two halves (``--cv``), both halves chose 1 µs per call
#: and the 45 % floor, with 24 or 30 µs per operator: 13.1 % out of fold. On the 43 H100
#: recordings, never fitted on, 9.6 % (11.2 %); on the 37 first-wave recordings, timed in
#: the profiled process before any of its traces, 6.9 % (5.7 %). The leases' profilers
#: differ: per set, the share of its profiled time that would make each step exact has a
#: median of 0.20 to 0.50, and no duration in the trace (launch calls, ``aten::empty``)
#: predicts it (|r| <= 0.46). No cost is taken for recorded shapes: the fit puts none there.
#: ``python_ns`` (with_stack) is fitted with these costs on the six H200 scripts recorded
#: with stacks (``bench/python_frame_cost.py``: 1,050 ns against their measured eager steps,
#: mean |log error| 0.057; the traced host time per step grows by a median 450 ns per
#: recorded Python call).
DEFAULT_PROFILER_COST: Final = ProfilerCost(
    op_ns=24_000.0, op_shapes_ns=0.0, call_ns=1_000.0, floor_frac=0.45, python_ns=1_050.0
)

#: Per-node replay cost of real graphs beyond what the calibration's chains of one repeated
#: kernel show, ns, when a profile does not state it. Fitted with
#: :data:`DEFAULT_GRAPH_COPY_TRANSITION_NS` on the 64 H200 replays timed in a fresh process
#: (``bench/validation_table.py --sets`` streams_fit, holdout2_fresh, holdout3_fresh,
#: holdout4, holdout5, holdout5_rerun, holdout6, holdout6_rerun) against the built-in
#: calibration, whose replays were measured before any profiler session: 100 ns (58 of 64
#: within ±10 %, median |error| 4.5 %; 200 ns, fitted on 14 of them before: 54, 5.3 %).
#: Nodes of different kernels cost more than a chain of one repeated kernel, which the
#: calibration measures.
DEFAULT_GRAPH_NODE_EXTRA_NS: Final = 100

#: Per-node replay cost of a kernel whose stream predecessor in the graph is a memset node,
#: or a copy node other than device-to-device, ns, when a profile does not state it (it
#: replaces the kernel's own per-node cost where larger). In the profiled replays of those 64
#: workloads the gap before a kernel is 0.38 µs (median of 29,959) after a kernel and 4.0 µs
#: after a memset (275); fitted on their unprofiled walls with the node extra: 2 µs. A
#: device-to-device copy node hands over like a kernel: in the profiled replays of the 132
#: fresh-process recordings the kernel after one starts a median 0.26-0.42 µs later in 10 of
#: the 12 workloads that have them (the other two wait on another stream), and charging it
#: too read a Kalman filter's 64 copy nodes +12 % (the 4.6 µs once measured "after a copy"
#: was the eager input copy before each replay's first node).
DEFAULT_GRAPH_COPY_TRANSITION_NS: Final = 2_000

_REQUIRED: Final = (
    "device_name",
    "eager_launch_host_ns",
    "graph_launch_host_ns",
    "graph_launch_latency_ns",
    "graph_node_overhead_ns",
    "sync_ns",
)
_KNOWN: Final = frozenset(
    {
        "schema_version",
        "torch",
        "cuda",
        "driver",
        "measured_at",
        "eager_launch_host_ns_profiled",
        "node_overhead_table",
        "copy_launch_host_ns",
        "copy_gpu_ns",
        "copy_warm_host_ns",
        "copy_table",
        "copy_fixed_ns",
        "copy_bandwidth_bytes_per_us",
        "graph_launch_host_table",
        "spread_frac",
        "cold_call_ns",
        "graph_node_extra_ns",
        "graph_copy_transition_ns",
        "profiler_op_ns",
        "profiler_op_shapes_ns",
        "profiler_call_ns",
        "profiler_floor_frac",
        "profiler_python_ns",
        *_REQUIRED,
    }
)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class NodeOverheadPoint:
    """One measured chain: ``nodes`` kernels of ``kernel_ns`` each, captured and replayed."""

    nodes: int
    kernel_ns: int
    graph_gpu_ns: int
    graph_wall_ns: int
    per_node_ns: int


@dataclass(frozen=True)
class Calibration:
    """Overheads of one GPU model + software stack, in integer nanoseconds."""

    name: str
    device_name: str
    #: File it was read from, or ``"built-in"``.
    source: str
    eager_launch_host_ns: int
    eager_launch_host_ns_profiled: int
    #: ``(nodes, ns)`` points, sorted by nodes; one point means "the same for every size".
    graph_launch_host_ns: tuple[tuple[int, int], ...]
    graph_launch_latency_ns: int
    graph_node_overhead_ns: int
    sync_ns: int
    node_overhead_table: tuple[NodeOverheadPoint, ...] = ()
    copy_launch_host_ns: int = DEFAULT_COPY_LAUNCH_HOST_NS
    copy_gpu_ns: int = DEFAULT_COPY_GPU_NS
    #: Device-to-device copy bandwidth, bytes per ns (0: unknown).
    copy_bytes_per_ns: float = 0.0
    spread_frac: float = DEFAULT_SPREAD_FRAC
    #: Extra host time of the first CUDA call after a synchronize (a cold start); the
    #: calibrated copy and replay costs were each measured as such a first call. 0 unless
    #: given; a profile file that does not state it gets :data:`DEFAULT_COLD_CALL_NS`.
    cold_call_ns: int = 0
    profiler_cost: ProfilerCost = DEFAULT_PROFILER_COST
    #: Added to every kernel node's replay overhead (:meth:`node_overhead_for`).
    graph_node_extra_ns: int = 0
    #: Replay overhead of a kernel after a memset node (or a copy node other than
    #: device-to-device) on its stream (0: none).
    graph_copy_transition_ns: int = 0
    versions: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, float] = field(default_factory=dict)
    #: Non-empty when this profile stands in for a device it was not measured on.
    fallback_note: str = ""
    #: Host time of a small copy issued right after another CUDA call (0: unknown, then
    #: :attr:`eager_launch_host_ns`).
    copy_warm_host_ns: int = 0
    #: Whether the copy host costs were measured on the machine that timed the run
    #: (:meth:`with_host_costs`) rather than taken from the calibration's machine: the
    #: replay range then needs no room for another host's copies.
    copy_host_measured: bool = False

    def with_host_costs(self, first_ns: int, warm_ns: int) -> Calibration:
        """This profile with the copy host costs measured on the machine that timed the run
        (``traceinspect profile``'s probe, :mod:`traceinspect.collect.host_probe`): the cold
        first copy after a synchronize and a warm one."""
        return replace(
            self,
            copy_launch_host_ns=int(first_ns),
            copy_warm_host_ns=int(warm_ns),
            copy_host_measured=True,
            source=f"{self.source}; input copies {warm_ns / 1000:.1f} µs measured here",
        )

    def with_copy_pace(self, warm_ns: float) -> Calibration:
        """This profile with its input copies' host costs (the first after a synchronize and
        the warm one alike) scaled down so that a warm copy takes ``warm_ns``, where that is
        below the calibrated cost: the host that ran the trace issues calls faster than the
        calibration's machines (:func:`traceinspect.analysis.estimate.eager.paced_copy_ns`).
        Unchanged where the copy costs were measured in the timing process or ``warm_ns``
        is not below them."""
        current = self.warm_copy_host_ns
        if self.copy_host_measured or current <= 0 or not 0 < warm_ns < current:
            return self
        factor = warm_ns / current
        return replace(
            self,
            copy_launch_host_ns=int(round(self.copy_launch_host_ns * factor)),
            copy_warm_host_ns=int(round(current * factor)),
        )

    @property
    def warm_copy_host_ns(self) -> int:
        """Host time of a copy that is not the first call after a synchronize: a ``copy_``
        from Python costs about what any operator launch from Python does (H200: 5.6 µs
        per copy in a loop of 80, against a 6.4 µs tiny-kernel launch on the same machine;
        ``sample_traces/validation/replay_parts.json``). Taking the cold copy less the cold
        start instead charged 1.3 µs, and a graph fed 80 inputs came out 29 % short. The
        built-in H200 profile's 9.2 µs (and 9.9 µs cold, ``copy_launch_host_ns``) are not
        that machine's but the medians of 64 probes of ``traceinspect profile`` on two
        others (:mod:`traceinspect.collect.host_probe`), which ranged 6.2-10.7 µs."""
        if self.copy_warm_host_ns > 0:
            return self.copy_warm_host_ns
        return self.eager_launch_host_ns

    @property
    def is_fallback(self) -> bool:
        return bool(self.fallback_note)

    def describe(self) -> str:
        """One line naming the profile, e.g. ``nvidia-h200 (built-in, NVIDIA H200)``."""
        text = f"{self.name} ({self.source}, {self.device_name})"
        return f"{text}; {self.fallback_note}" if self.fallback_note else text

    @cached_property
    def replay_fixed_ns(self) -> int:
        """Fixed cost of one synchronized replay: replay() call to the first node, plus the
        GPU finishing to synchronize() returning (``graph_launch_latency_ns`` less the one
        node's overhead it includes)."""
        xs, _ = _overhead_curve(self.node_overhead_table)
        tiny = float(np.exp(xs[0])) if len(xs) else 0.0
        one_node = (
            float(self.node_overhead_for([tiny])[0]) - self.graph_node_extra_ns
            if len(xs)
            else float(self.graph_node_overhead_ns)
        )
        return max(0, int(round(self.graph_launch_latency_ns - one_node)))

    @cached_property
    def replay_latency_ns(self) -> int:
        """replay() call start to the first node on the GPU: the fixed cost less the
        completion notice (``sync_ns``)."""
        return max(0, self.replay_fixed_ns - self.sync_ns)

    def copy_device_ns(self, nbytes: int) -> int:
        """Device time of a device-to-device copy of ``nbytes`` (the small-copy time when the
        bandwidth is unknown or the copy is small)."""
        if self.copy_bytes_per_ns <= 0 or nbytes <= 0:
            return self.copy_gpu_ns
        return max(self.copy_gpu_ns, int(round(nbytes / self.copy_bytes_per_ns)))

    def graph_launch_host_for(self, nodes: int) -> int:
        """Host time of one replay() of a graph with ``nodes`` nodes (linear interpolation,
        flat beyond the measured sizes)."""
        xs = np.array([p[0] for p in self.graph_launch_host_ns], np.float64)
        ys = np.array([p[1] for p in self.graph_launch_host_ns], np.float64)
        return int(round(float(np.interp(float(nodes), xs, ys))))

    def node_overhead_for(self, kernel_ns: npt.ArrayLike) -> FloatArray:
        """Per-node replay overhead for kernels of the given durations, ns.

        Interpolated in log(kernel duration) over ``node_overhead_table`` (the rows with the
        most nodes for each kernel size, where the per-node figure has converged); flat
        beyond the measured sizes. Without a table every node pays
        ``graph_node_overhead_ns``. Every node adds ``graph_node_extra_ns``.
        """
        durations = np.asarray(kernel_ns, np.float64)
        xs, ys = _overhead_curve(self.node_overhead_table)
        extra = float(self.graph_node_extra_ns)
        if len(xs) == 0:
            return np.full(durations.shape, float(self.graph_node_overhead_ns) + extra)
        return np.interp(np.log(np.maximum(durations, 1.0)), xs, ys) + extra

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "device_name": self.device_name,
            "source": self.source,
            "fallback": self.is_fallback,
            "note": self.fallback_note,
        }


@cache
def _overhead_curve(
    table: tuple[NodeOverheadPoint, ...],
) -> tuple[FloatArray, FloatArray]:
    best: dict[int, NodeOverheadPoint] = {}
    for point in table:
        if point.kernel_ns <= 0:
            continue
        kept = best.get(point.kernel_ns)
        if kept is None or point.nodes > kept.nodes:
            best[point.kernel_ns] = point
    sizes = sorted(best)
    xs = np.array([math.log(s) for s in sizes], np.float64)
    ys = np.array([max(0.0, float(best[s].per_node_ns)) for s in sizes], np.float64)
    return xs, ys


def slug(device_name: str) -> str:
    """File-name form of a device name: ``"NVIDIA H200"`` → ``"nvidia-h200"``."""
    return re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")


def _read_text(path: Path) -> str:
    """The file's text; a FIFO or stdin is read once, with a bound on the wait for data."""
    from traceinspect.files import is_stream, local_copy

    if is_stream(path):
        with local_copy(path) as copy:
            return copy.read_text(encoding="utf-8")
    return path.read_text(encoding="utf-8")


def load_calibration(path: str | Path, *, source: str | None = None) -> Calibration:
    """Read a profile; a missing, malformed or incomplete file raises one-line
    :class:`TraceFormatError` naming the path and the problem."""
    path = Path(path)
    try:
        text = _read_text(path)
    except FileNotFoundError:
        raise TraceFormatError(path, "no such calibration file") from None
    except IsADirectoryError:
        raise TraceFormatError(path, "is a directory, not a calibration file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceFormatError(path, f"cannot read calibration ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceFormatError(path, f"not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise TraceFormatError(path, "calibration must be a JSON object")
    try:
        return parse_calibration(data, name=path.stem, source=source or str(path))
    except ValueError as exc:
        raise TraceFormatError(path, f"bad calibration: {exc}") from None


def parse_calibration(data: Mapping[str, Any], *, name: str, source: str) -> Calibration:
    """Build a :class:`Calibration` from a decoded profile; ``ValueError`` names the field."""
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {version!r}, this traceinspect reads {SCHEMA_VERSION}")
    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    device_name = data["device_name"]
    if not isinstance(device_name, str) or not device_name:
        raise ValueError("device_name must be a non-empty string")
    eager = _ns(data, "eager_launch_host_ns")
    profiled = (
        _ns(data, "eager_launch_host_ns_profiled")
        if data.get("eager_launch_host_ns_profiled") is not None
        else int(round(eager * DEFAULT_PROFILER_LAUNCH_INFLATION))
    )
    spread = data.get("spread_frac", DEFAULT_SPREAD_FRAC)
    if not _is_number(spread) or not 0 <= float(spread) < 1:
        raise ValueError("spread_frac must be a number in [0, 1)")
    versions = {k: str(data[k]) for k in ("torch", "cuda", "driver", "measured_at") if k in data}
    extra = {k: float(v) for k, v in data.items() if k not in _KNOWN and _is_number(v)}
    copies = _copy_rows(data.get("copy_table") or [])
    smallest = min(copies, default=None)
    launch_table = data.get("graph_launch_host_table")
    launch_points = (
        _launch_points({str(_ns(r, "nodes")): _ns(r, "host_ns") for r in launch_table})
        if isinstance(launch_table, list)
        and launch_table
        and all(isinstance(r, Mapping) for r in launch_table)
        else _launch_points(data["graph_launch_host_ns"])
    )
    bandwidth: Any = data.get("copy_bandwidth_bytes_per_us")
    return Calibration(
        name=name,
        device_name=device_name,
        source=source,
        eager_launch_host_ns=eager,
        eager_launch_host_ns_profiled=profiled,
        graph_launch_host_ns=launch_points,
        graph_launch_latency_ns=_ns(data, "graph_launch_latency_ns"),
        # Measured as (GPU time - kernels) / nodes, so it can come out slightly negative.
        graph_node_overhead_ns=max(0, _signed_ns(data, "graph_node_overhead_ns")),
        sync_ns=_ns(data, "sync_ns"),
        node_overhead_table=_table(data.get("node_overhead_table") or []),
        copy_launch_host_ns=_ns(
            data,
            "copy_launch_host_ns",
            smallest[1] if smallest else DEFAULT_COPY_LAUNCH_HOST_NS,
        ),
        copy_gpu_ns=_ns(data, "copy_gpu_ns", smallest[2] if smallest else DEFAULT_COPY_GPU_NS),
        copy_warm_host_ns=_ns(data, "copy_warm_host_ns", 0),
        copy_bytes_per_ns=(
            float(bandwidth) / 1000.0 if _is_number(bandwidth) and bandwidth > 0 else 0.0
        ),
        spread_frac=float(spread),
        cold_call_ns=_ns(data, "cold_call_ns", DEFAULT_COLD_CALL_NS),
        profiler_cost=_profiler_cost(data),
        graph_node_extra_ns=_ns(data, "graph_node_extra_ns", DEFAULT_GRAPH_NODE_EXTRA_NS),
        graph_copy_transition_ns=_ns(
            data, "graph_copy_transition_ns", DEFAULT_GRAPH_COPY_TRANSITION_NS
        ),
        versions=versions,
        extra=extra,
    )


def _profiler_cost(data: Mapping[str, Any]) -> ProfilerCost:
    default = DEFAULT_PROFILER_COST
    floor = data.get("profiler_floor_frac", default.floor_frac)
    if not _is_number(floor) or not 0 <= float(floor) <= 1:
        raise ValueError("profiler_floor_frac must be a number in [0, 1]")
    return ProfilerCost(
        op_ns=float(_ns(data, "profiler_op_ns", int(default.op_ns))),
        op_shapes_ns=float(_ns(data, "profiler_op_shapes_ns", int(default.op_shapes_ns))),
        call_ns=float(_ns(data, "profiler_call_ns", int(default.call_ns))),
        floor_frac=float(floor),
        python_ns=float(_ns(data, "profiler_python_ns", int(default.python_ns))),
    )


def builtin_calibrations() -> dict[str, Calibration]:
    """The profiles shipped with traceinspect, by name (file stem)."""
    return {path.stem: _builtin(path) for path in sorted(BUILTIN_DIR.glob("*.json"))}


@cache
def _builtin(path: Path) -> Calibration:
    return load_calibration(path, source="built-in")


def calibration_for(timeline: Timeline, path: Path | None = None) -> Calibration:
    """The profile an analysis of ``timeline`` should use.

    An explicit ``path`` wins. Otherwise the built-in profile whose device name matches
    the trace's first named GPU (``"NVIDIA H200"`` → ``nvidia-h200.json``). Otherwise a
    built-in profile of the same GPU model (``"NVIDIA H100 PCIe"`` → the H100 SXM's
    ``nvidia-h100-80gb-hbm3.json``), marked with a note naming the device it was measured on.
    Otherwise the built-in :data:`GENERIC_FALLBACK` profile, marked with a note saying it was
    measured on another device (or that the trace names none).
    """
    if path is not None:
        return load_calibration(path)
    profiles = builtin_calibrations()
    names = [d.name for d in timeline.meta.devices if d.name]
    for device_name in names:
        wanted = slug(device_name)
        for profile in profiles.values():
            if slug(profile.device_name) == wanted or profile.name == wanted:
                return profile
    for device_name in names:
        family = _family(device_name)
        for profile in profiles.values():
            if family and _family(profile.device_name) == family:
                return replace(
                    profile,
                    fallback_note=f"trace device {device_name!r} has no profile: "
                    f"using the one measured on {profile.device_name} (same family)",
                )
    fallback = profiles.get(GENERIC_FALLBACK)
    if fallback is None:
        raise TraceinspectError(
            f"no built-in calibration profile found in {BUILTIN_DIR} "
            "(pass --calibration FILE from `traceinspect calibrate`)"
        )
    why = f"trace device {names[0]!r} has no profile" if names else "trace names no GPU"
    return replace(
        fallback, fallback_note=f"{why}: generic fallback measured on {fallback.device_name}"
    )


def _family(device_name: str) -> str:
    """The GPU model a device name belongs to, whatever its memory or form factor: its first
    word with a digit (``"NVIDIA H100 80GB HBM3"`` and ``"NVIDIA H100 PCIe"`` → ``"h100"``,
    ``"NVIDIA GeForce RTX 4090"`` → ``"4090"``); ``""`` when no word has one."""
    return next((w for w in slug(device_name).split("-") if any(c.isdigit() for c in w)), "")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _ns(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value: Any = data.get(key)
    if value is None and default is not None:
        return default
    if not _is_number(value) or value < 0:
        raise ValueError(f"{key} must be a non-negative number of ns, got {value!r}")
    return int(round(float(value)))


def _signed_ns(data: Mapping[str, Any], key: str) -> int:
    value: Any = data.get(key)
    if not _is_number(value):
        raise ValueError(f"{key} must be a number of ns, got {value!r}")
    return int(round(float(value)))


def _copy_rows(rows: Any) -> list[tuple[int, int, int]]:
    """``copy_table`` as (bytes, host_ns, device_ns) tuples."""
    if not isinstance(rows, list):
        raise ValueError("copy_table must be a list")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"copy_table[{i}] must be an object")
        out.append((_ns(row, "bytes"), _ns(row, "host_ns"), _ns(row, "device_ns")))
    return out


def _launch_points(value: Any) -> tuple[tuple[int, int], ...]:
    if _is_number(value):
        if value < 0:
            raise ValueError("graph_launch_host_ns must be non-negative")
        return ((1, int(round(value))),)
    if isinstance(value, Mapping) and value:
        points = []
        for nodes, ns in value.items():
            try:
                count = int(nodes)
            except ValueError:
                raise ValueError(
                    f"graph_launch_host_ns key {nodes!r} is not a node count"
                ) from None
            if not _is_number(ns) or ns < 0:
                raise ValueError(f"graph_launch_host_ns[{nodes!r}] must be a number of ns")
            points.append((count, int(round(ns))))
        return tuple(sorted(points))
    raise ValueError("graph_launch_host_ns must be a number or a {nodes: ns} mapping")


def _table(rows: Any) -> tuple[NodeOverheadPoint, ...]:
    if not isinstance(rows, list):
        raise ValueError("node_overhead_table must be a list")
    points = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"node_overhead_table[{i}] must be an object")
        try:
            points.append(
                NodeOverheadPoint(
                    nodes=_ns(row, "nodes"),
                    kernel_ns=_ns(row, "kernel_ns"),
                    graph_gpu_ns=_ns(row, "graph_gpu_ns", 0),
                    graph_wall_ns=_ns(row, "graph_wall_ns", 0),
                    per_node_ns=int(round(float(row["per_node_ns"]))),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"node_overhead_table[{i}]: {exc}") from None
    return tuple(points)
