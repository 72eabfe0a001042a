"""What the concurrency workloads share: branches forked from the current stream onto side
streams with ``wait_stream`` and joined back with ``wait_stream``, the way PyTorch code
usually runs independent work side by side. On a CPU the branches run one after the other."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor


def side_streams(device: torch.device, count: int) -> list[torch.cuda.Stream]:
    return [torch.cuda.Stream(device) for _ in range(count)] if device.type == "cuda" else []


def fork_join(
    streams: Sequence[torch.cuda.Stream],
    branches: Sequence[Callable[[], Tensor]],
    device: torch.device,
) -> list[Tensor]:
    """Run ``branches[i]`` on ``streams[i]``, each forked from the current stream and joined
    back to it; the results, ready on the current stream."""
    if not streams:
        return [branch() for branch in branches]
    current = torch.cuda.current_stream(device)
    outs = []
    for stream, branch in zip(streams, branches, strict=True):
        stream.wait_stream(current)
        with torch.cuda.stream(stream):
            outs.append(branch())
    for stream, out in zip(streams, outs, strict=True):
        current.wait_stream(stream)
        if not torch.cuda.is_current_stream_capturing():
            out.record_stream(current)
    return outs
