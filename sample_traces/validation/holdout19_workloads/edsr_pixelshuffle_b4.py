"""An EDSR-style super-resolution network (Lim et al., 2017), x2, on 4 images of 96 x 96,
bf16 (nineteenth hold-out), inference: a 3x3 head convolution 3->64, 8 residual blocks
(conv 3x3, ReLU, conv 3x3, the result scaled by 0.1 and added back: no BatchNorm), a 3x3
convolution and the global skip add, then the upsampler: a 3x3 convolution 64->256 and
``pixel_shuffle(2)`` to 64 x 192 x 192, and a 3x3 tail convolution 64->3. Some 40 kernels,
the convolutions over 96 x 96 x 64 maps (0.3 GFLOP each) the bulk. Input: 4 x 3 x 96 x 96.
Returns 4 x 3 x 192 x 192.

    traceinspect profile edsr_pixelshuffle_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, RES_SCALE = 8, 0.1


class ResBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.a, self.b = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return x + self.b(F.relu(self.a(x))) * RES_SCALE


class EDSR(nn.Module):
    def __init__(self, c: int, blocks: int) -> None:
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(c) for _ in range(blocks)])
        self.body_end = nn.Conv2d(c, c, 3, padding=1)
        self.up = nn.Conv2d(c, 4 * c, 3, padding=1)
        self.tail = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.head(x)
        h = h + self.body_end(self.body(h))
        return self.tail(F.pixel_shuffle(self.up(h), 2))


def build(device: torch.device, smoke: bool) -> Built:
    c, blocks, size, batch = (8, 2, 8, 1) if smoke else (64, BLOCKS, 96, 4)
    dtype = low_precision(device)
    model = EDSR(c, blocks).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images)

    inputs = [(torch.rand(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = f"EDSR x2 ({blocks} residual blocks of {c}), batch {batch} at {size}x{size}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
