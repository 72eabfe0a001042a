"""Two image towers on two side streams (each 4 x Conv3x3 64 channels + ReLU on
4 x 64 x 56 x 56, bf16, then mean pooling), concatenated on the current stream.

    traceinspect profile conv_towers.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _branches import fork_join, side_streams
from _common import Built, low_precision, main
from torch import nn


def build(device: torch.device, smoke: bool) -> Built:
    ch, size, batch, depth = (4, 8, 2, 2) if smoke else (64, 56, 4, 4)
    dtype = low_precision(device)
    towers = [
        nn.Sequential(
            *(m for _ in range(depth) for m in (nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU()))
        )
        .to(device=device, dtype=dtype)
        .eval()
        for _ in range(2)
    ]
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        outs = fork_join(streams, [lambda t=t: t(x).mean((2, 3)) for t in towers], device)
        return torch.cat(outs, 1)

    inputs = [(torch.randn(batch, ch, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"2 conv towers, {depth} x conv{ch} on {size}x{size}", towers)


if __name__ == "__main__":
    main(build, __doc__)
