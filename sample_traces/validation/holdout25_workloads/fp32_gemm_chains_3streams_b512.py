"""Three GEMM chains on three side streams, summed (twenty-fifth hold-out): each chain two
FP32 Linear layers 2048 -> 2048 with a ReLU between them, over the same input of 512 x 2048,
fp32 — each chain forked onto its own stream with ``wait_stream`` and joined back, then the
three outputs added on the current stream. Six GEMMs of 512 rows over 4.2 M weights each,
three ReLUs and two adds. On a CPU all runs on one stream.

    traceinspect profile fp32_gemm_chains_3streams_b512.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CHAINS = 3


def chain(d: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (2, 8) if smoke else (512, 2048)
    chains = nn.ModuleList([chain(d) for _ in range(CHAINS)]).to(device).eval()
    streams = side_streams(device, CHAINS)

    def branch(module: nn.Module, x: Tensor) -> Callable[[], Tensor]:
        return lambda: module(x)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b, c = fork_join(device, streams, [branch(m, x) for m in chains])
        return a + b + c

    inputs = [(torch.randn(batch, d, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{CHAINS} chains of 2 fp32 Linear {d} + ReLU on {CHAINS} streams, b{batch}",
        [chains],
    )


if __name__ == "__main__":
    main(build, __doc__)
