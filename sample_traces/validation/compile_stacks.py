"""What ``torch.compile`` does to a Python-stacks trace, and whether traceinspect reads it.

Profiles compiling and running a GPT-2 block (``holdout14_workloads/compiled_gpt_block_b4``)
with ``with_stack=True``, exports the Chrome trace and writes to OUT_DIR:

* ``compile_stacks.summary.json``: the trace's size; whether it decodes as strict JSON, and
  the first error; how many ``python_function`` names are not valid JSON string text, with
  examples; what ``read_kineto`` read (events, notes) or the one line it refused with;
* ``compile_stacks.excerpt.json.gz``: the events around the first broken frame name,
  cut at event boundaries from the exported text as it is (a small real trace for tests).

    python sample_traces/validation/compile_stacks.py OUT_DIR
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from pathlib import Path

import msgspec
import torch
from torch.profiler import ProfilerActivity, profile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "holdout14_workloads"))
sys.path.insert(0, str(HERE.parents[1]))

FRAME = re.compile(rb'"cat": "python_function", "name": "(.*?)", "pid": ', re.S)
EVENT_START = b'\n  {\n    "ph": '
AROUND = 12  # events kept on each side of the first broken name


def valid_string(raw: bytes) -> bool:
    try:
        msgspec.json.decode(b'"' + raw + b'"')
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return True


def excerpt(text: bytes, at: int) -> bytes:
    """The whole events from AROUND before byte ``at`` to AROUND after, as a trace."""
    lo = at
    for _ in range(AROUND):
        lo = max(0, text.rfind(EVENT_START, 0, lo))
    hi = at
    for _ in range(AROUND + 1):
        found = text.find(EVENT_START, hi + 1)
        if found < 0:
            break
        hi = found
    body = text[lo:hi].rstrip().rstrip(b",")
    return b'{"schemaVersion": 1, "traceEvents": [' + body + b"\n]}"


def main(out: Path) -> None:
    from compiled_gpt_block_b4 import GPT2Block

    out.mkdir(parents=True, exist_ok=True)
    model = GPT2Block(768, 12).to("cuda", torch.bfloat16).eval()
    x = torch.randn(4, 256, 768, device="cuda", dtype=torch.bfloat16)
    t0 = time.perf_counter()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        record_shapes=True,
        with_stack=True,
    ) as prof:
        compiled = torch.compile(model, fullgraph=True)
        with torch.no_grad():
            for _ in range(3):
                compiled(x)
        torch.cuda.synchronize()
    profiled_s = time.perf_counter() - t0
    path = out / "work" / "compile_stacks.json"
    path.parent.mkdir(exist_ok=True)
    prof.export_chrome_trace(str(path))
    text = path.read_bytes()
    summary: dict[str, object] = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
        "profiled_s": round(profiled_s, 1),
        "bytes": len(text),
    }
    try:
        msgspec.json.decode(text)
        summary["strict_json"] = "ok"
    except msgspec.DecodeError as exc:
        summary["strict_json"] = str(exc)
    broken = [m for m in FRAME.finditer(text) if not valid_string(m.group(1))]
    summary["frames"] = sum(1 for _ in FRAME.finditer(text))
    summary["broken_frames"] = len(broken)
    summary["broken_examples"] = [m.group(1)[:200].decode("utf-8", "replace") for m in broken[:10]]
    if broken:
        (out / "compile_stacks.excerpt.json.gz").write_bytes(
            gzip.compress(excerpt(text, broken[0].start()))
        )
    from traceinspect.errors import TraceFormatError
    from traceinspect.parse.kineto import read_kineto

    t0 = time.perf_counter()
    try:
        tl = read_kineto(path)
        summary["read"] = {
            "kernels": len(tl.kernels),
            "cpu_ops": len(tl.cpu_ops),
            "python": len(tl.python),
            "notes": list(tl.meta.notes),
            "seconds": round(time.perf_counter() - t0, 1),
        }
    except TraceFormatError as exc:
        summary["read"] = {"error": str(exc)}
    (out / "compile_stacks.summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
