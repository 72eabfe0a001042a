"""Does a torch.profiler session with Python stacks leave the process slower?

`traceinspect profile` records the script with ``with_stack=True`` and then times the graph
candidates in the same process; on the H200 the candidates' eager steps then measured up to
46 % slower than with ``--no-stacks`` (gru_b8: 2,563 vs 1,751 µs). For each workload script,
in one process, this times ``--steps`` synchronized eager steps (p50) and graph replays:
``fresh``; ``after_stacks`` (after a CPU+CUDA session with ``with_stack=True``);
``after_setprofile_none`` (after also clearing ``sys.setprofile``/``threading.setprofile``).

    python stack_linger.py --out linger.json holdout3_workloads/gru_b8.py ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

import torch
from _harness import capture, load_workload, synchronized_ns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    device = torch.device("cuda")
    result: dict[str, Any] = {"torch": torch.__version__, "workloads": {}}
    for script in args.scripts:
        built = load_workload(script).build(device, False)
        inputs = built.inputs[0]
        graph, _ = capture(built.fn, inputs)

        def p50(call: Any) -> float:
            return round(statistics.median(synchronized_ns(call, args.steps)) / 1e3, 1)

        def phase(built: Any = built, inputs: Any = inputs, graph: Any = graph) -> dict[str, float]:
            return {
                "eager_us": p50(lambda: built.fn(*inputs)),
                "replay_us": p50(graph.replay),
                "profile_hook": sys.getprofile() is not None,
            }

        phases = {"fresh": phase()}
        acts = torch.profiler.ProfilerActivity
        with torch.profiler.profile(
            activities=[acts.CPU, acts.CUDA], record_shapes=True, with_stack=True
        ):
            for _ in range(5):
                built.fn(*inputs)
            torch.cuda.synchronize()
        phases["after_stacks"] = phase()
        sys.setprofile(None)
        threading.setprofile(None)
        phases["after_setprofile_none"] = phase()
        result["workloads"][script.stem] = phases
        print(script.stem, json.dumps(phases), flush=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
