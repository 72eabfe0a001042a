"""A longer fuzz run of ``traceinspect analyze`` than CI affords: hostile inputs, counted.

Each input is a mutation of a real trace (a bundled H200 sample, or the corpus's Nsight
export): truncated at a random point, bytes flipped, control bytes or NULs inserted, junk
before ``traceEvents``, a whitespace bomb between events, names carrying terminal escape
sequences, deep nesting, huge numbers, a corrupt gzip stream, a damaged SQLite page. Each is
analyzed in a forked child (the package is imported once) under an address-space limit and a
time limit. Counted: inputs tried, exits by kind, tracebacks (a Python traceback on stderr,
or an exit status other than 0/1/2), multi-line errors, raw control bytes reaching the
terminal, hangs (time limit hit) and the children's peak RSS.

    python bench/fuzz.py --seconds 300 [--seed 1] [--out fuzz.json]
    python bench/fuzz.py --bomb-gib 2     # one gzip bomb: 2 GiB of blanks inside traceEvents
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_traces"
CORPUS = ROOT.parent / "shared" / "corpus"
TIME_LIMIT_S = 60.0  # per input: a hang
ADDRESS_LIMIT = 3 << 30  # per child: a bomb that escapes the bounds fails here, not the box
CONTROL = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
ESCAPES = [b"\\u001b]52;c;ZWNobw==\\u0007", b"\\u001b[2J", b"\\u009b31m", b"\\u202e"]


def _load(name: str) -> bytes:
    return gzip.decompress((SAMPLES / name).read_bytes())


def mutations(rng: random.Random, json_text: bytes) -> list[tuple[str, Callable[[], bytes]]]:
    def truncate() -> bytes:
        return json_text[: rng.randrange(1, len(json_text))]

    def flip() -> bytes:
        data = bytearray(json_text)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)

    def control() -> bytes:
        at = rng.randrange(len(json_text))
        return json_text[:at] + bytes([rng.choice(CONTROL)]) + json_text[at:]

    def junk_before() -> bytes:
        return b"{" + os.urandom(rng.randint(1, 4096)) + json_text[1:]

    def whitespace_bomb() -> bytes:
        cut = json_text.find(b"},", rng.randrange(len(json_text) // 2)) + 2
        return json_text[:cut] + b" " * rng.randint(1 << 20, 64 << 20) + json_text[cut:]

    def escapes_in_names() -> bytes:
        escape = rng.choice(ESCAPES)
        return json_text.replace(b'"name": "', b'"name": "' + escape, rng.randint(1, 50))

    def deep() -> bytes:
        depth = rng.randint(1000, 200_000)
        return b'{"traceEvents": [' + b"[" * depth + b"]" * depth + b"]}"

    def huge_numbers() -> bytes:
        return json_text.replace(b'"ts": ', b'"ts": 9' * rng.randint(1, 40), rng.randint(1, 20))

    return [
        ("truncate", truncate),
        ("flip", flip),
        ("control_byte", control),
        ("junk_before", junk_before),
        ("whitespace_bomb", whitespace_bomb),
        ("escapes_in_names", escapes_in_names),
        ("deep_nesting", deep),
        ("huge_numbers", huge_numbers),
    ]


def make_input(rng: random.Random, texts: list[bytes], sqlite: bytes | None) -> tuple[str, bytes]:
    if sqlite is not None and rng.random() < 0.15:
        data = bytearray(sqlite)
        for _ in range(rng.randint(1, 50)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return "sqlite_damage", bytes(data)
    kind, make = rng.choice(mutations(rng, rng.choice(texts)))
    data = make()
    if rng.random() < 0.5:
        data = gzip.compress(data, compresslevel=1)
        if rng.random() < 0.2:
            kind += "+gzip_cut"
            data = data[: rng.randrange(10, len(data))]
    return kind, data


def run_one(path: Path, out_dir: Path) -> tuple[str, float, int, str]:
    """(outcome, seconds, peak RSS KiB, stderr) of ``analyze path`` in a forked child."""
    from traceinspect.cli import main

    err_path = out_dir / "stderr.txt"
    out_path = out_dir / "stdout.txt"
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: analyze, then leave without running the parent's exit path
        code = 70
        try:
            resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))
            with open(err_path, "w") as err, open(out_path, "w") as out:
                os.dup2(err.fileno(), 2)
                os.dup2(out.fileno(), 1)
                sys.stdout = os.fdopen(1, "w", closefd=False)
                sys.stderr = os.fdopen(2, "w", closefd=False)
                code = main(["analyze", str(path), "--json", str(out_dir / "r.json"), "--force"])
                sys.stdout.flush()
                sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - counted as a traceback by the parent
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            code = 70
        os._exit(code)
    deadline = started + TIME_LIMIT_S
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            return "hang", time.monotonic() - started, usage.ru_maxrss, ""
        time.sleep(0.02)
    seconds = time.monotonic() - started
    stderr = err_path.read_text(errors="replace")
    stdout = out_path.read_text(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if "Traceback" in stderr or code not in (0, 1, 2):
        outcome = "traceback"
    elif any(chr(c) in stdout + stderr for c in (0x1B, 0x07, 0x9B, 0x202E)):
        outcome = "raw_control"
    elif code != 0 and len(stderr.strip().splitlines()) != 1:
        outcome = "multi_line_error"
    else:
        outcome = f"exit_{code}"
    return outcome, seconds, usage.ru_maxrss, stderr


def bomb(gib: float) -> dict[str, object]:
    """Analyze the tiny_mlp sample with ``gib`` GiB of blanks between two of its events
    (a ~1 MB .json.gz per GiB); report the file size, wall time and the child's peak RSS."""
    import json as _json

    doc = _json.loads(_load("tiny_mlp.eager.json.gz"))
    events = [_json.dumps(e).encode() for e in doc.pop("traceEvents")]
    half = len(events) // 2
    head = b'{"traceEvents": [' + b",".join(events[:half]) + b","
    tail = b",".join(events[half:]) + b"], " + _json.dumps(doc).encode()[1:]
    member = gzip.compress(b" " * (1 << 20), compresslevel=9)
    import traceinspect.cli  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="traceinspect-bomb-") as tmp:
        path = Path(tmp) / "bomb.json.gz"
        path.write_bytes(gzip.compress(head) + member * int(gib * 1024) + gzip.compress(tail))
        global TIME_LIMIT_S
        TIME_LIMIT_S = 1800.0
        outcome, seconds, rss_kib, stderr = run_one(path, Path(tmp))
        report = _json.loads((Path(tmp) / "r.json").read_text()) if outcome == "exit_0" else {}
        return {
            "inflated_gib": gib,
            "file_mb": round(path.stat().st_size / 1e6, 2),
            "outcome": outcome,
            "seconds": round(seconds, 1),
            "peak_rss_mib": round(rss_kib / 1024, 1),
            "kernels": report.get("summary", {}).get("activities", {}).get("kernel"),
            "stderr": stderr[-500:],
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to fuzz")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write the totals here (JSON)")
    parser.add_argument("--bomb-gib", type=float, default=None, help="measure one gzip bomb")
    args = parser.parse_args()
    if args.bomb_gib is not None:
        print(json.dumps(bomb(args.bomb_gib), indent=1))
        return 0
    rng = random.Random(args.seed)
    texts = [_load(name) for name in ("tiny_mlp.eager.json.gz", "host_sync.eager.json.gz")]
    mock = CORPUS / "nsys-ai__mock.sqlite"
    sqlite = mock.read_bytes() if mock.is_file() else None
    import traceinspect.cli  # noqa: F401 - imported once, before the children fork

    outcomes: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    failures: list[dict[str, str]] = []
    peak_kib = 0
    slowest = 0.0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="traceinspect-fuzz-") as tmp:
        folder = Path(tmp)
        while time.monotonic() - started < args.seconds:
            kind, data = make_input(rng, texts, sqlite)
            path = folder / "input.bin"
            path.write_bytes(data)
            outcome, seconds, rss_kib, stderr = run_one(path, folder)
            outcomes[outcome] += 1
            kinds[kind] += 1
            peak_kib = max(peak_kib, rss_kib)
            slowest = max(slowest, seconds)
            if outcome in ("traceback", "hang", "raw_control", "multi_line_error"):
                failures.append({"kind": kind, "outcome": outcome, "stderr": stderr[-2000:]})
    totals = {
        "seconds": round(time.monotonic() - started, 1),
        "seed": args.seed,
        "inputs": sum(outcomes.values()),
        "tracebacks": outcomes["traceback"],
        "hangs": outcomes["hang"],
        "multi_line_errors": outcomes["multi_line_error"],
        "raw_control_to_terminal": outcomes["raw_control"],
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "slowest_input_s": round(slowest, 2),
        "outcomes": dict(outcomes),
        "mutations": dict(kinds),
        "failures": failures[:20],
    }
    text = json.dumps(totals, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    bad = totals["tracebacks"] or totals["hangs"] or totals["multi_line_errors"]
    return 1 if bad or totals["raw_control_to_terminal"] else 0


if __name__ == "__main__":
    sys.exit(main())
