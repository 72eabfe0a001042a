"""ShuffleNet V2 1.0x (Ma et al., 2018), laid out as torchvision's ``shufflenet_v2_x1_0``, at
batch 8 (thirty-seventh hold-out): 8 images of 3 x 224 x 224, bf16 on a GPU, eval mode, no
gradients, every BatchNorm in eval mode with running statistics set at build, all convs
without bias. Stem: ``Conv2d(3, 24, 3, stride 2, padding 1)`` + BatchNorm + ReLU and a 3 x 3 /
2 max pool (224 -> 56). Three stages of 4, 8 and 4 units, 116, 232 and 464 channels. The first
unit of a stage (stride 2) runs two branches on the whole input: a depthwise 3 x 3 / 2 conv +
BatchNorm then a 1 x 1 conv + BatchNorm + ReLU to half the output channels; and a 1 x 1 conv
+ BatchNorm + ReLU, a depthwise 3 x 3 / 2 conv + BatchNorm, a 1 x 1 conv + BatchNorm + ReLU to
the other half; the two concatenated. The other units split the channels in two
(``chunk(2, dim=1)``), keep the first half and run the second through the second branch's
layout at stride 1, then concatenate. After every unit the channel shuffle with 2 groups
(``view`` (b, 2, c / 2, h, w), ``transpose(1, 2)``, ``contiguous``, ``view`` back). Then
``Conv2d(464, 1024, 1)`` + BatchNorm + ReLU at 7 x 7, the mean over the spatial dims and
``Linear(1024, 1000)``. Input: the images (8, 3, 224, 224). Returns the (8, 1000) logits.

    traceinspect profile shufflenet_v2_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

REPEATS = (4, 8, 4)


def conv_bn(cin: int, cout: int, kernel: int, stride: int, groups: int = 1) -> list[nn.Module]:
    conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
    return [conv, nn.BatchNorm2d(cout)]


def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    b, c, h, w = x.shape
    x = x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(b, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                *conv_bn(cin, cin, 3, stride, groups=cin), *conv_bn(cin, half, 1, 1), nn.ReLU()
            )
        else:
            self.branch1 = nn.Identity()
        b2_in = cin if stride > 1 else half
        self.branch2 = nn.Sequential(
            *conv_bn(b2_in, half, 1, 1), nn.ReLU(),
            *conv_bn(half, half, 3, stride, groups=half),
            *conv_bn(half, half, 1, 1), nn.ReLU(),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stem: int, widths: tuple[int, ...], last: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(*conv_bn(3, stem, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        units: list[nn.Module] = []
        cin = stem
        for repeats, cout in zip(REPEATS, widths, strict=True):
            units += [ShuffleUnit(cin if i == 0 else cout, cout, 2 if i == 0 else 1)
                      for i in range(repeats)]  # fmt: skip
            cin = cout
        self.stages = nn.Sequential(*units)
        self.conv5 = nn.Sequential(*conv_bn(cin, last, 1, 1), nn.ReLU())
        self.fc = nn.Linear(last, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv5(self.stages(self.stem(x)))
        return self.fc(x.mean(dim=(2, 3)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, stem, widths, last, classes = (
        (2, 32, 8, (16, 32, 64), 128, 10) if smoke else (8, 224, 24, (116, 232, 464), 1024, 1000)
    )
    dtype = low_precision(device)
    model = ShuffleNetV2(stem, widths, last, classes)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"ShuffleNet V2 1.0x, units {'/'.join(map(str, REPEATS))}, widths "
        f"{'/'.join(map(str, widths))}, b{batch} at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
