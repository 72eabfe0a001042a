"""ConvMixer (Trockman & Kolter, 2022) (twenty-seventh hold-out): 8 images of 128 x 128, fp32;
a patch-embedding convolution (3 -> 256, kernel and stride 8) with GELU and BatchNorm, then
four ConvMixer blocks: a depthwise 9 x 9 convolution (256 groups) with GELU, BatchNorm and a
residual add, then a pointwise 1 x 1 convolution with GELU and BatchNorm; global average
pooling and a Linear 256 -> 10. Depthwise convolutions of 16 x 16 maps and small pointwise
ones, about 40 kernels, one stream.

    traceinspect profile convmixer_block_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

DEPTH, KERNEL, PATCH = 4, 9, 8


class Residual(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: Tensor) -> Tensor:
        return x + self.inner(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, dim = (2, 16, 8) if smoke else (8, 128, 256)
    blocks: list[nn.Module] = []
    for _ in range(DEPTH):
        blocks += [
            Residual(
                nn.Sequential(
                    nn.Conv2d(dim, dim, KERNEL, groups=dim, padding="same"),
                    nn.GELU(),
                    nn.BatchNorm2d(dim),
                )
            ),
            nn.Conv2d(dim, dim, 1),
            nn.GELU(),
            nn.BatchNorm2d(dim),
        ]
    model = nn.Sequential(
        nn.Conv2d(3, dim, PATCH, stride=PATCH),
        nn.GELU(),
        nn.BatchNorm2d(dim),
        *blocks,
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(dim, 10),
    )
    model = model.to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, side, side, device=device),) for _ in range(2)]
    return Built(step, inputs, f"ConvMixer-{dim}/{DEPTH}, {side}x{side}, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
