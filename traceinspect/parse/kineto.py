"""Reader for PyTorch-profiler (Kineto) Chrome-trace JSON, ``.json`` or ``.json.gz``.

Handles every generation seen in the wild:

* 2021: cats ``Kernel`` ``Runtime`` ``Memcpy`` ``Memset`` ``Operator``, flows cat ``async``;
* 2022: flows cat ``async_gpu`` / ``async_cpu_to_gpu``, lowercase ``external id``;
* current: ``kernel`` ``gpu_memcpy`` ``gpu_memset`` ``cuda_runtime`` ``cuda_driver``
  ``cpu_op`` ``user_annotation`` ``gpu_user_annotation`` ``cuda_sync``, flows ``ac2g``,
  relative ``ts`` plus top-level ``baseTimeNanoseconds``; ROCm traces with ``hip*`` names.

How it stays fast and small on gigabyte traces:

* the file is streamed (gunzipped block by block) and the ``traceEvents`` array decoded in
  chunks of about :data:`CHUNK_BYTES` (:mod:`traceinspect.parse._chunks`), so peak memory
  does not grow with the file; msgspec decodes only the fields used here;
* each chunk is turned into numpy columns right away, repeated strings are interned, and
  ``ts``/``dur`` arrive as ``int`` or, for fractional values, as their JSON text
  (``float_hook=str``) until a vectorized, exact decimal parse turns a chunk's times into
  integer ns at once. A 19-digit ``1712195495519695.8`` never passes through float64.

GPU activities join their launching API call by ``args.correlation``. Flow events
(``ph`` ``s``/``f``, ``id`` = correlation) are the fallback for exporters that wrote no
correlation args; as soon as one GPU activity or API call carries the arg, the trace is
joined by args alone and flows are skipped (they are a third of a typical trace's events).
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from traceinspect.errors import TraceFormatError
from traceinspect.model import DeviceInfo, Timeline, TraceMeta, collective_names, make_table
from traceinspect.parse._chunks import EventChunks, Source, TopLevel
from traceinspect.parse._nesting import nesting_depth
from traceinspect.parse.cuda_api import classify_host_call, classify_memcpy
from traceinspect.parse.kineto_collect import (
    _CATS_2021,
    _CATS_2022,
    _DRIVER,
    _GPU_KIND_NAMES,
    _MEMCPY,
    _META_VERSION_KEYS,
    _USER_ANNOTATION,
    COLLECTIVE_RANGE,
    PROFILER_STEP_PREFIX,
    _Collector,
    _Columns,
    _start_order,
)

#: JSON bytes decoded per step. Bounds the transient memory (decoded events of one chunk,
#: ~5x its text) while keeping per-chunk overhead negligible.
CHUNK_BYTES: Final = 4 * 1024 * 1024
#: Bytes asked of the (possibly gunzipping) file per read.
READ_BYTES: Final = 1024 * 1024


# --------------------------------------------------------------------------------------
# Assembly: shift to the epoch clock, join GPU activity to launches, build the tables.


def read_kineto(path: Path, *, workers: int | None = None) -> Timeline:
    """Read a PyTorch-profiler trace (``.json`` or ``.json.gz``) into a :class:`Timeline`.

    A large plain-JSON file is read by ``workers`` processes (default: one per core; see
    :func:`traceinspect.parse._parallel.worker_count`), with the same result as on one.
    Raises :class:`~traceinspect.errors.TraceFormatError` (one-line problem) for anything
    that is not a readable Kineto/Chrome trace.
    """
    path = Path(path)
    if workers is None or workers > 1:
        from traceinspect.parse import _parallel

        count = _parallel.worker_count(path, workers)
        collected = _parallel.read_parallel(path, count) if count > 1 else None
        if collected is not None:
            return _assemble(path, *collected)
    source = Source(path, READ_BYTES)
    collector = _Collector(path)
    chunks = EventChunks(source, CHUNK_BYTES)
    # Decoding allocates millions of short-lived objects, none in reference cycles: the
    # cyclic collector would only rescan them over and over.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for events in chunks:
            collector.add(events)
            del events  # not held while the next chunk decodes
    except RecursionError:
        raise TraceFormatError(path, "JSON nested too deeply") from None
    finally:
        source.close()
        if gc_was_enabled:
            gc.enable()
    collector.repaired_frames = chunks.repaired
    return _assemble(path, collector, chunks.meta)


def _base_time_ns(path: Path, meta: TopLevel) -> int:
    base = meta.baseTimeNanoseconds
    if base is None:
        return 0
    if isinstance(base, bool) or not isinstance(base, int):
        raise TraceFormatError(path, f"baseTimeNanoseconds is not an integer: {base!r:.40}")
    if not 0 <= base < 2**63:
        raise TraceFormatError(path, f"baseTimeNanoseconds out of range: {base}")
    return base


def _shift(path: Path, columns: _Columns, base_ns: int, names: tuple[str, ...]) -> None:
    """Add ``base_ns`` to the time columns in place, refusing int64 overflow."""
    if base_ns == 0:
        return
    limit = 2**63 - 1 - base_ns
    for name in names:
        pieces = columns.pieces.get(name)
        if not pieces:
            continue
        for piece in pieces:
            if piece.size and int(piece.max()) > limit:
                raise TraceFormatError(path, "times overflow int64 ns after baseTimeNanoseconds")
        columns.pieces[name] = [piece + base_ns for piece in pieces]


def _clip_to_recorded_end(
    annotations: dict[str, Any], recorded: tuple[int, int], profiler_span: bool
) -> str | None:
    """End the ranges that outlast everything the trace recorded at that last recorded
    point, in place, and say so (``None`` where none did). ``recorded``: the first start and
    the last end of the trace's events, the profiler's own span included where it wrote one
    (``profiler_span``).

    A range opened while the profiler recorded is written with its true end even where that
    came long after recording stopped (a ``ProfilerStep`` still open at the end of an
    on-demand trace reads 13 s in a 355 ms trace): nothing of it past the profiler's span
    was seen, so its wall time, and the whole trace's, would be time the trace knows nothing
    of. Without the span (older traces) the last step legitimately ends a little after the
    last event it holds, so only a range outlasting the trace by more than the trace's own
    length is cut."""
    first, last = recorded
    end = annotations["end_ns"]
    late = end > last + (0 if profiler_span else last - first)
    if not late.any():
        return None
    overhang = int((end[late] - last).max())
    annotations["end_ns"] = np.where(late, last, end)
    annotations["start_ns"] = np.minimum(annotations["start_ns"], annotations["end_ns"])
    count = int(late.sum())
    by = f"{overhang / 1e6:,.1f} ms" if overhang >= 1_000_000 else f"{overhang / 1e3:,.1f} µs"
    return (
        f"{count} range{'s' if count > 1 else ''} ended past the trace's recording (by up to "
        f"{by}): cut at its last recorded point"
    )


def _extent(columns: list[tuple[NDArray[np.int64], NDArray[np.int64]]]) -> tuple[int, int] | None:
    """The first start and the last end over (starts, ends) column pairs; ``None`` where all
    are empty."""
    present = [(starts, ends) for starts, ends in columns if ends.size]
    if not present:
        return None
    return min(int(s.min()) for s, _ in present), max(int(e.max()) for _, e in present)


def _lookup(keys: NDArray[np.int64], values: NDArray[np.int64]) -> NDArray[np.int64]:
    """Row position of each ``values`` element in ``keys`` (first occurrence; -1: absent or
    the value is -1)."""
    rows = np.full(len(values), -1, dtype=np.int64)
    if not len(keys) or not len(values):
        return rows
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    at = np.searchsorted(sorted_keys, values)
    at_clipped = np.minimum(at, len(keys) - 1)
    found = (at < len(keys)) & (sorted_keys[at_clipped] == values) & (values != -1)
    rows[found] = order[at_clipped[found]]
    return rows


def _flow_ids(
    flows: _Columns,
    start: bool,
    pid: NDArray[np.int64],
    tid: NDArray[np.int64],
    ts: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Correlation ids from flow events (``ph`` ``s`` on the launch call, ``f`` on the GPU
    activity) that sit at exactly the same pid, tid and ts; -1 where none does."""
    import pandas as pd

    is_start = flows.column("is_start").astype(bool)
    pick = is_start if start else ~is_start
    table = pd.DataFrame(
        {
            "pid": flows.column("pid")[pick],
            "tid": flows.column("tid")[pick],
            "ts": flows.column("ts")[pick],
            "id": flows.column("id")[pick],
        }
    ).drop_duplicates(["pid", "tid", "ts"])
    wanted = pd.DataFrame({"pid": pid, "tid": tid, "ts": ts})
    joined = wanted.merge(table, how="left", on=["pid", "tid", "ts"], sort=False)
    return joined["id"].fillna(-1).to_numpy(dtype=np.int64)


def _mode(values: NDArray[np.int64]) -> int:
    values = values[values >= 0]
    if not values.size:
        return -1
    uniques, counts = np.unique(values, return_counts=True)
    return int(uniques[np.argmax(counts)])


def _generation(cats: set[str]) -> str:
    if cats & _CATS_2022:
        return "kineto-2022"
    if cats & _CATS_2021:
        return "kineto-2021"
    return "kineto"


def _devices(value: Any) -> tuple[DeviceInfo, ...]:
    if not isinstance(value, list):
        return ()
    devices = []
    for position, props in enumerate(value):
        if not isinstance(props, dict):
            continue
        device_id = props.get("id", position)
        devices.append(
            DeviceInfo(
                id=device_id if isinstance(device_id, int) else position,
                name=str(props.get("name", "")),
                properties=props,
            )
        )
    return tuple(devices)


def _profiler_info(meta: TopLevel) -> dict[str, str]:
    info = {
        key: str(getattr(meta, key)) for key in _META_VERSION_KEYS if getattr(meta, key) is not None
    }
    dist = meta.distributedInfo
    if isinstance(dist, dict):
        for key in ("rank", "world_size", "backend"):
            if key in dist:
                info[f"distributed_{key}"] = str(dist[key])
    return info


def _assemble(path: Path, c: _Collector, meta: TopLevel) -> Timeline:
    base_ns = _base_time_ns(path, meta)
    times = ("start_ns", "end_ns")
    for table in (c.gpu, c.host, c.ranges, c.gpu_ranges, c.syncs, c.python, c.spans):
        _shift(path, table, base_ns, times)
    _shift(path, c.flows, base_ns, ("ts",))
    notes: list[str] = []
    names = c.names

    # host first: its row positions are what gpu.launch_row points at.
    host = c.host.take(_start_order(c.host.column("start_ns")))
    host_corr = host.get("correlation", np.zeros(0, dtype=np.int64))
    missing = host_corr == -1
    if missing.any() and c.flows.pieces:
        host_corr[missing] = _flow_ids(
            c.flows, True, host["pid"][missing], host["tid"][missing], host["start_ns"][missing]
        )
    host_pid = host.get("pid", np.zeros(0, dtype=np.int64))
    host_kind = np.zeros(0, dtype=object)
    if host:
        name_code = host.pop("name")
        host["name"] = names.per_value(lambda n: classify_host_call(n)[0])[name_code]
        host_kind = host["kind"] = names.per_value(lambda n: classify_host_call(n)[1])[name_code]
        by_name = names.per_value(lambda n: classify_host_call(n)[2] == "driver", bool)
        driver = by_name[name_code] | (host.pop("cat_code") == _DRIVER)
        host["api"] = np.where(driver, "driver", "runtime").astype(object)
    main_pid = _mode(host_pid)
    if main_pid == -1:
        main_pid = _mode(c.ranges.column("pid"))
    host_table = make_table("host", host)
    del host

    # gpu: correlation (from args, else from flows) -> the launching host row.
    gpu = c.gpu.take(_start_order(c.gpu.column("start_ns")))
    gpu_corr = gpu.get("correlation", np.zeros(0, dtype=np.int64))
    missing = gpu_corr == -1
    if missing.any() and c.flows.pieces:
        gpu_corr[missing] = _flow_ids(
            c.flows, False, gpu["raw_pid"][missing], gpu["raw_tid"][missing],
            gpu["start_ns"][missing],
        )  # fmt: skip
    del c.flows
    launch_row = _lookup(host_corr, gpu_corr)
    launched = launch_row >= 0
    if gpu:
        kind_code = gpu.pop("kind_code")
        name_code = gpu["name"]
        gpu["name"] = names.decode(name_code)
        gpu["kind"] = _GPU_KIND_NAMES[kind_code]
        copy_kind = names.per_value(lambda n: classify_memcpy(n)[0])
        host_memory = names.per_value(lambda n: classify_memcpy(n)[1])
        is_copy = kind_code == _MEMCPY
        gpu["copy_kind"] = np.where(is_copy, copy_kind[name_code], "").astype(object)
        gpu["host_memory"] = np.where(is_copy, host_memory[name_code], "").astype(object)
        gpu["grid"] = c.geometry.decode(gpu["grid"])
        gpu["block"] = c.geometry.decode(gpu["block"])
        del gpu["raw_pid"], gpu["raw_tid"]
        gpu["pid"] = np.full(len(gpu_corr), main_pid, dtype=np.int64)
        gpu["pid"][launched] = host_pid[launch_row[launched]]
        gpu["from_graph"] = gpu["graph_id"] > 0
        gpu["from_graph"][launched] |= host_kind[launch_row[launched]] == "graph_launch"
        gpu["launch_row"] = launch_row
    unlaunched = int((~launched).sum())
    if unlaunched:
        notes.append(f"{unlaunched} GPU activities without a launch record")
    gpu_table = make_table("gpu", gpu)
    del gpu
    gpu_table["collective"] = collective_names(gpu_table["name"].to_numpy())

    # cpu_op and user_annotation events: ProfilerStep#N and record_function ranges are
    # annotations, the rest operators.
    ranges = c.ranges.take(_start_order(c.ranges.column("start_ns")))
    annotations: dict[str, Any] = {}
    cpu_ops: dict[str, Any] = {}
    if ranges:
        is_step = names.per_value(lambda n: n.startswith(PROFILER_STEP_PREFIX), bool)
        step = is_step[ranges["name"]]
        is_annotation = step | (ranges.pop("cat_code") == _USER_ANNOTATION)
        ops = ~is_annotation
        every_op = bool(ops.all())
        for name in list(ranges):  # split column by column, releasing each as it goes
            column = ranges.pop(name)
            cpu_ops[name] = column if every_op else column[ops]
            if name in ("name", "pid", "tid", *times):
                annotations[name] = column[is_annotation]
            del column
        annotations["source"] = np.where(
            step[is_annotation], "profiler_step", "record_function"
        ).astype(object)
        # c10d's own ranges around a collective ("nccl:all_reduce") are communication.
        is_collective = names.per_value(lambda n: bool(COLLECTIVE_RANGE.match(n)), bool)
        annotations["source"][is_collective[annotations["name"]]] = "collective"
        cpu_ops["name"] = names.decode(cpu_ops["name"])
        cpu_ops["input_shapes"] = c.dims.decode(cpu_ops["input_shapes"])
        cpu_ops["depth"] = nesting_depth(
            cpu_ops["pid"], cpu_ops["tid"], cpu_ops["start_ns"], cpu_ops["end_ns"]
        )
        del ranges
    cpu_ops_table = make_table("cpu_ops", cpu_ops)
    del cpu_ops

    gpu_ranges = c.gpu_ranges.take()
    if gpu_ranges:
        count = len(gpu_ranges["start_ns"])
        gpu_ranges["pid"] = np.full(count, -1, dtype=np.int64)
        gpu_ranges["tid"] = np.full(count, -1, dtype=np.int64)
        gpu_ranges["source"] = np.full(count, "gpu_user_annotation", dtype=object)
    if annotations and gpu_ranges:
        host_count = len(annotations["start_ns"])
        annotations["device"] = np.full(host_count, -1, dtype=np.int64)
        annotations["stream"] = np.full(host_count, -1, dtype=np.int64)
        annotations = {k: np.concatenate([annotations[k], gpu_ranges[k]]) for k in annotations}
    elif gpu_ranges:
        annotations = gpu_ranges
    if annotations:
        tables = (gpu_table, host_table, cpu_ops_table)
        extent = _extent(
            [
                *((t["start_ns"].to_numpy(), t["end_ns"].to_numpy()) for t in tables if len(t)),
                *((t.column("start_ns"), t.column("end_ns")) for t in (c.syncs, c.python, c.spans)),
            ]
        )
        if extent is not None:
            note = _clip_to_recorded_end(annotations, extent, profiler_span=len(c.spans) > 0)
            if note:
                notes.append(note)
        annotations["name"] = names.decode(annotations["name"])
        order = _start_order(annotations["start_ns"])
        if order is not None:
            annotations = {k: v[order] for k, v in annotations.items()}
        # Host ranges nest per thread; GPU projections (pid -1) per device and stream.
        on_gpu = annotations["pid"] == -1
        device = annotations.get("device", np.full(len(on_gpu), -1, dtype=np.int64))
        stream = annotations.get("stream", np.full(len(on_gpu), -1, dtype=np.int64))
        annotations["depth"] = nesting_depth(
            np.where(on_gpu, -2 - device, annotations["pid"]),
            np.where(on_gpu, stream, annotations["tid"]),
            annotations["start_ns"],
            annotations["end_ns"],
        )
    annotations_table = make_table("annotations", annotations)
    del annotations

    sync_order = _start_order(c.syncs.column("start_ns"))
    syncs = c.syncs.take(sync_order)
    if syncs:
        kinds = np.array(c.sync_kinds, dtype=object)
        syncs["kind"] = kinds if sync_order is None else kinds[sync_order]
        # cuda_sync events sit on the GPU rows; the calling thread is the API call's.
        row = _lookup(host_corr, syncs["correlation"])
        found = row >= 0
        syncs["pid"] = np.full(len(row), -1, dtype=np.int64)
        syncs["tid"] = np.full(len(row), -1, dtype=np.int64)
        syncs["pid"][found] = host_pid[row[found]]
        syncs["tid"][found] = host_table["tid"].to_numpy()[row[found]]
    syncs_table = make_table("syncs", syncs)
    python = c.python.take(_start_order(c.python.column("start_ns")))
    if python:
        python["name"] = names.decode(python["name"])
    python_table = make_table("python", python)

    if c.negative_durations:
        notes.append(f"{c.negative_durations} events with a negative dur, read as 0")
    if c.repaired_frames:
        notes.append(
            f"{c.repaired_frames} Python frame names written unescaped by the profiler "
            "(pytorch/pytorch#113001) read as their raw text"
        )
    missing_ts = c.missing_ts + (0 if c.correlation_args_seen else c.missing_flow_ts)
    if missing_ts:
        notes.append(f"{missing_ts} events without ts skipped")
    if not len(gpu_table):
        notes.append("no GPU activity recorded (CPU-only trace)")
    trace_meta = TraceMeta(
        path=str(path),
        format="kineto",
        generation=_generation(c.cats_seen),
        devices=_devices(meta.deviceProperties),
        profiler=_profiler_info(meta),
        notes=tuple(notes),
    )
    return Timeline(
        meta=trace_meta,
        gpu=gpu_table,
        host=host_table,
        cpu_ops=cpu_ops_table,
        annotations=annotations_table,
        syncs=syncs_table,
        python=python_table,
    )
