"""A bf16 convolution stack on one side stream beside a chain of square GEMMs on another,
joined on the current stream (forty-fifth hold-out: long convolutions beside short GEMMs, the
pairing the replay schedule reads long): the first branch is four ``Conv2d(128, 128, 3,
padding=1)`` + BatchNorm + ReLU on 16 feature maps of 28 x 28; the second twelve
``Linear(1024, 1024)`` + GELU on 256 rows. Eval mode, no gradients. After the join, the
conv branch's global average pool (16 x 128) and the GEMM chain's column means (1024) are
concatenated into one vector. Inputs: the (16, 128, 28, 28) maps and the (256, 1024) rows.

    traceinspect profile conv_stack_beside_gemm_chain_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, channels, size, rows, width, depth = (
        (2, 8, 8, 4, 16, 3) if smoke else (16, 128, 28, 256, 1024, 12)
    )
    dtype = low_precision(device)
    convs: list[nn.Module] = []
    for _ in range(4):
        convs += [
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
        ]
    conv_branch = nn.Sequential(*convs)
    gemms: list[nn.Module] = []
    for _ in range(depth):
        gemms += [nn.Linear(width, width), nn.GELU()]
    gemm_branch = nn.Sequential(*gemms)
    model = nn.ModuleList([conv_branch, gemm_branch]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(maps: Tensor, x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: conv_branch(maps), lambda: gemm_branch(x)])
        return torch.cat([a.mean(dim=(2, 3)).flatten(), b.mean(dim=0)])

    inputs = [
        (
            torch.randn(batch, channels, size, size, device=device, dtype=dtype),
            torch.randn(rows, width, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"4x conv3x3 {channels}ch {size}x{size} b{batch} beside {depth}x Linear {width} "
        f"({rows} rows) on 2 side streams",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
