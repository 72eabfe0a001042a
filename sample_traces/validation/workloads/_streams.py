"""Fork-join on side streams, the way PyTorch code usually runs independent work side by side
(the concurrency workloads and the multi-stream hold-outs): each branch runs on its own
stream after ``wait_stream`` on the current one; the current stream then waits on every
branch (``wait_stream``) and the outputs, tensors or tuples of them, are marked as used
there (``record_stream``, outside capture). On a CPU the branches run in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch


def side_streams(device: torch.device, count: int) -> list[torch.cuda.Stream]:
    return [torch.cuda.Stream(device) for _ in range(count)] if device.type == "cuda" else []


def fork_join(
    device: torch.device,
    streams: Sequence[torch.cuda.Stream],
    branches: Sequence[Callable[[], Any]],
) -> list[Any]:
    """Run ``branches[i]`` on ``streams[i]`` (in order on a CPU); their results, ready on the
    current stream."""
    if not streams:
        return [branch() for branch in branches]
    current = torch.cuda.current_stream(device)
    outs = []
    for stream, branch in zip(streams, branches, strict=True):
        stream.wait_stream(current)
        with torch.cuda.stream(stream):
            outs.append(branch())
    for stream in streams:
        current.wait_stream(stream)
    if not torch.cuda.is_current_stream_capturing():
        for out in outs:
            for t in out if isinstance(out, tuple | list) else (out,):
                t.record_stream(current)
    return outs
