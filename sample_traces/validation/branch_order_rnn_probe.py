"""Does the order in which a graph's side-stream branches are captured change its replay?

The model reads three of ``holdout42``'s workloads 12-19 % short: the character/word BiLSTM
and the siamese BiLSTM (two side-stream branches each, one a cuDNN LSTM), both recordings
each. In their profiled replays the branch captured second (its first node captured 80th of
441 and 144th of 298) starts only as ``cudaGraphLaunch`` returns, hundreds of µs in, though it
waits on nothing. Whether an unprofiled replay holds it too is what this times: each workload
replayed as written, with its two branches captured in the reverse order (the same graph
otherwise), and with both branches on the current stream one after the other. If the
branch captured second waits for the launch to hand it over, the reversed capture (the short
branch first) replays faster; if the miss is the kernels' pace beside each other, the two
orders replay alike. ``bigru_asr_encoder_beside_lm_2streams_b8`` (read +4.9 / +7.7 %, its late
root captured 1,626th of 1,821) is the contrast.

Pure torch, CUDA events around ``replay()`` with the GPU idle before each, in a process that
never starts a profiler::

    python sample_traces/validation/branch_order_rnn_probe.py --out branch_order_rnn.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from handover_probe import time_replay  # beside this script

HERE = Path(__file__).resolve().parent
WORKLOADS = (
    "bilstm_char_word_ner_2streams_b16",
    "siamese_bilstm_sentence_sim_2streams_b64",
    "bigru_asr_encoder_beside_lm_2streams_b8",
)


def reversed_fork_join(original: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
    """``fork_join`` with the branches (and their streams) captured in the reverse order;
    the results in the caller's order."""

    def fork_join(device: Any, streams: Sequence[Any], branches: Sequence[Any]) -> list[Any]:
        outs = original(device, list(streams)[::-1], list(branches)[::-1])
        return outs[::-1]

    return fork_join


def serial_fork_join(device: Any, streams: Sequence[Any], branches: Sequence[Any]) -> list[Any]:
    """Every branch on the current stream, in order."""
    return [branch() for branch in branches]


def tensors(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple | list) else [value]


def graphed(step: Callable[..., Any], inputs: tuple[Any, ...]) -> Any:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
        for _ in range(3):
            step(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step(*inputs)
    torch.cuda.synchronize()
    return graph, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="variants interleaved, repeated")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE / "holdout42_workloads"))
    device = torch.device("cuda")
    out: dict[str, Any] = {
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(),
    }
    for name in WORKLOADS:
        mod = importlib.import_module(name)
        original = mod.fork_join
        graphs: dict[str, Any] = {}
        results: dict[str, Any] = {}
        for variant, fj in (
            ("as written", original),
            ("branches reversed", reversed_fork_join(original)),
            ("serial", serial_fork_join),
        ):
            mod.fork_join = fj
            torch.manual_seed(0)
            built = mod.build(device, False)
            graphs[variant] = graphed(built.fn, built.inputs[0]) + (built,)
            mod.fork_join = original
        reference = graphs["as written"][1]
        for variant, (_, value, _) in graphs.items():
            same = all(
                torch.allclose(a.float(), b.float(), atol=1e-2, rtol=1e-2)
                for a, b in zip(tensors(value), tensors(reference), strict=True)
            )
            results[variant] = {"matches_as_written": bool(same), "rounds": []}
        for _ in range(args.rounds):
            for variant, (graph, _, _) in graphs.items():
                results[variant]["rounds"].append(time_replay(graph, args.reps))
        for variant, row in results.items():
            row["p50_us"] = round(statistics.median(r["p50_us"] for r in row["rounds"]), 2)
            print(f"{name}: {variant}: p50 {row['p50_us']} µs", row["rounds"], flush=True)
        out[name] = results
        del graphs
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
