"""What every validation workload script shares: arguments, the device, and the run.

A workload script defines ``build(device, smoke) -> Built`` (the step function, a few input
sets, a one-line description) and calls :func:`main` with it. :func:`main` runs ``--steps``
steps, each inside ``traceinspect.region("step")``, synchronizes, and offers the step as one
graph candidate named ``step`` with the first input set. Under ``traceinspect profile`` the
collector then measures the step eager and replayed as a CUDA graph; run plainly, the script
just runs its steps.

``--smoke`` gives tiny sizes so every script runs on a CPU in seconds.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

import traceinspect


@dataclass
class Built:
    fn: Callable[..., Any]
    inputs: list[tuple[Any, ...]]  # cycled through step after step; the first is the example
    description: str
    keep: Sequence[Any] = ()  # modules/buffers kept alive with the step


def pick_device(name: str | None) -> torch.device:
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def low_precision(device: torch.device) -> torch.dtype:
    """bf16 on a GPU; fp32 on a CPU (smoke runs), where bf16 kernels are slow or missing."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(build: Callable[[torch.device, bool], Built], doc: str | None = None) -> None:
    ap = argparse.ArgumentParser(description=(doc or "").strip().split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20, help="steps run inside region('step')")
    ap.add_argument("--device", help="default: cuda when available, else cpu")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, for a CPU check")
    args = ap.parse_args()
    device = pick_device(args.device)
    torch.manual_seed(0)
    built = build(device, args.smoke)
    sync(device)
    start = time.perf_counter()
    for i in range(args.steps):
        with traceinspect.region("step"):
            built.fn(*built.inputs[i % len(built.inputs)])
    sync(device)
    ms = (time.perf_counter() - start) * 1e3 / max(args.steps, 1)
    print(f"{built.description}: {args.steps} steps on {device}, {ms:.2f} ms/step (traced)")
    traceinspect.graph_candidate("step", built.fn, built.inputs[0])
