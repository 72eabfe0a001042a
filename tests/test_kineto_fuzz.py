"""Property tests: whatever the bytes, the Kineto reader loads them or raises
:class:`TraceFormatError` (one line), never another exception."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from conftest import corpus_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traceinspect.errors import TraceFormatError
from traceinspect.parse import kineto
from traceinspect.parse.kineto import read_kineto

pytestmark = pytest.mark.slow

TRITON = "HolisticTraceAnalysis__triton_example.json.gz"  # 16.6 KB of JSON, 71 events
FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def read_or_format_error(data: bytes, name: str = "fuzz.json") -> None:
    """Read ``data`` as a trace file; only TraceFormatError may escape, as one line."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            tl = read_kineto(path)
        except TraceFormatError as exc:
            assert "\n" not in str(exc)
            assert str(path) in str(exc)
            return
        tl.validate()


@pytest.fixture(scope="module")
def triton_text() -> bytes:
    with gzip.open(corpus_file(TRITON), "rb") as f:
        return f.read()


@FUZZ
@given(data=st.binary(max_size=2048))
def test_arbitrary_bytes(data: bytes) -> None:
    read_or_format_error(data)


@FUZZ
@given(data=st.binary(max_size=512))
def test_arbitrary_bytes_after_a_json_start(data: bytes) -> None:
    read_or_format_error(b'{"traceEvents": [' + data)
    read_or_format_error(b"[" + data)


@pytest.mark.corpus
@FUZZ
@given(fraction=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_prefixes_of_a_real_trace(triton_text: bytes, fraction: float) -> None:
    cut = int(len(triton_text) * fraction)
    read_or_format_error(triton_text[:cut])


@pytest.mark.corpus
@FUZZ
@given(fraction=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_gzip_of_a_real_trace(fraction: float) -> None:
    data = corpus_file(TRITON).read_bytes()
    read_or_format_error(data[: int(len(data) * fraction)], "fuzz.json.gz")


@pytest.mark.corpus
@FUZZ
@given(position=st.integers(min_value=0), byte=st.integers(min_value=0, max_value=255))
def test_one_corrupted_byte_in_a_real_trace(triton_text: bytes, position: int, byte: int) -> None:
    at = position % len(triton_text)
    read_or_format_error(triton_text[:at] + bytes([byte]) + triton_text[at + 1 :])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)
EVENT_KEYS = ["ph", "cat", "name", "pid", "tid", "ts", "dur", "id", "args"]
ARG_KEYS = [
    "External id",
    "external id",
    "correlation",
    "device",
    "stream",
    "bytes",
    "grid",
    "block",
    "graph id",
    "graph node id",
    "cuda_sync_kind",
    "Input Dims",
]
CATS = ["kernel", "gpu_memcpy", "cuda_runtime", "cuda_driver", "cpu_op", "user_annotation",
        "gpu_user_annotation", "cuda_sync", "ac2g", "Kernel", "Runtime"]  # fmt: skip


@st.composite
def plausible_events(draw: st.DrawFn) -> dict[str, Any]:
    """A kineto-like event where any field may hold a value of the wrong type."""
    event: dict[str, Any] = {
        "ph": draw(st.sampled_from(["X", "s", "f", "M", "i"]) | json_values),
        "cat": draw(st.sampled_from(CATS) | json_values),
        "name": draw(st.sampled_from(["cudaLaunchKernel", "cudaGraphLaunch", "ProfilerStep#1"])),
        "pid": draw(st.integers(-5, 5) | json_values),
        "tid": draw(st.integers(-5, 5) | st.text(max_size=6) | json_values),
        "ts": draw(
            st.integers(-(10**17), 10**17) | st.decimals(allow_nan=False, places=3) | json_values
        ),
        "dur": draw(st.integers(-10, 10**6) | json_values),
        "id": draw(st.integers(-5, 2**65) | json_values),
    }
    args = {key: draw(st.integers(-(2**65), 2**65) | json_values) for key in
            draw(st.lists(st.sampled_from(ARG_KEYS), max_size=4))}  # fmt: skip
    event["args"] = draw(st.just(args) | json_values)
    dropped = draw(st.lists(st.sampled_from(EVENT_KEYS), max_size=3))
    return {k: v for k, v in event.items() if k not in dropped}


def _encode(doc: Any) -> bytes:
    return json.dumps(doc, default=str).encode()


@FUZZ
@given(events=st.lists(plausible_events(), max_size=12), base=json_values | st.integers(0, 2**62))
def test_structurally_wrong_events(events: list[dict[str, Any]], base: Any) -> None:
    read_or_format_error(_encode({"traceEvents": events, "baseTimeNanoseconds": base}))


@FUZZ
@given(trace_events=json_values, device_properties=json_values)
def test_wrong_top_level_types(trace_events: Any, device_properties: Any) -> None:
    doc = {"deviceProperties": device_properties, "traceEvents": trace_events}
    read_or_format_error(_encode(doc))
    read_or_format_error(_encode(trace_events))


@settings(max_examples=30, deadline=None)
@given(events=st.lists(plausible_events(), min_size=1, max_size=40))
def test_chunked_reading_agrees_or_fails_alike(events: list[dict[str, Any]]) -> None:
    # Tiny chunks force many cuts; the outcome must match a whole-file read.
    data = _encode({"traceEvents": events})
    outcomes = []
    for chunk_bytes in (kineto.CHUNK_BYTES, 64):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(kineto, "CHUNK_BYTES", chunk_bytes)
            patch.setattr(kineto, "READ_BYTES", 32)
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "t.json"
                path.write_bytes(data)
                try:
                    tl = read_kineto(path)
                    outcomes.append({k: t.to_dict("list") for k, t in tl.tables().items()})
                except TraceFormatError:
                    outcomes.append("error")
    assert outcomes[0] == outcomes[1]


#: A Python frame event as Kineto writes it, its name's text left to the test.
_FRAME = (
    b'{"traceEvents": [\n  {\n    "ph": "X", "cat": "python_function", "name": "%s", '
    b'"pid": 7, "tid": 7,\n    "ts": 1000, "dur": 5,\n    "args": {\n      "Python id": 1'
    b"\n    }\n  },\n"
    b'  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1001, '
    b'"dur": 2}\n]}'
)


@FUZZ
@given(
    name=st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=","),
        max_size=40,
    ),
    bad=st.binary(max_size=3),
)
def test_a_python_frame_name_reads_as_the_profiler_wrote_it(name: str, bad: bytes) -> None:
    # GIVEN any text written into a frame's name as is, quotes, backslashes, control
    # characters and stray bytes included (no comma: "a", "b" is a name and a key alike)
    raw = name.encode() + bad
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "frame.json"
        path.write_bytes(_FRAME % raw)
        # WHEN read
        tl = read_kineto(path)
    # THEN the name is the JSON string where it is one, else the raw text (bytes that are
    # not UTF-8 as U+FFFD); nothing is lost. A lone surrogate is never a name, whether
    # encoded (b"\xed\xa0\x80", not UTF-8) or escaped ("\ud800", not a character):
    # Python's own json.loads passes both through, and no UTF-8 report could write them.
    try:
        expected = json.loads('"' + raw.decode("utf-8") + '"')
        expected.encode("utf-8")
    except ValueError:  # UnicodeDecodeError and UnicodeEncodeError included
        expected = raw.decode("utf-8", errors="replace")
    assert list(tl.python["name"]) == [expected]
    assert list(tl.cpu_ops["name"]) == ["aten::mm"]
