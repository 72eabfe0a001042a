"""Two independent MLP branches on two side streams, summed (twenty-fourth hold-out): each
branch 1024 -> 2048 -> 2048 -> 1024 with GELU between the layers, forked onto its own
stream with ``wait_stream`` and joined back, then the two outputs added on the current
stream. Input 64 x 1024, fp32: six GEMMs of 64 rows over 8.4 M weights per branch and four
GELUs. On a CPU all runs on one stream.

    traceinspect profile twin_fp32_mlp_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def mlp(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, hidden),
        nn.GELU(),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, d),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden = (2, 8, 16) if smoke else (64, 1024, 2048)
    first = mlp(d, hidden).to(device).eval()
    second = mlp(d, hidden).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: first(x), lambda: second(x)])
        return a + b

    inputs = [(torch.randn(batch, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"two MLPs {d}->{hidden}->{hidden}->{d} on 2 streams, b{batch}",
        [first, second],
    )


if __name__ == "__main__":
    main(build, __doc__)
