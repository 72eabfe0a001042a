"""Two expert MLPs on two side streams, averaged (twenty-fifth hold-out): each expert
1024 -> 4096 -> 1024 with SiLU between, bf16, over the same input of 256 x 1024 — each
expert forked onto its own stream with ``wait_stream`` and joined back, then the two outputs
averaged on the current stream. Four GEMMs of 256 rows over 4.2 M weights each and two SiLUs
over 256 x 4096. On a CPU all runs on one stream (in fp32).

    traceinspect profile bf16_experts_2streams_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def expert(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d, hidden), nn.SiLU(), nn.Linear(hidden, d))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden = (2, 8, 32) if smoke else (256, 1024, 4096)
    dtype = low_precision(device)
    experts = nn.ModuleList([expert(d, hidden) for _ in range(2)])
    experts = experts.to(device=device, dtype=dtype).eval()
    first, second = experts
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: first(x), lambda: second(x)])
        return (a + b) * 0.5

    inputs = [(torch.randn(batch, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"two expert MLPs {d}->{hidden}->{d} SiLU on 2 streams, b{batch}",
        [experts],
    )


if __name__ == "__main__":
    main(build, __doc__)
