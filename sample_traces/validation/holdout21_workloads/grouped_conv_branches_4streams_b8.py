"""Two split-transform-merge blocks whose four convolution branches are forked onto four side
streams, 8 images of 56 x 56 x 256, bf16 (twenty-first hold-out), inference: per block each
branch reduces to 64 channels (1x1 convolution), transforms (a 3x3, a 5x5 as two 3x3, a 3x3
dilated by 2, or a 3x3 max-pool then nothing) with BatchNorm (eval) and ReLU after every
convolution; the current stream joins the four, concatenates them to 256 channels and adds
the block's input. About 60 kernels: convolutions over 8 x 64 x 56 x 56 maps (0.9 GFLOP
each), BatchNorm and ReLU kernels of 1.6M values (several waves each) and the max-pool.
Input: 8 x 256 x 56 x 56. Returns 8 x 256 x 56 x 56.

    traceinspect profile grouped_conv_branches_4streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def conv_bn(cin: int, cout: int, k: int, dilation: int = 1) -> list[nn.Module]:
    pad = dilation * (k // 2)
    return [
        nn.Conv2d(cin, cout, k, padding=pad, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    ]


class Block(nn.Module):
    def __init__(self, c: int, b: int) -> None:
        super().__init__()
        self.branches = nn.ModuleList(
            [
                nn.Sequential(*conv_bn(c, b, 1), *conv_bn(b, b, 3)),
                nn.Sequential(*conv_bn(c, b, 1), *conv_bn(b, b, 3), *conv_bn(b, b, 3)),
                nn.Sequential(*conv_bn(c, b, 1), *conv_bn(b, b, 3, dilation=2)),
                nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), *conv_bn(c, b, 1)),
            ]
        )


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, size = (1, 16, 8) if smoke else (8, 256, 56)
    dtype = low_precision(device)
    blocks = nn.ModuleList(Block(c, c // 4) for _ in range(2)).to(device=device, dtype=dtype)
    blocks.eval()
    streams = side_streams(device, 4)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for block in blocks:
            outs = fork_join(
                device, streams, [lambda br=br, x=x: br(x) for br in block.branches]
            )
            x = x + torch.cat(outs, dim=1)
        return x

    inputs = [(torch.randn(batch, c, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = f"2 four-branch conv blocks on 4 streams, c{c} at {size}x{size}, batch {batch}"
    return Built(step, inputs, description, [blocks])


if __name__ == "__main__":
    main(build, __doc__)
