"""Two bf16 projection towers on two side streams, concatenated (twenty-sixth hold-out):
each tower three Linear layers 1024 -> 4096 -> 4096 -> 1024 with SiLU between them over its
own half of a 1,024 x 2,048 input (the two halves of the channels), bf16 on a GPU — forked
onto its own stream with ``wait_stream`` and joined back, then the two outputs concatenated
and normalized by a LayerNorm on the current stream. Six large tensor-core GEMMs (1,024
rows, 4.2 M to 16.8 M weights each), four SiLUs, a cat and a LayerNorm. On a CPU all runs
on one stream.

    traceinspect profile bf16_gemm_pairs_2streams_b1024.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TOWERS = 2


def tower(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(d, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, d)
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden = (2, 8, 16) if smoke else (1024, 1024, 4096)
    dtype = low_precision(device)
    towers = nn.ModuleList([tower(d, hidden) for _ in range(TOWERS)]).to(device, dtype).eval()
    norm = nn.LayerNorm(TOWERS * d).to(device, dtype).eval()
    streams = side_streams(device, TOWERS)

    def branch(module: nn.Module, x: Tensor) -> Callable[[], Tensor]:
        return lambda: module(x)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        halves = x.chunk(TOWERS, dim=1)
        outs = fork_join(
            device, streams, [branch(m, h) for m, h in zip(towers, halves, strict=True)]
        )
        return norm(torch.cat(outs, dim=1))

    inputs = [(torch.randn(batch, TOWERS * d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{TOWERS} towers of 3 Linear {d}->{hidden}->{hidden}->{d} on {TOWERS} streams, b{batch}",
        [towers, norm],
    )


if __name__ == "__main__":
    main(build, __doc__)
