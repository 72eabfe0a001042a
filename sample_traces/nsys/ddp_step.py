"""A two-process DDP training step, marked ``train_step`` > ``forward`` / ``backward`` /
``optimizer`` with ``traceinspect.region``: the recording behind ``ddp_gloo.sqlite.gz`` and
``ddp_gloo.rank0.kineto.json.gz`` (H200, torch 2.11.0+cu130, nsys 2025.3.1, 2026-12-01; one
GPU lent, so both ranks shared it through gloo; ``sample_traces/nsys/validate_gpu.sh``).
Measured there, step p50 per rank: 16.77 / 16.71 ms unprofiled, 17.14 / 17.10 ms under nsys,
17.77 / 18.12 ms under torch.profiler.

On a machine with 2 GPUs (from the project root; nsys and QdstrmImporter on PATH):

    nsys profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --cuda-graph-trace=node \\
        -o /tmp/ddp torchrun --nproc-per-node 2 sample_traces/nsys/ddp_step.py
    QdstrmImporter -i /tmp/ddp.qdstrm   # where nsys left only the raw file
    nsys export --type sqlite -o /tmp/ddp.sqlite /tmp/ddp.nsys-rep
    python sample_traces/nsys/trim_export.py /tmp/ddp.sqlite ddp.sqlite.gz --from-range train_step

The same run under the PyTorch profiler, one Kineto trace per rank in DIR:

    torchrun --nproc-per-node 2 sample_traces/nsys/ddp_step.py --torch-profiler DIR

Without either, each rank prints its unprofiled step times. With fewer GPUs than ranks, the
ranks share the GPUs and all-reduce through gloo instead of NCCL. The model (8 × Linear 1024 →
ReLU, batch 64, SGD with momentum) is launch-bound on an H200: ~50 small kernels a step, the
gradients all-reduced by DDP's NCCL hooks from the autograd engine's thread during
``backward``. Every rank prints one JSON line: its step times (ns, synchronized per step).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

import traceinspect

WIDTH, LAYERS, BATCH = 1024, 8, 64


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12, help="marked training steps")
    parser.add_argument("--warmup", type=int, default=5, help="unmarked steps before them")
    parser.add_argument("--torch-profiler", type=Path, help="write rank<N>.json.gz here")
    parser.add_argument("--cpu", action="store_true", help="gloo on CPU (a smoke test)")
    args = parser.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    # NCCL needs a GPU per rank; with fewer GPUs the ranks share them through gloo.
    shared = not args.cpu and torch.cuda.device_count() < world
    dist.init_process_group("gloo" if args.cpu or shared else "nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", rank))
    if not args.cpu:
        local %= torch.cuda.device_count()
    device = torch.device("cpu" if args.cpu else f"cuda:{local}")
    if not args.cpu:
        torch.cuda.set_device(local)
    torch.manual_seed(0)
    layers = [m for _ in range(LAYERS) for m in (nn.Linear(WIDTH, WIDTH), nn.ReLU())]
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(*layers).to(device),
        device_ids=None if args.cpu else [local],
        bucket_cap_mb=4,
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    inputs = torch.randn(BATCH, WIDTH, device=device)
    target = torch.randn(BATCH, WIDTH, device=device)
    synchronize = (lambda: None) if args.cpu else torch.cuda.synchronize

    def step(marked: bool) -> None:
        marks = traceinspect.region if marked else _unmarked
        with marks("train_step"):
            with marks("forward"):
                loss = nn.functional.mse_loss(model(inputs), target)
            with marks("backward"):
                loss.backward()
            with marks("optimizer"):
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step(marked=False)
    synchronize()
    dist.barrier()

    profiler = None
    if args.torch_profiler is not None:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if not args.cpu:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        profiler = torch.profiler.profile(activities=activities)
        profiler.start()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter_ns()
        step(marked=True)
        synchronize()
        times.append(time.perf_counter_ns() - start)
    if profiler is not None:
        profiler.stop()
        args.torch_profiler.mkdir(parents=True, exist_ok=True)
        profiler.export_chrome_trace(str(args.torch_profiler / f"rank{rank}.json.gz"))
    mode = "torch-profiler" if profiler else "nsys" if _nsys() else "unprofiled"
    summary = {"rank": rank, "mode": mode, "backend": dist.get_backend(), "device": str(device)}
    summary |= {"step_p50_ns": statistics.median(times), "steps": times}
    print(json.dumps(summary), flush=True)
    dist.destroy_process_group()


class _unmarked:  # noqa: N801 - stands in for traceinspect.region
    def __init__(self, name: str) -> None:
        pass

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        pass


def _nsys() -> bool:
    return bool(
        os.environ.get("NSYS_PROFILING_SESSION_ID") or os.environ.get("NVTX_INJECTION64_PATH")
    )


if __name__ == "__main__":
    main()
