"""A multi-task dense-prediction network on NYUD-v2 (semantic segmentation of 40 classes, depth,
surface normals and edges from one indoor image, the task set of the multi-task surveys' NYUD
benchmark, Vandenhende et al., TPAMI 2021) predicting all four for 2 images of 480 x 640 with one
shared ResNet-18 encoder and four heads that read it at different resolutions, upsample and
concatenate (sixty-fourth hold-out: one stream, bf16, eval: the encoder's 7 x 7 / 2 stem, max pool
and 8 basic blocks of 64 to 512 channels, 120 x 160 to 15 x 20; the segmentation head a DeepLab-v3+
decoder at 1/4 (an ASPP of a 1 x 1 branch, three 3 x 3 branches dilated 3, 6 and 9 and an image-pool
branch over the 1/32 features, 128 channels each, their concatenation and 1 x 1 projection, the x8
bilinear upsample, the concatenation with the 1/4 features projected to 48 channels, two 3 x 3
convolutions of 128 and the 1 x 1 classifier to 40 classes), the logits upsampled x4 to 480 x 640
and the per-pixel argmax; the depth head a U-Net-like top-down decoder to 1/2 (from the 1/32
features, four rounds of a x2 bilinear upsample, the concatenation with the encoder's features of
that resolution and a 3 x 3 convolution, 128 to 32 channels, then a 1 x 1 convolution and a sigmoid
times 10 m), upsampled x2; the surface-normal head a hypercolumn at 1/4 (the 1/8, 1/16 and 1/32
features each projected to 64 channels and upsampled, concatenated with the 1/4 features, a 3 x 3
convolution of 64 and a 1 x 1 to 3), upsampled x4 and L2-normalised; the edge head HED-like (Xie and
Tu, 2015: a 1 x 1 side output of one channel from each of the 1/2, 1/4, 1/8 and 1/16 features, each
upsampled to 480 x 640, their concatenation, a 1 x 1 fuse and a sigmoid); every convolution of the
other three heads but their last followed by an eval BatchNorm and a ReLU; some 160 kernels, cuDNN
convolutions beside many memory-bound upsamples and concatenations, the largest tensor the
segmentation logits at full resolution (2, 40, 480, 640), 49 MB; some 108 GFLOP, some 1.5 to 4 ms of
GPU time). The encoder is laid out as torchvision's ``resnet18`` (without its pool and ``fc``); the
heads' layout and widths are this set's, after DeepLab-v3+ (Chen et al., 2018; ASPP rates halved for
output stride 32, as DeepLab halves them from 16 to 8 the other way), the hypercolumn heads of the
multi-task literature and HED's side outputs and fuse. bf16 weights and activations on a GPU (fp32
on a CPU), eval (the BatchNorms on random running statistics), no gradients, random weights (torch's
defaults). Input (two input sets): the images (2, 3, 480, 640) bf16, Gaussian. Returns the
segmentation labels (2, 480, 640) int64, the depth (2, 1, 480, 640), the unit normals (2, 3, 480,
640) and the edge probabilities (2, 1, 480, 640).

    traceinspect profile nyud_mtl_resnet18_seg_depth_normals_edge_heads_bf16_one_stream_b2.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

CLASSES, ASPP_RATES, MAX_DEPTH = 40, (3, 6, 9), 10.0


def cbr(cin: int, cout: int, k: int = 3, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, 1, dilation * (k // 2), dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def up(x: Tensor, size: Sequence[int]) -> Tensor:
    return F.interpolate(x, size=tuple(size), mode="bilinear", align_corners=False)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            if stride != 1 or cin != cout
            else None
        )

    def forward(self, x: Tensor) -> Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return torch.relu(out + identity)


class ResNet18Encoder(nn.Module):
    def __init__(self, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU()
        )
        self.pool = nn.MaxPool2d(3, 2, 1)
        cin, stages = widths[0], []
        for i, w in enumerate(widths):
            stages.append(
                nn.Sequential(BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w, 1))
            )
            cin = w
        self.stages = nn.ModuleList(stages)

    def forward(self, x: Tensor) -> list[Tensor]:
        feats = [self.stem(x)]  # 1/2
        x = self.pool(feats[0])
        for stage in self.stages:
            x = stage(x)
            feats.append(x)  # 1/4, 1/8, 1/16, 1/32
        return feats


class SegHead(nn.Module):
    """DeepLab-v3+ decoder: ASPP over 1/32, fused with the 1/4 features."""

    def __init__(self, c4: int, c32: int, width: int) -> None:
        super().__init__()
        self.aspp = nn.ModuleList(
            [cbr(c32, width, 1)] + [cbr(c32, width, 3, r) for r in ASPP_RATES]
        )
        self.image_pool = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(c32, width, 1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.project = cbr(width * (len(ASPP_RATES) + 2), width, 1)
        self.low = cbr(c4, 48, 1)
        self.decode = nn.Sequential(cbr(width + 48, width), cbr(width, width))
        self.classifier = nn.Conv2d(width, CLASSES, 1)

    def forward(self, f4: Tensor, f32: Tensor) -> Tensor:
        pooled = self.image_pool(f32).expand(-1, -1, *f32.shape[-2:])
        x = self.project(torch.cat([b(f32) for b in self.aspp] + [pooled], dim=1))
        x = torch.cat((up(x, f4.shape[-2:]), self.low(f4)), dim=1)
        return self.classifier(self.decode(x))


class DepthHead(nn.Module):
    """Top-down from 1/32 to 1/2: upsample, concatenate the skip, 3 x 3 convolution."""

    def __init__(self, widths: tuple[int, ...], outs: tuple[int, ...]) -> None:
        super().__init__()
        self.reduce = cbr(widths[-1], outs[0], 1)
        skips = widths[-2::-1]  # 1/16, 1/8, 1/4, 1/2 channels
        self.fuse = nn.ModuleList(
            cbr(cin + skip, cout)
            for cin, skip, cout in zip(outs[:-1], skips, outs[1:], strict=True)
        )
        self.out = nn.Conv2d(outs[-1], 1, 1)

    def forward(self, feats: list[Tensor]) -> Tensor:
        x = self.reduce(feats[-1])
        for fuse, skip in zip(self.fuse, feats[-2::-1], strict=True):
            x = fuse(torch.cat((up(x, skip.shape[-2:]), skip), dim=1))
        return torch.sigmoid(self.out(x)) * MAX_DEPTH


class NormalsHead(nn.Module):
    """A hypercolumn at 1/4: 1/8, 1/16, 1/32 projected and upsampled beside the 1/4 features."""

    def __init__(self, widths: tuple[int, ...], width: int) -> None:
        super().__init__()
        self.proj = nn.ModuleList(cbr(c, width, 1) for c in widths[2:])
        self.fuse = cbr(widths[1] + width * len(self.proj), width)
        self.out = nn.Conv2d(width, 3, 1)

    def forward(self, feats: list[Tensor]) -> Tensor:
        f4 = feats[1]
        cols = [f4] + [up(p(f), f4.shape[-2:]) for p, f in zip(self.proj, feats[2:], strict=True)]
        return self.out(self.fuse(torch.cat(cols, dim=1)))


class EdgeHead(nn.Module):
    """HED: a one-channel side output per level, upsampled to the image, fused."""

    def __init__(self, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.sides = nn.ModuleList(nn.Conv2d(c, 1, 1) for c in widths)
        self.fuse = nn.Conv2d(len(widths), 1, 1)

    def forward(self, feats: list[Tensor], size: Sequence[int]) -> Tensor:
        sides = [up(s(f), size) for s, f in zip(self.sides, feats, strict=True)]
        return torch.sigmoid(self.fuse(torch.cat(sides, dim=1)))


class MultiTaskNet(nn.Module):
    def __init__(self, widths: tuple[int, ...], head: int) -> None:
        super().__init__()
        self.encoder = ResNet18Encoder(widths)
        levels = (widths[0], *widths)  # channels at 1/2, 1/4, 1/8, 1/16, 1/32
        self.seg = SegHead(widths[0], widths[-1], head)
        self.depth = DepthHead(levels, (head, head, head // 2, head // 2, head // 4))
        self.normals = NormalsHead(levels, head // 2)
        self.edges = EdgeHead(levels[:4])

    def forward(self, images: Tensor) -> tuple[Tensor, ...]:
        size = images.shape[-2:]
        feats = self.encoder(images)
        seg = up(self.seg(feats[1], feats[-1]), size).argmax(dim=1)
        depth = up(self.depth(feats), size)
        normals = F.normalize(up(self.normals(feats), size), dim=1)
        edges = self.edges(feats[:4], size)
        return seg, depth, normals, edges


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, height, width, widths, head = 1, 64, 96, (8, 8, 16, 16), 16
    else:
        batch, height, width, widths, head = 2, 480, 640, (64, 128, 256, 512), 128
    dtype = low_precision(device)
    model = MultiTaskNet(widths, head)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> tuple[Tensor, ...]:
        return model(images)

    inputs = [(torch.randn(batch, 3, height, width, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"NYUD multi-task: ResNet-18 encoder {widths} + seg (DeepLab-v3+, 1/4) / depth (1/2) / "
        f"normals (1/4) / edge (HED) heads, {height}x{width}, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
