"""Build a large Kineto trace by repeating a small real one, for the speed/memory benchmark.

    python bench/make_big_trace.py SRC.json.gz --size 200MB -o big.json
    python bench/make_big_trace.py SRC.json.gz --copies 3 -o three.json.gz

Each copy of the source's event list is shifted in time by the source's span plus a gap,
and every id that links events is offset so links stay consistent and unique across
copies: CUPTI correlation ids, external ids, record-function and Python ids, flow ids
(``ph`` s/t/f), and ``ProfilerStep#N`` numbers. Metadata events (``ph: "M"``) and the
top-level keys (``deviceProperties``, ``distributedInfo``, ``baseTimeNanoseconds`` ...) are
written once. Numbers keep the source's exact text (fractional ``ts`` go through
``Decimal``, never float64), so nanoseconds survive.

``--size`` counts the JSON text (before gzip); whole copies are written and then a
time-prefix of one more copy until the size is reached. The output is written as it is
built, one event per line in compact JSON, so memory stays at a few copies of the source;
a ``.gz`` output is compressed on the fly.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import re
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, Final, TypeGuard

import msgspec

#: ``args`` keys holding ids that link events of one trace; offset per copy.
LINK_ID_ARGS: Final = (
    "correlation",
    "External id",
    "external id",  # 2021-2022 traces
    "Record function id",
    "Python id",
    "Python parent id",
    "Ev Idx",
    "wait_on_cuda_event_record_corr_id",  # names the correlation of a cudaEventRecord
)
#: Phases of flow events, whose top-level ``id`` pairs a start with its finish.
FLOW_PHASES: Final = frozenset({"s", "t", "f"})
#: Gap between copies as a share of the source's span: keeps copies from touching.
GAP_FRACTION: Final = 0.01
#: ``ProfilerStep#N``: step numbers continue across copies.
STEP_NAME: Final = re.compile(r"^ProfilerStep#(\d+)$")

_UNITS: Final = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
}


def parse_size(text: str) -> int:
    """``"200MB"`` -> 200_000_000 (decimal units; ``MiB``/``GiB`` binary)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(f"bad size {text!r}: expected e.g. 200MB, 1GB, 1.5GiB")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def load_source(path: Path) -> dict[str, Any]:
    """The source trace as a dict; fractional numbers as ``Decimal`` (exact)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=Decimal)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError(f"{path}: not a Kineto trace (no traceEvents list)")
    return doc


def _is_number(value: object) -> TypeGuard[int | Decimal]:
    return isinstance(value, (int, Decimal)) and not isinstance(value, bool)


class Repeater:
    """Yields shifted copies of a source event list."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.metadata = [e for e in events if e.get("ph") == "M"]
        self.events = [e for e in events if e.get("ph") != "M"]
        starts = [e["ts"] for e in self.events if _is_number(e.get("ts"))]
        ends = [
            e["ts"] + (e["dur"] if _is_number(e.get("dur")) else 0)
            for e in self.events
            if _is_number(e.get("ts"))
        ]
        span = (max(ends) - min(starts)) if starts else 0
        #: Time shift between copies, in the trace's own ``ts`` unit (integer).
        self.time_shift = max(1, math.ceil(span * (1 + Decimal(str(GAP_FRACTION)))))
        ids = [0]
        steps = []
        for e in self.events:
            if e.get("ph") in FLOW_PHASES and _is_number(e.get("id")):
                ids.append(e["id"])
            args = e.get("args")
            if isinstance(args, dict):
                ids.extend(args[k] for k in LINK_ID_ARGS if _is_number(args.get(k)))
            match = STEP_NAME.match(str(e.get("name", "")))
            if match:
                steps.append(int(match.group(1)))
        #: Added to every link id per copy: a power of ten, so ids stay readable.
        self.id_shift = 10 ** len(str(int(max(ids)) + 1))
        self.step_shift = (max(steps) - min(steps) + 1) if steps else 0

    def copy(self, index: int, *, before: int | Decimal | None = None) -> Iterator[dict[str, Any]]:
        """Events of copy ``index`` (0 = the source itself); with ``before``, only events
        whose shifted ``ts`` is below it (a time-prefix of the copy)."""
        dt = index * self.time_shift
        did = index * self.id_shift
        dstep = index * self.step_shift
        for event in self.events:
            ts = event.get("ts")
            if before is not None and _is_number(ts) and ts + dt >= before:
                continue
            if index == 0:
                yield event
                continue
            out = dict(event)
            if _is_number(ts):
                out["ts"] = ts + dt
            if out.get("ph") in FLOW_PHASES and _is_number(out.get("id")):
                out["id"] += did
            args = out.get("args")
            if isinstance(args, dict) and any(_is_number(args.get(k)) for k in LINK_ID_ARGS):
                args = out["args"] = dict(args)
                for key in LINK_ID_ARGS:
                    if _is_number(args.get(key)):
                        args[key] += did
            if dstep:
                match = STEP_NAME.match(str(out.get("name", "")))
                if match:
                    out["name"] = f"ProfilerStep#{int(match.group(1)) + dstep}"
            yield out


def _open_out(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        # Level 1: the benchmark needs a gzip file, not the smallest one; level 6 is 3x slower.
        return gzip.GzipFile(path, "wb", compresslevel=1)  # type: ignore[return-value]
    return open(path, "wb")


def write_big_trace(
    source: Path, out: Path, *, size: int | None = None, copies: int | None = None
) -> dict[str, int]:
    """Write the scaled trace; return ``{"copies", "events", "bytes"}`` (JSON bytes written,
    before gzip; ``copies`` counts whole copies)."""
    if (size is None) == (copies is None):
        raise ValueError("give exactly one of size and copies")
    doc = load_source(source)
    rep = Repeater(doc["traceEvents"])
    encode = msgspec.json.Encoder(decimal_format="number").encode
    keys = list(doc)
    at = keys.index("traceEvents")
    head = (
        b"{"
        + b"".join(encode(k) + b": " + encode(doc[k]) + b",\n" for k in keys[:at])
        + b'"traceEvents": [\n'
    )
    tail_keys = keys[at + 1 :]
    tail = b"\n]" + b"".join(b",\n" + encode(k) + b": " + encode(doc[k]) for k in tail_keys)
    tail += b"}\n"

    written = events = 0
    first = True

    def emit(f: IO[bytes], event: dict[str, Any]) -> None:
        nonlocal written, events, first
        line = encode(event) if first else b",\n" + encode(event)
        first = False
        f.write(line)
        written += len(line)
        events += 1

    with _open_out(out) as f:
        f.write(head)
        written += len(head)
        for event in rep.metadata:
            emit(f, event)
        sized = [(e.get("ts"), len(encode(e)) + 2) for e in rep.events]
        copy_bytes = last_copy = sum(n for _, n in sized)
        index = 0
        # Later copies carry longer ids: size each copy by the one written before it.
        while (
            index < copies
            if copies is not None
            else index == 0 or written + last_copy + len(tail) <= (size or 0)
        ):
            before = written
            for event in rep.copy(index):
                emit(f, event)
            last_copy = written - before
            index += 1
        whole = index
        if size is not None:
            remaining = (size - written - len(tail)) * copy_bytes // last_copy
            if remaining > 0:
                cutoff = _time_prefix(sized, remaining)
                if cutoff is not None:
                    for event in rep.copy(whole, before=cutoff + whole * rep.time_shift):
                        emit(f, event)
        f.write(tail)
        written += len(tail)
    return {"copies": whole, "events": events, "bytes": written}


def _time_prefix(sized: list[tuple[Any, int]], budget: int) -> int | Decimal | None:
    """The source ``ts`` before which the events add up to about ``budget`` bytes."""
    timed = sorted((ts, n) for ts, n in sized if _is_number(ts))
    total = 0
    for ts, n in timed:
        total += n
        if total >= budget:
            return ts
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="a real Kineto trace (.json or .json.gz)")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--size", help="target JSON size before gzip, e.g. 200MB, 1GB")
    group.add_argument("--copies", type=int, help="exactly this many copies of the source")
    parser.add_argument("-o", "--out", type=Path, required=True, help="OUT.json or OUT.json.gz")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size) if args.size else None
        stats = write_big_trace(args.source, args.out, size=size, copies=args.copies)
    except (ValueError, OSError) as exc:
        print(f"make_big_trace: {exc}", file=sys.stderr)
        return 2
    print(
        f"{args.out}: {stats['bytes'] / 1e6:,.1f} MB of JSON, {stats['events']:,} events "
        f"({stats['copies']} whole copies of {args.source.name})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
