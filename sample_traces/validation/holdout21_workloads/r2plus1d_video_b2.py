"""Two R(2+1)D residual blocks (Tran et al., 2018) on video, 2 clips of 8 frames of 56 x 56
x 64, bf16 (twenty-first hold-out), inference: each block factorizes a 3x3x3 convolution
into a spatial 1x3x3 (64->144 channels) and a temporal 3x1x1 (144->64) ``Conv3d``, each
followed by BatchNorm3d (eval) and ReLU, twice, then the residual add and ReLU. About 30
kernels, the Conv3d's over 2 x 144 x 8 x 56 x 56 maps (0.7 GFLOP each) the bulk, BatchNorm
and ReLU over 3.6M values. Input: 2 x 64 x 8 x 56 x 56. Returns the same shape.

    traceinspect profile r2plus1d_video_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def factorized(cin: int, mid: int, cout: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv3d(cin, mid, (1, 3, 3), padding=(0, 1, 1), bias=False),
        nn.BatchNorm3d(mid), nn.ReLU(),
        nn.Conv3d(mid, cout, (3, 1, 1), padding=(1, 0, 0), bias=False),
        nn.BatchNorm3d(cout),
    )  # fmt: skip


class Block(nn.Module):
    def __init__(self, c: int, mid: int) -> None:
        super().__init__()
        self.a, self.b = factorized(c, mid, c), factorized(c, mid, c)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x + self.b(F.relu(self.a(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, mid, frames, size = (1, 8, 16, 4, 8) if smoke else (2, 64, 144, 8, 56)
    dtype = low_precision(device)
    model = nn.Sequential(Block(c, mid), Block(c, mid)).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [
        (torch.randn(batch, c, frames, size, size, device=device, dtype=dtype),) for _ in range(2)
    ]
    description = f"2 R(2+1)D blocks c{c} (mid {mid}), batch {batch} x {frames} x {size}x{size}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
