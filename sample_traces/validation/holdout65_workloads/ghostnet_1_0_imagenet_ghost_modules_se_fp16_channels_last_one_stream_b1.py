"""GhostNet 1.0x (Han et al., CVPR 2020, "GhostNet: More Features from Cheap Operations":
bottlenecks of ghost modules, each a 1 x 1 convolution to half the channels and a cheap 3 x 3
depthwise convolution making the other half from them) classifying one ImageNet image at 224 x 224,
as a latency-bound single-image service runs it (sixty-fifth hold-out: one stream, fp16,
channels-last: the 3 x 3 / 2 stem to 16 channels with BatchNorm and ReLU; 16 ghost bottlenecks in 5
stages (16 to 160 output channels, expansions of 16 to 960, 3 x 3 and 5 x 5 depthwise kernels, the 4
stride-2 bottlenecks' depthwise convolution and BatchNorm between their two ghost modules), each
ghost module a 1 x 1 convolution, BatchNorm and ReLU (none in the second module), the depthwise 3 x
3, BatchNorm and ReLU, the concatenation and the slice to the output width; squeeze-and-excitation
in 7 bottlenecks (the global pool, a 1 x 1 convolution with bias to a quarter of the channels
rounded to 4, ReLU, one back, the hard sigmoid as ``relu6(x + 3) / 6`` and the product); the 5
shortcuts with a channel change or stride as a depthwise convolution, BatchNorm, a 1 x 1 convolution
and BatchNorm, the residual adds; the 1 x 1 convolution to 960 with BatchNorm and ReLU, the global
pool, ``conv_head`` 960 -> 1280 with bias and ReLU and ``Linear(1280, 1000)``; the softmax; some 300
kernels, nearly all a few microseconds long on grids of 112 x 112 to 7 x 7 (the largest activation
the second bottleneck's expansion (1, 48, 112, 112), 1.2 MB), 0.3 GFLOP in all, some 0.8 to 1.5 ms
of GPU time, launch-bound). Laid out as huawei-noah/Efficient-AI-Backbones'
``ghostnet_pytorch/ghostnet.py`` (``ghostnet(width=1.0)``: its ``cfgs`` of ``[k, exp_size, c,
se_ratio, s]`` rows, ``GhostModule`` with ``ratio 2, dw_size 3``, ``GhostBottleneck``,
``SqueezeExcite`` with ``hard_sigmoid`` and ``_make_divisible(.., 4)``, ``ConvBnAct``; dropout 0.2
before the classifier, off in eval) with the BatchNorms as separate kernels (not folded into the
convolutions). fp16 weights and activations, channels-last, on a GPU (fp32 on a CPU), eval
(BatchNorm on random running statistics), no gradients, random weights (torch's defaults). Input
(two input sets): the image (1, 3, 224, 224) fp16, Gaussian, channels-last. Returns the class
probabilities (1, 1000).

    traceinspect profile ghostnet_1_0_imagenet_ghost_modules_se_fp16_channels_last_one_stream_b1.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import conv_input, random_batch_norm_stats
from torch import Tensor, nn

# k, exp_size, c, se_ratio, s: one list a stage
CFGS = [
    [[3, 16, 16, 0, 1]],
    [[3, 48, 24, 0, 2]],
    [[3, 72, 24, 0, 1]],
    [[5, 72, 40, 0.25, 2]],
    [[5, 120, 40, 0.25, 1]],
    [[3, 240, 80, 0, 2]],
    [[3, 200, 80, 0, 1], [3, 184, 80, 0, 1], [3, 184, 80, 0, 1], [3, 480, 112, 0.25, 1],
     [3, 672, 112, 0.25, 1]],
    [[5, 672, 160, 0.25, 2]],
    [[5, 960, 160, 0, 1], [5, 960, 160, 0.25, 1], [5, 960, 160, 0, 1], [5, 960, 160, 0.25, 1]],
]  # fmt: skip


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    new_v = max(min_value or divisor, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def hard_sigmoid(x: Tensor) -> Tensor:
    return F.relu6(x + 3.0) / 6.0


class SqueezeExcite(nn.Module):
    def __init__(self, in_chs: int, se_ratio: float) -> None:
        super().__init__()
        reduced_chs = _make_divisible(in_chs * se_ratio, 4)
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.conv_reduce = nn.Conv2d(in_chs, reduced_chs, 1, bias=True)
        self.act1 = nn.ReLU(inplace=True)
        self.conv_expand = nn.Conv2d(reduced_chs, in_chs, 1, bias=True)

    def forward(self, x: Tensor) -> Tensor:
        x_se = self.conv_expand(self.act1(self.conv_reduce(self.avg_pool(x))))
        return x * hard_sigmoid(x_se)


class ConvBnAct(nn.Sequential):
    def __init__(self, in_chs: int, out_chs: int, kernel_size: int, stride: int = 1) -> None:
        super().__init__(
            nn.Conv2d(in_chs, out_chs, kernel_size, stride, kernel_size // 2, bias=False),
            nn.BatchNorm2d(out_chs),
            nn.ReLU(inplace=True),
        )


class GhostModule(nn.Module):
    def __init__(self, inp: int, oup: int, relu: bool = True, ratio: int = 2, dw_size: int = 3):
        super().__init__()
        self.oup = oup
        init_channels = math.ceil(oup / ratio)
        new_channels = init_channels * (ratio - 1)
        self.primary_conv = nn.Sequential(
            nn.Conv2d(inp, init_channels, 1, 1, 0, bias=False),
            nn.BatchNorm2d(init_channels),
            nn.ReLU(inplace=True) if relu else nn.Identity(),
        )
        self.cheap_operation = nn.Sequential(
            nn.Conv2d(
                init_channels,
                new_channels,
                dw_size,
                1,
                dw_size // 2,
                groups=init_channels,
                bias=False,
            ),
            nn.BatchNorm2d(new_channels),
            nn.ReLU(inplace=True) if relu else nn.Identity(),
        )

    def forward(self, x: Tensor) -> Tensor:
        x1 = self.primary_conv(x)
        x2 = self.cheap_operation(x1)
        return torch.cat([x1, x2], dim=1)[:, : self.oup, :, :]


class GhostBottleneck(nn.Module):
    def __init__(self, in_chs: int, mid_chs: int, out_chs: int, dw_k: int, stride: int, se: float):
        super().__init__()
        self.stride = stride
        self.ghost1 = GhostModule(in_chs, mid_chs, relu=True)
        if stride > 1:
            self.conv_dw = nn.Conv2d(
                mid_chs, mid_chs, dw_k, stride, (dw_k - 1) // 2, groups=mid_chs, bias=False
            )
            self.bn_dw = nn.BatchNorm2d(mid_chs)
        self.se = SqueezeExcite(mid_chs, se) if se > 0 else None
        self.ghost2 = GhostModule(mid_chs, out_chs, relu=False)
        if in_chs == out_chs and stride == 1:
            self.shortcut: nn.Module = nn.Identity()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_chs, in_chs, dw_k, stride, (dw_k - 1) // 2, groups=in_chs, bias=False),
                nn.BatchNorm2d(in_chs),
                nn.Conv2d(in_chs, out_chs, 1, 1, 0, bias=False),
                nn.BatchNorm2d(out_chs),
            )

    def forward(self, x: Tensor) -> Tensor:
        residual = x
        x = self.ghost1(x)
        if self.stride > 1:
            x = self.bn_dw(self.conv_dw(x))
        if self.se is not None:
            x = self.se(x)
        x = self.ghost2(x)
        return x + self.shortcut(residual)


class GhostNet(nn.Module):
    def __init__(self, cfgs: list, classes: int, width: float = 1.0) -> None:
        super().__init__()
        output_channel = _make_divisible(16 * width, 4)
        self.conv_stem = nn.Conv2d(3, output_channel, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(output_channel)
        self.act1 = nn.ReLU(inplace=True)
        input_channel = output_channel
        stages: list[nn.Module] = []
        exp_size = 16
        for cfg in cfgs:
            layers = []
            for k, exp_size, c, se_ratio, s in cfg:
                output_channel = _make_divisible(c * width, 4)
                hidden_channel = _make_divisible(exp_size * width, 4)
                layers.append(
                    GhostBottleneck(input_channel, hidden_channel, output_channel, k, s, se_ratio)
                )
                input_channel = output_channel
            stages.append(nn.Sequential(*layers))
        output_channel = _make_divisible(exp_size * width, 4)
        stages.append(nn.Sequential(ConvBnAct(input_channel, output_channel, 1)))
        self.blocks = nn.Sequential(*stages)
        self.global_pool = nn.AdaptiveAvgPool2d((1, 1))
        self.conv_head = nn.Conv2d(output_channel, 1280, 1, 1, 0, bias=True)
        self.act2 = nn.ReLU(inplace=True)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.blocks(self.act1(self.bn1(self.conv_stem(x))))
        x = self.act2(self.conv_head(self.global_pool(x)))
        return self.classifier(x.view(x.size(0), -1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, classes, width = (1, 32, 10, 0.25) if smoke else (1, 224, 1000, 1.0)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = GhostNet(CFGS, classes, width)
    random_batch_norm_stats(model)
    model = model.to(device, dtype, memory_format=torch.channels_last).eval()

    @torch.no_grad()
    def step(image: Tensor) -> Tensor:
        return torch.softmax(model(image), dim=-1)

    inputs = conv_input(batch, image, device, dtype)
    blocks = sum(len(cfg) for cfg in CFGS)
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"GhostNet {width}x: {blocks} ghost bottlenecks, SE hard-sigmoid, {image} px, {precision} "
        f"channels-last, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
