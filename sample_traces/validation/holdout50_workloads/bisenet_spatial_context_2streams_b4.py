"""BiSeNet V1 (Yu et al., 2018) segmenting 4 Cityscapes crops of 512 x 1024 into 19 classes, its
spatial path on one side stream and its context path on another (fiftieth hold-out: a bilateral
segmentation network, a short branch of three wide high-resolution convolutions beside a long
ResNet-18 branch of many smaller kernels, the fusion and the head after the join), as the common
PyTorch BiSeNet lays it out. Side stream 1, the spatial path: ``Conv2d(3, 64, 7, stride 2)``,
``Conv2d(64, 64, 3, stride 2)``, ``Conv2d(64, 64, 3, stride 2)`` and ``Conv2d(64, 128, 1)``, each
+ BatchNorm + ReLU (the project's ``conv_bn_relu``), to (4, 128, 64, 128) at 1/8: four kernel
groups of 4 to 34 MB activations, some 11 GMAC. Side stream 2, the context path: a ResNet-18
(7 x 7 stem, max pool, four stages of two basic blocks, 64 / 128 / 256 / 512 channels, some 76
GMAC at this size), its 1/16 and 1/32 features; the 1/32 features' global average pool through a
1 x 1 ``conv_bn_relu(512, 128)`` broadcast back; per scale an attention refinement module
(``conv_bn_relu`` 3 x 3 to 128, then the map times the sigmoid of a 1 x 1 ``Conv2d(128, 128)`` +
BatchNorm of its global average pool); the 1/32 result plus the pooled context, nearest-upsampled
to 1/16 and through a 3 x 3 ``conv_bn_relu(128, 128)``, added to the 1/16 result, nearest-upsampled
to 1/8 and through another: some 60 kernels. After the join, on the current stream: the feature
fusion module (the two 128-channel maps concatenated, a 1 x 1 ``conv_bn_relu(256, 256)``, the
channel attention of its global average pool, ``Conv2d(256, 64, 1)`` + ReLU + ``Conv2d(64, 256,
1)`` + sigmoid, and feat x att + feat), the output head (a 3 x 3 ``conv_bn_relu(256, 256)``, 19
GMAC, and ``Conv2d(256, 19, 1, bias=False)``) and a bilinear upsampling by 8 to 512 x 1024
(``align_corners=False``). The training-time auxiliary heads are left out. bf16 on a GPU,
channels-last, eval mode with running batch-norm statistics set at build, no gradients. Fork and
join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). Input: the images (4, 3, 512, 1024), channels-last. Returns the logits
(4, 19, 512, 1024).

    traceinspect profile bisenet_spatial_context_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import conv_bn_relu
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, MID, UPSAMPLE = 19, 128, 8


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = conv_bn_relu(cin, cout, stride)
        self.conv2 = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.conv2(self.conv1(x)) + self.down(x))


class ResNet18(nn.Module):
    """The 1/16 and 1/32 features of a ResNet-18."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn_relu(3, width, 2, kernel=7), nn.MaxPool2d(3, 2, 1))
        chans = [width, width, 2 * width, 4 * width, 8 * width]
        self.stages = nn.ModuleList(
            nn.Sequential(
                BasicBlock(chans[i], chans[i + 1], 1 if i == 0 else 2),
                BasicBlock(chans[i + 1], chans[i + 1], 1),
            )
            for i in range(4)
        )

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = self.stem(x)
        x = self.stages[1](self.stages[0](x))
        f16 = self.stages[2](x)
        return f16, self.stages[3](f16)


class AttentionRefinement(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = conv_bn_relu(cin, cout)
        self.att = nn.Sequential(nn.Conv2d(cout, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x)
        return x * torch.sigmoid(self.att(x.mean(dim=(2, 3), keepdim=True)))


class ContextPath(nn.Module):
    def __init__(self, width: int, mid: int) -> None:
        super().__init__()
        self.backbone = ResNet18(width)
        self.arm16 = AttentionRefinement(4 * width, mid)
        self.arm32 = AttentionRefinement(8 * width, mid)
        self.head32, self.head16 = conv_bn_relu(mid, mid), conv_bn_relu(mid, mid)
        self.avg = conv_bn_relu(8 * width, mid, kernel=1)

    def forward(self, x: Tensor) -> Tensor:
        f16, f32 = self.backbone(x)
        ctx = self.avg(f32.mean(dim=(2, 3), keepdim=True))
        up32 = F.interpolate(self.arm32(f32) + ctx, size=f16.shape[2:], mode="nearest")
        up32 = self.head32(up32)
        size8 = (2 * f16.shape[2], 2 * f16.shape[3])
        return self.head16(F.interpolate(self.arm16(f16) + up32, size=size8, mode="nearest"))


class FeatureFusion(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = conv_bn_relu(cin, cout, kernel=1)
        self.att = nn.Sequential(
            nn.Conv2d(cout, cout // 4, 1, bias=False),
            nn.ReLU(),
            nn.Conv2d(cout // 4, cout, 1, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, spatial: Tensor, context: Tensor) -> Tensor:
        feat = self.conv(torch.cat([spatial, context], dim=1))
        return feat * self.att(feat.mean(dim=(2, 3), keepdim=True)) + feat


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width, base = (1, 64, 128, 8) if smoke else (4, 512, 1024, 64)
    mid = base * 2
    dtype = low_precision(device)
    fmt = torch.channels_last
    spatial = nn.Sequential(
        conv_bn_relu(3, base, 2, kernel=7),
        conv_bn_relu(base, base, 2),
        conv_bn_relu(base, base, 2),
        conv_bn_relu(base, mid, kernel=1),
    )
    context = ContextPath(base, mid)
    ffm = FeatureFusion(2 * mid, 4 * base)
    head = nn.Sequential(
        conv_bn_relu(4 * base, 4 * base), nn.Conv2d(4 * base, CLASSES, 1, bias=False)
    )
    net = nn.ModuleList([spatial, context, ffm, head])
    random_batch_norm_stats(net)
    net = net.to(device=device, dtype=dtype, memory_format=fmt).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        sp, ctx = fork_join(device, streams, [lambda: spatial(images), lambda: context(images)])
        logits = head(ffm(sp, ctx))
        return F.interpolate(logits, scale_factor=UPSAMPLE, mode="bilinear", align_corners=False)

    inputs = [
        (torch.randn(batch, 3, height, width, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    description = (
        f"BiSeNet V1: spatial path beside ResNet-18 context path, {height}x{width}, "
        f"{CLASSES} classes, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
