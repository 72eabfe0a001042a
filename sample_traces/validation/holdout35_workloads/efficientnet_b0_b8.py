"""EfficientNet-B0 inference at batch 8, 224 x 224 (thirty-fifth hold-out): bf16 on a GPU,
channels_last, eval mode, no gradients, torchvision's B0 layout written out. Stem:
``Conv2d(3, 32, 3, stride 2, padding 1, bias=False)`` + BatchNorm + SiLU, 224 -> 112. Then
the 16 MBConv blocks of B0, as (expansion, kernel, first stride, output channels, blocks)
per stage: (1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
(6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1), 112 -> 7. Each block: a 1 x 1
expansion conv to expansion x input channels + BatchNorm + SiLU (left out when the
expansion is 1), a depthwise k x k conv (padding k // 2, the stage's stride on its first
block) + BatchNorm + SiLU, squeeze-excitation (global average pool, 1 x 1 conv down to a
quarter of the block's input channels + SiLU, 1 x 1 conv back up + sigmoid, the expanded
map scaled by it), a 1 x 1 projection conv + BatchNorm (no activation), and the residual add
when the stride is 1 and the input and output channels match (no stochastic depth in eval).
Head: ``Conv2d(320, 1280, 1, bias=False)`` + BatchNorm + SiLU, global average pooling,
``Linear(1280, 1000)`` (dropout is an identity in eval). The BatchNorms hold running
statistics set at build. Input: images (8, 3, 224, 224), channels_last. Returns the logits
(8, 1000).

    traceinspect profile efficientnet_b0_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import conv_input, random_batch_norm_stats
from torch import Tensor, nn

BATCH, STEM, LAST, CLASSES = 8, 32, 1280, 1000
# (expansion, kernel, first stride, output channels, blocks): EfficientNet-B0
STAGES = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
          (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]  # fmt: skip


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    return [
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeeze: int) -> None:
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        s = x.mean(dim=(2, 3), keepdim=True)
        s = torch.sigmoid(self.fc2(F.silu(self.fc1(s))))
        return x * s


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expand: int, kernel: int, stride: int) -> None:
        super().__init__()
        mid = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [*conv_bn(cin, mid, 1), nn.SiLU()]
        layers += [
            *conv_bn(mid, mid, kernel, stride, groups=mid),
            nn.SiLU(),
            SqueezeExcitation(mid, max(1, cin // 4)),
            *conv_bn(mid, cout, 1),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: Tensor) -> Tensor:
        y = self.body(x)
        return x + y if self.residual else y


def efficientnet_b0(classes: int = CLASSES) -> nn.Sequential:
    layers: list[nn.Module] = [*conv_bn(3, STEM, 3, 2), nn.SiLU()]
    cin = STEM
    for expand, kernel, stride, cout, blocks in STAGES:
        for i in range(blocks):
            layers.append(MBConv(cin, cout, expand, kernel, stride if i == 0 else 1))
            cin = cout
    layers += [
        *conv_bn(cin, LAST, 1),
        nn.SiLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(LAST, classes),
    ]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (2, 32) if smoke else (BATCH, 224)
    dtype = low_precision(device)
    model = efficientnet_b0()
    random_batch_norm_stats(model)
    model = model.to(device=device, dtype=dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = conv_input(batch, size, device, dtype)
    blocks = sum(stage[-1] for stage in STAGES)
    return Built(
        step, inputs, f"EfficientNet-B0 ({blocks} MBConv + SE), batch {batch} at {size}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
