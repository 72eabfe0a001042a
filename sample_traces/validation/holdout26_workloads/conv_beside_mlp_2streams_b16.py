"""An image branch and a metadata MLP on two side streams, fused (twenty-sixth hold-out): 16
samples; the image branch three 3 x 3 convolutions 3 -> 32 -> 64 -> 64 (the last two with
stride 2) with BatchNorm and ReLU over 64 x 64 images, then global average pooling; the MLP
branch four Linear layers 256 -> 512 -> 512 -> 512 -> 64 with ReLU over 256 metadata features;
fp32, each branch on its own stream (``wait_stream`` fork and join), then the two 64-wide
features concatenated and a Linear 128 -> 10 on the current stream. Small convolutions
beside small GEMMs. On a CPU all runs on one stream.

    traceinspect profile conv_beside_mlp_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def conv(c_in: int, c_out: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU()]


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, meta, width = (2, 8, 8, 16) if smoke else (16, 64, 256, 512)
    image = nn.Sequential(
        *conv(3, 32, 1), *conv(32, 64, 2), *conv(64, 64, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten()
    )
    mlp = nn.Sequential(
        nn.Linear(meta, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, width),
        nn.ReLU(),
        nn.Linear(width, 64),
    )
    head = nn.Linear(128, 10)
    model = nn.ModuleList([image, mlp, head]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(pixels: Tensor, features: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: image(pixels), lambda: mlp(features)])
        return head(torch.cat([a, b], dim=1))

    inputs = [
        (torch.randn(batch, 3, side, side, device=device), torch.randn(batch, meta, device=device))
        for _ in range(2)
    ]
    return Built(
        step, inputs, f"3-conv image branch beside 4-layer MLP on 2 streams, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
