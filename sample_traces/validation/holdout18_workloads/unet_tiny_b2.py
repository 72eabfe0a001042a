"""A tiny two-level UNet (Ronneberger et al., 2015) on 2 images of 3 x 128 x 128, bf16
(eighteenth hold-out), inference. Each conv block is two 3x3 convs (padding 1, with bias)
each followed by ReLU, no normalization. Down: a block 3->32 at 128 x 128, a 2x2 max pool, a
block 32->64 at 64 x 64, a 2x2 max pool, the bottleneck block 64->128 at 32 x 32. Up: a 2x2
transposed conv with stride 2 (128->64, to 64 x 64), concatenated with the 64-channel skip
(``torch.cat`` along the channels: 128), a block 128->64; a 2x2 transposed conv (64->32, to
128 x 128), concatenated with the 32-channel skip (64), a block 64->32; a 1x1 conv 32->2 for
the per-pixel logits. NCHW memory format, the convs on cuDNN. Thirteen convs (ten 3x3, two
transposed, one 1x1), each with its bias add and, where cuDNN converts NCHW bf16 to its
own layout and back, its layout kernels; ten ReLUs, two pools, two concatenations: some 40
to 60 kernels, the largest over the 32-channel maps at 128 x 128 (2 MB) and the 3x3 convs
of 0.3-0.6 GFLOP: launch-bound, with medium kernels. Input: the images (2 x 3 x 128 x 128).
Returns the logits (2 x 2 x 128 x 128, bf16).

    traceinspect profile unet_tiny_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES = 2


def block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(),
    )  # fmt: skip


class TinyUNet(nn.Module):
    def __init__(self, c1: int, c2: int, c3: int) -> None:
        super().__init__()
        self.down1, self.down2, self.bottom = block(3, c1), block(c1, c2), block(c2, c3)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(c3, c2, 2, stride=2)
        self.dec2 = block(2 * c2, c2)
        self.up1 = nn.ConvTranspose2d(c2, c1, 2, stride=2)
        self.dec1 = block(2 * c1, c1)
        self.head = nn.Conv2d(c1, CLASSES, 1)

    def forward(self, x: Tensor) -> Tensor:
        skip1 = self.down1(x)
        skip2 = self.down2(self.pool(skip1))
        y = self.bottom(self.pool(skip2))
        y = self.dec2(torch.cat((self.up2(y), skip2), dim=1))
        y = self.dec1(torch.cat((self.up1(y), skip1), dim=1))
        return self.head(y)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, widths = (1, 16, (4, 8, 16)) if smoke else (2, 128, (32, 64, 128))
    dtype = low_precision(device)
    model = TinyUNet(*widths).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"tiny UNet, 2 levels ({'-'.join(map(str, widths))} ch, 2x conv3x3 + ReLU blocks, "
        f"maxpool down, ConvTranspose up, skip cat), 1x1 head -> {CLASSES}, batch {batch} x 3 "
        f"x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
