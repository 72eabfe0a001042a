"""Two convolution towers on two side streams, added (twenty-fifth hold-out): 8 feature maps
of 128 channels at 56 x 56, bf16, channels-last — each tower three 3 x 3 convolutions
(128 -> 128, padding 1) with ReLU, forked onto its own stream with ``wait_stream`` and joined
back, then the two outputs added on the current stream. Six convolutions of 7.4 GFLOP each
and six ReLUs over 3.2 M values. On a CPU all runs on one stream (in fp32).

    traceinspect profile conv_towers_bf16_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CONVS = 3


def tower(c: int) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(CONVS):
        layers += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, side = (2, 4, 8) if smoke else (8, 128, 56)
    dtype = low_precision(device)
    towers = nn.ModuleList([tower(c), tower(c)])
    towers = towers.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()
    first, second = towers
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: first(x), lambda: second(x)])
        return a + b

    inputs = [
        (
            torch.randn(batch, c, side, side, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            ),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"two towers of {CONVS} 3x3 convs {c}ch {side}x{side} on 2 streams, channels-last, "
        f"b{batch}",
        [towers],
    )


if __name__ == "__main__":
    main(build, __doc__)
