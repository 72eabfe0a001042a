"""Bounded property tests of the fault-handling seams (the long run is bench/fuzz.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

from conftest import sample_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traceinspect.errors import TraceFormatError
from traceinspect.parse.kineto import read_kineto
from traceinspect.sanitize import sanitize

TEXT = gzip.decompress(sample_file("tiny_mlp.eager.json.gz").read_bytes())
UNSAFE = {*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x202E, 0x2066}


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_sanitized_text_has_no_control_character_but_lines_and_tabs(text: str) -> None:
    clean = sanitize(text)
    assert not [c for c in clean if ord(c) in UNSAFE and c not in "\n\t"]
    assert not [c for c in sanitize(text, one_line=True) if ord(c) in UNSAFE]
    if not any(ord(c) in UNSAFE for c in text):
        assert clean == text


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    position=st.integers(min_value=0, max_value=len(TEXT) - 1),
    inserted=st.binary(min_size=1, max_size=64),
)
def test_any_bytes_inserted_anywhere_give_a_timeline_or_one_line(
    tmp_path: Path, position: int, inserted: bytes
) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(TEXT[:position] + inserted + TEXT[position:])
    try:
        timeline = read_kineto(path, workers=1)
    except TraceFormatError as exc:
        assert "\n" not in str(exc)
    else:
        assert len(timeline.kernels) <= 480 + 1  # 64 bytes hold at most one more kernel
