"""sample_traces/validation/trim_trace.py, the tool that keeps a recording under the size a
trace may take: cut after the K-th step of a real sample trace."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from conftest import SAMPLES

TOOL = SAMPLES / "validation" / "trim_trace.py"


def test_a_cut_keeps_the_head_of_the_trace_and_its_gpu_annotations(tmp_path: Path) -> None:
    source = SAMPLES / "decode_step.eager.json.gz"
    out = tmp_path / "cut.json.gz"
    done = subprocess.run(
        [
            sys.executable,
            str(TOOL),
            str(source),
            str(out),
            "--after",
            "ProfilerStep#",
            "--count",
            "2",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "kept 2 of 5" in done.stdout
    whole = json.load(gzip.open(source, "rt"), parse_float=Decimal)["traceEvents"]
    cut = json.load(gzip.open(out, "rt"), parse_float=Decimal)["traceEvents"]
    steps = sorted(
        e["ts"] + e["dur"] for e in whole if str(e.get("name", "")).startswith("ProfilerStep#")
    )
    end = steps[1]
    host = [e for e in cut if e.get("cat") in ("cpu_op", "cuda_runtime", "user_annotation")]
    assert host and all(e["ts"] + e.get("dur", 0) <= end for e in host)
    launches = {
        e["args"]["correlation"]
        for e in cut
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    kernels = [e for e in whole if e.get("cat") == "kernel"]
    kept = [e for e in cut if e.get("cat") == "kernel"]
    assert [e for e in kernels if e["args"]["correlation"] in launches] == kept
    assert 0 < len(kept) < len(kernels)
    # The GPU-side annotations carry no launch to follow: those that start before the cut stay
    # (the eager decode step has 16 a step).
    gpu_marks = [e for e in whole if e.get("cat") == "gpu_user_annotation"]
    expected = [e for e in gpu_marks if e["ts"] <= end]
    assert [e for e in cut if e.get("cat") == "gpu_user_annotation"] == expected
    assert 0 < len(expected) < len(gpu_marks)
    # Every number as recorded: the kept events are the recorded ones, to the last digit, but
    # for host events that span the cut, which end at it.
    recorded = {json.dumps(e, sort_keys=True, default=str) for e in whole}
    changed = [e for e in cut if json.dumps(e, sort_keys=True, default=str) not in recorded]
    assert changed and all(e["ts"] + e["dur"] == end for e in changed)
