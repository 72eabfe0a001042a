"""Lite-HRNet-18 (Yu, Xiao, Gao, Xu, Zeng, Yu and Wang, CVPR 2021: a lightweight high-resolution
network for human pose estimation, HRNet's parallel multi-resolution branches with shuffle blocks
whose 1 x 1 convolutions are replaced by conditional channel weighting) estimating the 17 COCO
keypoints' heatmaps of 16 person crops of 256 x 192, each module's per-branch work on up to three
side streams (sixty-fourth hold-out: fp16, some 27 program fork / joins a step: the stem on the
current stream; then in each of the 8 Lite-HR modules of the three stages (2, 4 and 2 modules of 2,
3 and 4 branches of 40, 80, 160 and 320 channels at 64 x 48, 32 x 24, 16 x 12 and 8 x 6) two
conditional channel weighting blocks, each the cross-resolution weighting on the current stream
(every branch's half of the channels average-pooled to the lowest resolution, concatenated, a 1 x 1
convolution with BatchNorm and ReLU, one with BatchNorm and a sigmoid, split and upsampled nearest
back to each branch as its weights) and then, forked per branch on a side stream of its own (the
fourth branch beside the third on the third stream), the weighting's product, the 3 x 3 depthwise
convolution and its BatchNorm, the spatial weighting (the global pool, a 1 x 1 convolution with
ReLU, one with a sigmoid, the product), the concatenation with the other half and the channel
shuffle; after the blocks the module's fuse layers, each output branch's sum of the others' 1 x 1
convolution, BatchNorm and nearest upsample or depthwise-separable strided downsamples, and the
ReLU, forked the same way per output branch; the stages' transitions to a new branch forked per
branch too; the iterative head on the current stream (from the lowest resolution up, the bilinear
upsample, the add and a depthwise-separable convolution) and the ``Conv2d(40, 17, 1)`` to the
heatmaps; so each side stream runs some 10 to 30 kernels a fork, nearly all of a few microseconds
(the largest tensors the stem's (16, 32, 128, 96), 12.6 MB), some 1,100 kernels in all, some 1 to 4
ms of GPU time, 0.4 GFLOP (0.2 G multiply-adds) an image). Laid out as HRNet/Lite-HRNet's
``litehrnet.py`` with the ``litehrnet_18_coco_256x192`` config (``stem_channels 32, out_channels 32,
expand_ratio 1``; ``num_modules (2, 4, 2)``, ``num_branches (2, 3, 4)``, ``num_blocks (2, 2, 2)``,
``module_type ('LITE',) * 3``, ``with_fuse True``, ``reduce_ratios (8, 8, 8)``, ``num_channels ((40,
80), (40, 80, 160), (40, 80, 160, 320))``, ``with_head True``: its ``Stem``,
``CrossResolutionWeighting``, ``SpatialWeighting(ratio 4)``, ``ConditionalChannelWeighting``,
``LiteHRModule`` and its fuse layers as HRNet's, ``_make_transition_layer`` with depthwise-separable
convolutions, ``IterativeHead``; then mmpose's ``TopdownHeatmapSimpleHead`` with no deconvolutions
and a 1 x 1 final convolution), flip testing off, and the cross-resolution weighting's product with
each branch moved onto that branch's side stream. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). fp16 weights and
activations on a GPU (fp32 on a CPU), eval (the BatchNorms on random running statistics), no
gradients, random weights (torch's defaults). Input (two input sets): the crops (16, 3, 256, 192)
fp16, Gaussian. Returns the heatmaps (16, 17, 64, 48).

    traceinspect profile lite_hrnet18_coco_pose_ccw_branches_fp16_3streams_b16.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

NUM_MODULES, NUM_BLOCKS, REDUCE_RATIO, JOINTS = (2, 4, 2), 2, 8, 17
CHANNELS = ((40, 80), (40, 80, 160), (40, 80, 160, 320))
Streams = Sequence[torch.cuda.Stream]


def conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, act: bool = True):
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


def dw_sep(cin: int, cout: int, stride: int = 1, act: bool = True) -> nn.Sequential:
    """A 3 x 3 depthwise conv-BN (no activation), then a 1 x 1 conv-BN (ReLU unless ``act``)."""
    return nn.Sequential(
        conv_bn(cin, cin, 3, stride, cin, act=False), conv_bn(cin, cout, 1, act=act)
    )


def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).contiguous().view(b, c, h, w)


def per_branch(
    device: torch.device, streams: Streams, count: int, fn: Callable[[int], Tensor]
) -> list[Tensor]:
    """``fn(i)`` for the ``count`` branches, branch i on side stream min(i, 2): the fourth beside
    the third."""
    lanes = [[i] for i in range(min(count, 3))]
    lanes[-1] += list(range(3, count))
    outs = fork_join(
        device,
        streams[: len(lanes)],
        [lambda lane=lane: tuple(fn(i) for i in lane) for lane in lanes],
    )
    return [t for lane in outs for t in lane]


class Stem(nn.Module):
    def __init__(self, stem: int) -> None:
        super().__init__()
        self.conv1 = conv_bn(3, stem, 3, 2)
        half, mid = stem // 2, stem  # expand_ratio 1
        self.branch1 = nn.Sequential(
            conv_bn(half, half, 3, 2, half, act=False), conv_bn(half, half, 1)
        )
        self.expand_conv = conv_bn(half, mid, 1)
        self.depthwise_conv = conv_bn(mid, mid, 3, 2, mid, act=False)
        self.linear_conv = conv_bn(mid, half, 1)

    def forward(self, x: Tensor) -> Tensor:
        x1, x2 = self.conv1(x).chunk(2, dim=1)
        x2 = self.linear_conv(self.depthwise_conv(self.expand_conv(x2)))
        return channel_shuffle(torch.cat((self.branch1(x1), x2), dim=1), 2)


class CrossResolutionWeighting(nn.Module):
    def __init__(self, channels: Sequence[int]) -> None:
        super().__init__()
        self.channels = list(channels)
        total = sum(channels)
        self.conv1 = conv_bn(total, total // REDUCE_RATIO, 1)
        self.conv2 = nn.Sequential(
            nn.Conv2d(total // REDUCE_RATIO, total, 1, bias=False), nn.BatchNorm2d(total)
        )

    def forward(self, xs: Sequence[Tensor]) -> list[Tensor]:
        mini = xs[-1].shape[-2:]
        out = torch.cat([F.adaptive_avg_pool2d(s, mini) for s in xs[:-1]] + [xs[-1]], dim=1)
        out = torch.sigmoid(self.conv2(self.conv1(out)))
        return [
            F.interpolate(a, size=s.shape[-2:], mode="nearest")
            for s, a in zip(xs, out.split(self.channels, dim=1), strict=True)
        ]


class SpatialWeighting(nn.Module):
    def __init__(self, channels: int, ratio: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels // ratio, 1)
        self.conv2 = nn.Conv2d(channels // ratio, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        w = F.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.conv2(torch.relu(self.conv1(w))))


class ConditionalChannelWeighting(nn.Module):
    def __init__(self, channels: Sequence[int]) -> None:
        super().__init__()
        halves = [c // 2 for c in channels]
        self.cross_resolution_weighting = CrossResolutionWeighting(halves)
        self.depthwise_convs = nn.ModuleList(conv_bn(c, c, 3, 1, c, act=False) for c in halves)
        self.spatial_weighting = nn.ModuleList(SpatialWeighting(c) for c in halves)

    def forward(self, xs: list[Tensor], device: torch.device, streams: Streams) -> list[Tensor]:
        halves = [x.chunk(2, dim=1) for x in xs]
        x2 = [h[1] for h in halves]
        weights = self.cross_resolution_weighting(x2)

        def branch(i: int) -> Tensor:
            y = self.spatial_weighting[i](self.depthwise_convs[i](x2[i] * weights[i]))
            return channel_shuffle(torch.cat((halves[i][0], y), dim=1), 2)

        return per_branch(device, streams, len(xs), branch)


class LiteHRModule(nn.Module):
    def __init__(self, channels: Sequence[int]) -> None:
        super().__init__()
        n = len(channels)
        self.blocks = nn.ModuleList(
            ConditionalChannelWeighting(channels) for _ in range(NUM_BLOCKS)
        )
        self.fuse_layers = nn.ModuleList()
        for i in range(n):
            row = nn.ModuleList()
            for j in range(n):
                if j > i:
                    row.append(
                        nn.Sequential(
                            nn.Conv2d(channels[j], channels[i], 1, bias=False),
                            nn.BatchNorm2d(channels[i]),
                            nn.Upsample(scale_factor=2 ** (j - i), mode="nearest"),
                        )
                    )
                elif j == i:
                    row.append(nn.Identity())
                else:
                    downs = [dw_sep(channels[j], channels[j], 2) for _ in range(i - j - 1)]
                    downs.append(dw_sep(channels[j], channels[i], 2, act=False))
                    row.append(nn.Sequential(*downs))
            self.fuse_layers.append(row)

    def forward(self, xs: list[Tensor], device: torch.device, streams: Streams) -> list[Tensor]:
        for block in self.blocks:
            xs = block(xs, device, streams)

        def fuse(i: int) -> Tensor:
            layers = self.fuse_layers[i]
            y = xs[0] if i == 0 else layers[0](xs[0])
            for j in range(1, len(xs)):
                y = y + (xs[j] if i == j else layers[j](xs[j]))
            return torch.relu(y)

        return per_branch(device, streams, len(xs), fuse)


class Transition(nn.Module):
    def __init__(self, pre: Sequence[int], cur: Sequence[int]) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        for i, c in enumerate(cur):
            if i < len(pre):
                self.layers.append(dw_sep(pre[i], c) if pre[i] != c else nn.Identity())
            else:
                downs = [dw_sep(pre[-1], pre[-1], 2) for _ in range(i - len(pre))]
                downs.append(dw_sep(pre[-1], c, 2))
                self.layers.append(nn.Sequential(*downs))

    def forward(self, xs: list[Tensor], device: torch.device, streams: Streams) -> list[Tensor]:
        n_pre = len(xs)
        return per_branch(
            device,
            streams,
            len(self.layers),
            lambda i: self.layers[i](xs[min(i, n_pre - 1)]),
        )


class IterativeHead(nn.Module):
    def __init__(self, channels: Sequence[int]) -> None:
        super().__init__()
        rev = list(channels)[::-1]
        outs = rev[1:] + rev[-1:]
        self.projects = nn.ModuleList(dw_sep(c, o) for c, o in zip(rev, outs, strict=True))

    def forward(self, xs: list[Tensor]) -> list[Tensor]:
        ys, last = [], None
        for s, project in zip(xs[::-1], self.projects, strict=True):
            if last is not None:
                s = s + F.interpolate(last, size=s.shape[-2:], mode="bilinear", align_corners=True)
            last = project(s)
            ys.append(last)
        return ys[::-1]


class LiteHRNet(nn.Module):
    def __init__(self, stem: int, channels: Sequence[Sequence[int]], modules: Sequence[int]):
        super().__init__()
        self.stem = Stem(stem)
        pre: Sequence[int] = (stem,)
        self.transitions = nn.ModuleList()
        self.stages = nn.ModuleList()
        for chans, count in zip(channels, modules, strict=True):
            self.transitions.append(Transition(pre, chans))
            self.stages.append(nn.ModuleList(LiteHRModule(chans) for _ in range(count)))
            pre = chans
        self.head = IterativeHead(pre)
        self.final = nn.Conv2d(pre[0], JOINTS, 1)

    def forward(self, x: Tensor, device: torch.device, streams: Streams) -> Tensor:
        xs = [self.stem(x)]
        for transition, stage in zip(self.transitions, self.stages, strict=True):
            xs = transition(xs, device, streams)
            for module in stage:
                xs = module(xs, device, streams)
        return self.final(self.head(xs)[0])


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, height, width, stem = 2, 128, 64, 8
        channels: Sequence[Sequence[int]] = ((8, 16), (8, 16, 16), (8, 16, 16, 32))
        modules: Sequence[int] = (1, 1, 1)
    else:
        batch, height, width, stem, channels, modules = 16, 256, 192, 32, CHANNELS, NUM_MODULES
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = LiteHRNet(stem, channels, modules)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(crops: Tensor) -> Tensor:
        return model(crops, device, streams)

    inputs = [(torch.randn(batch, 3, height, width, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Lite-HRNet-18: {sum(modules)} Lite-HR modules {modules}, branches {channels[-1]}, "
        f"per-branch CCW / fuse / transition work on up to 3 side streams, {height}x{width}, "
        f"{precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
