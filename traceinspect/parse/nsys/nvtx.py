"""NVTX ranges of an nsys export: which are the user's regions, which are operators, which are
libraries' own.

Every push/pop and start/end range of ``NVTX_EVENTS`` lands in one of two tables:

- ``cpu_ops``: operator ranges written by ``torch.autograd.profiler.emit_nvtx``, as the
  PyTorch profiler files them. emit_nvtx decorates every range it writes
  (``aten::mm, seq = 4, op_id = 17, sizes = [[2, 3]]``): the decoration is dropped from the
  name and ``sizes`` becomes ``input_shapes``. An operator is a range named like one
  (``aten::…`` always; another lower-case namespace, ``c10d::allreduce_`` or
  ``torch::autograd::AccumulateGrad``, when decorated; ``autograd::engine::evaluate_function:
  …``), or a decorated bare name (``detach_``, ``MmBackward0``) opened inside an operator on
  the same thread — an operator's own inner call.
- ``annotations``, with a ``source``:

  - ``nvtx`` — everything else in the default or a user domain: user ranges,
    ``traceinspect.region``, FSDP's ``FSDP::pre_forward (layer)``, autograd Function names;
    ``profiler_step`` for ``ProfilerStep#N``;
  - ``collective`` — NCCL/RCCL's collective and point-to-point calls (``ncclAllReduce``):
    communication activity, not a region;
  - ``library`` — other ranges of libraries' own domains (NCCL's communicator set-up,
    cuDNN, cuBLAS, NVSHMEM, ...), never a region.

A domain is known by its create event (``eventType`` 75, its name in ``text`` or through
``textId``), per process; a create event without a thread names the id for every process.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from traceinspect.model import make_table
from traceinspect.parse._nesting import nesting_depth
from traceinspect.parse.nsys.schema import (
    INTERVAL_SQL,
    TABLE_NVTX,
    Schema,
    i64,
    pid_sql,
    query,
    tid_sql,
)

#: NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE; stable since nsys 2020).
NVTX_PUSH_POP: Final = 59
NVTX_START_END: Final = 60
NVTX_DOMAIN_CREATE: Final = 75

#: Domains that libraries create for their own ranges (compared in lower case). A name
#: starting with one of these (``NCCL``, ``cuBLASLt``) counts too.
LIBRARY_DOMAINS: Final = (
    "nccl",
    "rccl",
    "cudnn",
    "cublas",
    "cufft",
    "cusparse",
    "cusolver",
    "cutensor",
    "curand",
    "nvshmem",
    "tensorrt",
    "npp",
    "nvjpeg",
    "nvcomp",
    "dali",
    "ucx",
    "ucc",
    "libcudf",
    "cudf",
    "rmm",
    "cupti",
)
#: Communication libraries: their collective and point-to-point calls are communication.
COMMUNICATION_DOMAINS: Final = ("nccl", "rccl")
#: NCCL/RCCL call names that move data between ranks (``ncclAllReduce``, ``ncclSend``).
_COLLECTIVE_CALL = re.compile(
    r"(?:nccl|rccl)(?:AllReduce|Broadcast|Bcast|Reduce|AllGather|ReduceScatter|AlltoAll|"
    r"AllToAll|Gather|Scatter|Send|Recv|GroupEnd)\w*",
    re.IGNORECASE,
)
#: A range named like a library call although written in the default domain (old NCCL).
_LIBRARY_CALL = re.compile(r"(?:nccl|rccl)[A-Z]\w*")

_PROFILER_STEP = re.compile(r"ProfilerStep#\d+")
# torch.autograd.profiler.emit_nvtx: "name[, seq = N][, op_id = N][, sizes = [...]]
# [, input_op_ids = [...]]" (torch/csrc/profiler/util.cpp, getNvtxStr).
_EMIT_NVTX_TAIL = re.compile(
    r"(?:, seq = -?\d+)?(?:, op_id = \d+)?"
    r"(?:, sizes = (?P<sizes>\[.*?\]))?(?:, input_op_ids = \[.*\])?",
    re.DOTALL,
)
#: Operator names: lower-case namespaces, then the operator and an optional overload
#: (``aten::add.Tensor``, ``torch::autograd::AccumulateGrad``). ``FSDP::pre_forward (x)`` and
#: ``FSDP::root_pre_forward`` are not: upper-case namespace, or a space.
_OPERATOR_NAME = re.compile(r"(?:[a-z_][a-z0-9_]*::)+[A-Za-z_]\w*(?:\.\w+)?")
_ALWAYS_OPERATOR = re.compile(r"aten::\S+|autograd::engine::evaluate_function: .*", re.DOTALL)
_BARE_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass
class NvtxTables:
    """The NVTX part of a timeline, and what the reader noticed."""

    annotations: pd.DataFrame
    cpu_ops: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def read_nvtx(conn: sqlite3.Connection, schema: Schema, path: Path) -> NvtxTables:
    """The ``annotations`` and ``cpu_ops`` tables from ``NVTX_EVENTS`` (empty without it)."""
    table = TABLE_NVTX
    if not schema.has(table, "eventType"):
        if table in schema.columns:
            schema.require(path, table, "eventType")
        return NvtxTables(make_table("annotations", {}), make_table("cpu_ops", {}))
    schema.require(path, table, "start")
    texts = ["t.text"] if schema.has(table, "text") else []
    join = ""
    if schema.has(table, "textId"):
        join, value = schema.string("t.textId", "x")
        texts.append(value)
    text_sql = f"COALESCE({', '.join(texts)}, '')" if texts else "''"
    has_tid = schema.has(table, "globalTid")
    interval = INTERVAL_SQL if schema.has(table, "end") else INTERVAL_SQL.replace("t.end", "NULL")
    sql = (
        f"SELECT {interval}, t.eventType AS event_type, "
        f"{pid_sql('t.globalTid') if has_tid else '-1'} AS pid, "
        f"{tid_sql('t.globalTid') if has_tid else '-1'} AS tid, "
        f"{schema.int_col(table, 'domainId')} AS domain_id, {text_sql} AS text "
        f"FROM {table} t{join} WHERE t.eventType IN "
        f"({NVTX_PUSH_POP}, {NVTX_START_END}, {NVTX_DOMAIN_CREATE})"
    )
    frame = query(conn, sql)
    frame["event_type"] = i64(frame, "event_type")
    notes: list[str] = []
    created = frame[frame["event_type"] == NVTX_DOMAIN_CREATE]
    ranges = frame[frame["event_type"] != NVTX_DOMAIN_CREATE]
    unfinished = ranges["untimed"].astype(bool)
    if bool(unfinished.any()):
        notes.append(
            f"{int(unfinished.sum())} NVTX ranges still open when the capture ended were skipped"
        )
        ranges = ranges[~unfinished]
    pid, tid = i64(ranges, "pid"), i64(ranges, "tid")
    start, end = i64(ranges, "start_ns"), i64(ranges, "end_ns")
    domain = _domain_names(created, pid, i64(ranges, "domain_id"))
    # Parsed once per distinct message: user ranges repeat every step.
    codes, messages = pd.factorize(ranges["text"].astype(str).to_numpy())
    parsed = [_parse_nvtx_text(str(m)) for m in messages]
    names = np.array([p[0] for p in parsed] or [""], dtype=object)[codes]
    decorated = np.array([p[1] for p in parsed] or [False], dtype=bool)[codes]
    shapes = np.array([p[2] for p in parsed] or [""], dtype=object)[codes]
    kinds = _library_kinds(domain, names)
    mine = kinds == ""
    operator = mine & _operator_form(names, decorated)
    inner = mine & ~operator & decorated & _bare(names)
    if inner.any():
        operator |= inner & _inside(pid, tid, start, end, operator)
    ann = ~operator
    sources = np.where(kinds[ann] != "", kinds[ann], "nvtx").astype(object)
    steps = np.array([bool(_PROFILER_STEP.fullmatch(n)) for n in names[ann]], dtype=bool)
    sources[steps & (sources == "nvtx")] = "profiler_step"
    annotations = make_table(
        "annotations",
        {
            "name": names[ann],
            "source": sources,
            "pid": pid[ann],
            "tid": tid[ann],
            "start_ns": start[ann],
            "end_ns": end[ann],
            "depth": nesting_depth(pid[ann], tid[ann], start[ann], end[ann]),
            "domain": domain[ann],
        },
    )
    cpu_ops = make_table(
        "cpu_ops",
        {
            "name": names[operator],
            "pid": pid[operator],
            "tid": tid[operator],
            "start_ns": start[operator],
            "end_ns": end[operator],
            "depth": nesting_depth(pid[operator], tid[operator], start[operator], end[operator]),
            "input_shapes": shapes[operator],
        },
    )
    return NvtxTables(annotations, cpu_ops, notes)


def _domain_names(
    created: pd.DataFrame, pid: npt.NDArray[np.int64], domain_id: npt.NDArray[np.int64]
) -> npt.NDArray[np.object_]:
    """The domain name of each range (``""`` for the default domain or an unnamed one)."""
    domain = np.full(len(pid), "", dtype=object)
    domains = {
        (int(p), int(d)): str(t)
        for p, d, t in zip(
            i64(created, "pid"), i64(created, "domain_id"), created["text"], strict=True
        )
    }
    if not domains:
        return domain
    # Domain ids belong to a process; a create event without a thread names the id for
    # every process that does not create it itself.
    by_id = {d: name for (p, d), name in domains.items() if p < 0}
    domain[:] = pd.Series(domain_id).map(by_id).astype(object).fillna("").to_numpy()
    known = pd.MultiIndex.from_tuples(list(domains))
    found = known.get_indexer(pd.MultiIndex.from_arrays([pid, domain_id]))
    names_of = np.array(list(domains.values()), dtype=object)
    domain[found >= 0] = names_of[found[found >= 0]]
    return domain


def library_domain(domain: str) -> bool:
    """True for a domain a library creates for its own ranges (``NCCL``, ``cuDNN``)."""
    low = domain.strip().lower()
    return bool(low) and any(low.startswith(d) for d in LIBRARY_DOMAINS)


def _library_kinds(
    domain: npt.NDArray[np.object_], names: npt.NDArray[np.object_]
) -> npt.NDArray[np.str_]:
    """Per range: ``collective``, ``library``, or ``""`` (the user's or an operator)."""
    kinds = np.full(len(names), "", dtype=object)
    for d in pd.unique(domain):
        if not library_domain(str(d)):
            continue
        at = domain == d
        kinds[at] = "library"
        if str(d).strip().lower().startswith(COMMUNICATION_DOMAINS):
            collective = np.array([bool(_COLLECTIVE_CALL.fullmatch(n)) for n in names[at]])
            kinds[np.flatnonzero(at)[collective]] = "collective"
    default = (domain == "") & np.array(
        [bool(_LIBRARY_CALL.fullmatch(n)) for n in names], dtype=bool
    )
    if default.any():
        kinds[default] = "library"
        collective = np.array([bool(_COLLECTIVE_CALL.fullmatch(n)) for n in names[default]])
        kinds[np.flatnonzero(default)[collective]] = "collective"
    return kinds.astype(str)


def _operator_form(
    names: npt.NDArray[np.object_], decorated: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_]:
    unique, codes = np.unique(names.astype(str), return_inverse=True)
    always = np.array([bool(_ALWAYS_OPERATOR.fullmatch(n)) for n in unique] or [False])[codes]
    form = np.array([bool(_OPERATOR_NAME.fullmatch(n)) for n in unique] or [False])[codes]
    return always | (form & decorated)


def _bare(names: npt.NDArray[np.object_]) -> npt.NDArray[np.bool_]:
    unique, codes = np.unique(names.astype(str), return_inverse=True)
    return np.array([bool(_BARE_NAME.fullmatch(n)) for n in unique] or [False])[codes]


def _inside(
    pid: npt.NDArray[np.int64],
    tid: npt.NDArray[np.int64],
    start: npt.NDArray[np.int64],
    end: npt.NDArray[np.int64],
    outer: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Whether each range lies within an ``outer`` range of the same thread (not itself)."""
    result = np.zeros(len(pid), dtype=bool)
    thread = pid * (1 << 32) + tid
    for key in np.unique(thread[~outer]):
        mine = np.flatnonzero(thread == key)
        ops = mine[outer[mine]]
        if not len(ops):
            continue
        order = np.argsort(start[ops], kind="stable")
        op_start = start[ops][order]
        reach = np.maximum.accumulate(end[ops][order])
        others = mine[~outer[mine]]
        last = np.searchsorted(op_start, start[others], side="right") - 1
        ok = last >= 0
        result[others[ok]] = reach[last[ok]] >= end[others[ok]]
    return result


def _parse_nvtx_text(text: str) -> tuple[str, bool, str]:
    """(name, written by emit_nvtx, input shapes JSON text) of an NVTX message."""
    cut = text.find(", seq = ")
    if cut < 0:
        cut = text.find(", op_id = ")
        if cut < 0:
            return text, False, ""
    match = _EMIT_NVTX_TAIL.fullmatch(text, cut)
    if match is None:
        return text, False, ""
    return text[:cut], True, match["sizes"] or ""
