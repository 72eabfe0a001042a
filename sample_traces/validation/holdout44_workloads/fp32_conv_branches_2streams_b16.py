"""Two fp32 convolution branches on two side streams, added after the join (forty-fourth
hold-out: fp32 convolutions without TF32, whose kernels may multiply on the FP32 pipes, side by
side): 16 images of 64 channels at 56 x 56, each branch three ``Conv2d(64, 64, 3, padding=1)``
+ BatchNorm + ReLU (the second branch with dilation 2 and padding 2), cuDNN's TF32 turned off
for convolutions, eval mode, no gradients; after the join the sum, a global average pool and
``Linear(64, 100)``. Inputs: (16, 64, 56, 56) fp32 feature maps. Returns the (16, 100) logits.

    traceinspect profile fp32_conv_branches_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def _branch(channels: int, dilation: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(3):
        layers += [
            nn.Conv2d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(),
        ]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, channels, size = (2, 8, 12) if smoke else (16, 64, 56)
    torch.backends.cudnn.allow_tf32 = False  # full fp32 convolutions
    branches = [_branch(channels, 1), _branch(channels, 2)]
    head = nn.Linear(channels, 100)
    model = nn.ModuleList([*branches, head]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: branches[0](x), lambda: branches[1](x)])
        return head((a + b).mean(dim=(2, 3)))

    inputs = [(torch.randn(batch, channels, size, size, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"2 fp32 conv branches (3x conv3x3 {channels}ch, dilation 1 and 2) on 2 side streams, "
        f"{size}x{size}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
