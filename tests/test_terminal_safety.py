"""Kernel and region names from a trace never reach the terminal as control sequences."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, sample_file

#: An OSC 52 clipboard write, a bell, a screen clear and a right-to-left override.
EVIL_REGION = "step\x1b]52;c;cHduZWQ=\x07\x1b[2J\u202eevil"
#: An OSC 8 hyperlink and a one-byte C1 CSI.
EVIL_KERNEL = "gemm\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\x9b31m"
CONTROL = {chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x202E)} - {"\n"}


def evil_trace(tmp_path: Path) -> Path:
    """The tiny_mlp H200 trace with its `step` range and every kernel renamed to payloads."""
    doc = json.loads(gzip.decompress(sample_file("tiny_mlp.eager.json.gz").read_bytes()))
    for event in doc["traceEvents"]:
        if event.get("name") == "step" and event.get("cat") in (
            "user_annotation",
            "gpu_user_annotation",
        ):
            event["name"] = EVIL_REGION
        if event.get("cat") == "kernel":
            event["name"] = EVIL_KERNEL
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_names_never_reach_the_terminal_as_control_sequences(tmp_path: Path) -> None:
    trace = evil_trace(tmp_path)
    for args in (["analyze", str(trace)], ["diff", str(trace), str(trace), "--full-names"]):
        done = subprocess.run(
            [sys.executable, "-m", "traceinspect", *args],
            cwd=ROOT, capture_output=True, timeout=120, check=False,
            env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 0, done.stderr
        for stream in (done.stdout, done.stderr):
            text = stream.decode("utf-8")
            assert not CONTROL & set(text), sorted(CONTROL & set(text))
        out = done.stdout.decode("utf-8")
        # the names are still there, their control characters shown as visible escapes
        assert "\\x1b]52;c;cHduZWQ=\\x07" in out
        assert "\\u202eevil" in out or "\\u202e" in out
