"""What the concurrency workloads share: branches forked from the current stream onto side
streams with ``wait_stream`` and joined back with ``wait_stream``, the way PyTorch code
usually runs independent work side by side (``workloads/_streams.py``, in this argument
order). On a CPU the branches run one after the other."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from _streams import fork_join as _fork_join
from _streams import side_streams
from torch import Tensor

__all__ = ["fork_join", "side_streams"]


def fork_join(
    streams: Sequence[torch.cuda.Stream],
    branches: Sequence[Callable[[], Tensor]],
    device: torch.device,
) -> list[Tensor]:
    """Run ``branches[i]`` on ``streams[i]``, each forked from the current stream and joined
    back to it; the results, ready on the current stream."""
    return _fork_join(device, streams, branches)
