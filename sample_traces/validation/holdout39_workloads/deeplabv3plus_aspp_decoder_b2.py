"""The DeepLabV3+ segmentation head (Chen et al., 2018: the ASPP module of torchvision's
``DeepLabHead`` and the DeepLabV3+ decoder) on given ResNet-50 features of 2 images of 512 x
512 at output stride 16 (thirty-ninth hold-out): bf16 on a GPU, eval mode (dropout off), no
gradients; every convolution ``bias=False`` + BatchNorm (eval, running statistics set at
build) + ReLU except the classifier. ASPP on the high-level features (2, 2048, 32, 32): a 1 x
1 ``Conv2d(2048, 256)``; three 3 x 3 ``Conv2d(2048, 256)`` with dilation and padding 6, 12 and
18; the image pooling branch, the mean over the 32 x 32 positions, a 1 x 1 ``Conv2d(2048,
256)`` and ``F.interpolate`` back to 32 x 32 (bilinear, align_corners=False); the five
concatenated (1,280 channels) and projected by a 1 x 1 ``Conv2d(1280, 256)``. The decoder:
the low-level features (2, 256, 128, 128) reduced by a 1 x 1 ``Conv2d(256, 48)``, the ASPP
output upsampled 4x (bilinear, align_corners=False) and concatenated to them (304 channels),
two 3 x 3 convolutions 304 -> 256 -> 256 (padding 1) and the classifier ``Conv2d(256, 21,
1)`` to the (2, 21, 128, 128) logits; those upsampled 4x to 512 x 512 (bilinear,
align_corners=False) and the per-pixel ``argmax`` over the 21 classes. Inputs: high-level
features (2, 2048, 32, 32), low-level features (2, 256, 128, 128). Returns the 128 x 128
logits (2, 21, 128, 128; bf16 on a GPU) and the label map (2, 512, 512) int64.

    traceinspect profile deeplabv3plus_aspp_decoder_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

RATES, CLASSES, LOW_OUT = (6, 12, 18), 21, 48


def conv_bn_relu(cin: int, cout: int, kernel: int, dilation: int = 1) -> nn.Sequential:
    padding = dilation * (kernel // 2)
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, padding=padding, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class ASPP(nn.Module):
    def __init__(self, cin: int, c: int) -> None:
        super().__init__()
        self.branches = nn.ModuleList(
            [conv_bn_relu(cin, c, 1), *(conv_bn_relu(cin, c, 3, r) for r in RATES)]
        )
        self.pool = conv_bn_relu(cin, c, 1)
        self.project = conv_bn_relu((len(RATES) + 2) * c, c, 1)

    def forward(self, x: Tensor) -> Tensor:
        outs = [branch(x) for branch in self.branches]
        pooled = self.pool(x.mean(dim=(2, 3), keepdim=True))
        outs.append(F.interpolate(pooled, size=x.shape[2:], mode="bilinear", align_corners=False))
        return self.project(torch.cat(outs, dim=1))


class DeepLabV3PlusHead(nn.Module):
    def __init__(self, cin: int, low_in: int, c: int) -> None:
        super().__init__()
        self.aspp = ASPP(cin, c)
        self.low = conv_bn_relu(low_in, LOW_OUT, 1)
        self.fuse = nn.Sequential(conv_bn_relu(c + LOW_OUT, c, 3), conv_bn_relu(c, c, 3))
        self.classifier = nn.Conv2d(c, CLASSES, 1)

    def forward(self, high: Tensor, low: Tensor) -> Tensor:
        x = F.interpolate(self.aspp(high), size=low.shape[2:], mode="bilinear", align_corners=False)
        return self.classifier(self.fuse(torch.cat([x, self.low(low)], dim=1)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, cin, low_in, c, size = (1, 32, 16, 16, 64) if smoke else (2, 2048, 256, 256, 512)
    dtype = low_precision(device)
    model = DeepLabV3PlusHead(cin, low_in, c)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(high: Tensor, low: Tensor) -> tuple[Tensor, Tensor]:
        logits = model(high, low)
        full = F.interpolate(logits, size=(size, size), mode="bilinear", align_corners=False)
        return logits, full.argmax(dim=1)

    inputs = [
        (
            torch.randn(batch, cin, size // 16, size // 16, device=device, dtype=dtype),
            torch.randn(batch, low_in, size // 4, size // 4, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"DeepLabV3+ head: ASPP (rates {'/'.join(map(str, RATES))} + image pooling) on "
        f"{cin} x {size // 16}^2 + decoder with {low_in}-channel low-level features, b{batch} "
        f"at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
