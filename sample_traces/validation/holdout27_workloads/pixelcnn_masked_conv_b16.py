"""PixelCNN's masked convolutions (van den Oord et al., 2016) (twenty-seventh hold-out): 16
images of 32 x 32, fp32; a 7 x 7 type-A masked convolution 3 -> 64, then five residual
blocks of a 1 x 1 convolution 64 -> 32, a 3 x 3 type-B masked convolution 32 -> 32 and a 1 x 1
back to 64, each with ReLU; the masks are applied to the weights in every step
(``weight * mask``: an elementwise kernel per masked layer), then two 1 x 1 convolutions to
256 logits per channel (768) and a log-softmax. About 60 kernels, one stream.

    traceinspect profile pixelcnn_masked_conv_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

BLOCKS = 5


class MaskedConv(nn.Conv2d):
    def __init__(self, cin: int, cout: int, k: int, kind: str) -> None:
        super().__init__(cin, cout, k, padding=k // 2)
        mask = torch.ones_like(self.weight)
        mask[:, :, k // 2, k // 2 + (kind == "B") :] = 0
        mask[:, :, k // 2 + 1 :] = 0
        self.register_buffer("mask", mask)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(c, c // 2, 1),
            nn.ReLU(),
            MaskedConv(c // 2, c // 2, 3, "B"),
            nn.ReLU(),
            nn.Conv2d(c // 2, c, 1),
        )

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, c = (2, 8, 8) if smoke else (16, 32, 64)
    model = (
        nn.Sequential(
            MaskedConv(3, c, 7, "A"),
            *[Block(c) for _ in range(BLOCKS)],
            nn.ReLU(),
            nn.Conv2d(c, c, 1),
            nn.ReLU(),
            nn.Conv2d(c, 3 * 256, 1),
        )
        .to(device)
        .eval()
    )

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        logits = model(x).view(x.shape[0], 3, 256, x.shape[2], x.shape[3])
        return F.log_softmax(logits, dim=2)

    inputs = [(torch.rand(batch, 3, side, side, device=device),) for _ in range(2)]
    return Built(step, inputs, f"PixelCNN {BLOCKS} blocks {c}ch {side}x{side}, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
