"""Two convolution branches of different kernel sizes on two side streams, as
Inception-style blocks run them (twenty-fourth hold-out): 4 feature maps of 64 channels at
64 x 64, fp32 — branch A three 3 x 3 convolutions (64 -> 64, padding 1, ReLU), branch B
two 5 x 5 convolutions (64 -> 64, padding 2, ReLU), each forked onto its own stream with
``wait_stream`` and joined back, then the outputs concatenated on channels and fused by a
1 x 1 convolution 128 -> 64 on the current stream. On a CPU all runs on one stream.

    traceinspect profile conv_kernel_sizes_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def conv_relu(c: int, kernel: int, count: int) -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(count):
        layers += [nn.Conv2d(c, c, kernel, padding=kernel // 2), nn.ReLU()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, side = (2, 4, 8) if smoke else (4, 64, 64)
    small, large = conv_relu(c, 3, 3), conv_relu(c, 5, 2)
    fuse = nn.Conv2d(2 * c, c, 1)
    modules = nn.ModuleList([small, large, fuse]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: small(x), lambda: large(x)])
        return fuse(torch.cat([a, b], dim=1))

    inputs = [(torch.randn(batch, c, side, side, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"3x3 x3 / 5x5 x2 conv branches on 2 streams, {c}ch {side}x{side}, b{batch}",
        [modules],
    )


if __name__ == "__main__":
    main(build, __doc__)
