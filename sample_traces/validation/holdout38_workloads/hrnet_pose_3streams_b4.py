"""A cut-down HRNet-W32 pose estimator (Sun et al., 2019, laid out as the reference
``PoseHighResolutionNet``) with its three parallel resolution branches on three side streams
in two fork / join rounds and the multi-resolution fusion after each join (thirty-eighth
hold-out): 4 person crops of 3 x 256 x 192, 17 keypoints, bf16 on a GPU (the soft-argmax in
fp32), eval mode, no gradients. Every convolution below is ``Conv2d(bias=False)`` +
BatchNorm (eval, running statistics set at build). On the current stream the stem, two 3 x 3
/ 2 convolutions 3 -> 64 -> 64 + ReLU (to 64 x 48), and stage 1 cut to one bottleneck (1 x 1
64 -> 64, 3 x 3, 1 x 1 -> 256, a 1 x 1 projection shortcut, the add and a ReLU). Round 1,
forked onto three side streams, each branch its transition and then 2 BasicBlocks (two 3 x 3
convolutions, ReLU between, the residual add and a ReLU): branch 0 a 3 x 3 256 -> 32 + ReLU
at 64 x 48, branch 1 a 3 x 3 / 2 256 -> 64 + ReLU at 32 x 24, branch 2 a 3 x 3 / 2 256 -> 64 +
ReLU and a 3 x 3 / 2 64 -> 128 + ReLU at 16 x 12. Join; on the current stream HRNet's fuse
layer to all three resolutions: output i is the ReLU of the sum over branches j of x_j itself
(j = i), a 1 x 1 convolution to i's width and a nearest upsampling by 2^(j - i) (j > i), or
i - j 3 x 3 / 2 convolutions (those before the last keeping j's width, with a ReLU; the last
to i's width, without) (j < i). Round 2, forked again: 2 more BasicBlocks per branch on its
own side stream. Join; the last fuse to the highest resolution only (as the final module with
``multi_scale_output=False``), then the head ``Conv2d(32, 17, 1)`` to the (4, 17, 64, 48)
heatmaps and, in fp32, the soft-argmax: a softmax over the 3,072 positions of each heatmap
and the expected x and y over a coordinate grid (made at build) in input pixels. Joins are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). On a CPU the branches run in order. Input: the crops (4, 3, 256, 192). Returns the
heatmaps (4, 17, 64, 48) and the keypoints (4, 17, 2), fp32.

    traceinspect profile hrnet_pose_3streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS_PER_ROUND, STEM_STRIDE = 2, 4


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, relu: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if relu:
        layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class BasicBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = conv_bn(c, c, 3)
        self.conv2 = conv_bn(c, c, 3, relu=False)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.conv2(self.conv1(x)) + x)


class Bottleneck(nn.Module):
    def __init__(self, cin: int, mid: int, cout: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            conv_bn(cin, mid, 1), conv_bn(mid, mid, 3), conv_bn(mid, cout, 1, relu=False)
        )
        self.shortcut = conv_bn(cin, cout, 1, relu=False)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.body(x) + self.shortcut(x))


def transition(cin: int, widths: tuple[int, ...], i: int) -> nn.Sequential:
    """Stage 1's output to branch i: one 3 x 3 (stride 2 from branch 1 on) per halving."""
    if i == 0:
        return conv_bn(cin, widths[0], 3)
    layers: list[nn.Module] = []
    c = cin
    for k in range(i):
        cout = widths[k + 1]
        layers.append(conv_bn(c, cout, 3, 2))
        c = cout
    return nn.Sequential(*layers)


class Fuse(nn.Module):
    """HRNet's fuse layers from every branch to each of ``outputs`` resolutions."""

    def __init__(self, widths: tuple[int, ...], outputs: int) -> None:
        super().__init__()
        self.paths = nn.ModuleList()
        for i in range(outputs):
            row = nn.ModuleList()
            for j, cj in enumerate(widths):
                if j == i:
                    row.append(nn.Identity())
                elif j > i:
                    row.append(
                        nn.Sequential(
                            conv_bn(cj, widths[i], 1, relu=False),
                            nn.Upsample(scale_factor=2 ** (j - i), mode="nearest"),
                        )
                    )
                else:
                    downs = [conv_bn(cj, cj, 3, 2) for _ in range(i - j - 1)]
                    downs.append(conv_bn(cj, widths[i], 3, 2, relu=False))
                    row.append(nn.Sequential(*downs))
            self.paths.append(row)

    def forward(self, xs: list[Tensor]) -> list[Tensor]:
        outs = []
        for row in self.paths:
            y = row[0](xs[0])
            for path, x in zip(row[1:], xs[1:], strict=True):
                y = y + path(x)
            outs.append(F.relu(y))
        return outs


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width, widths, stem_w, keypoints = (
        (1, 64, 48, (8, 16, 32), 16, 5) if smoke else (4, 256, 192, (32, 64, 128), 64, 17)
    )
    dtype = low_precision(device)
    stem = nn.Sequential(
        conv_bn(3, stem_w, 3, 2), conv_bn(stem_w, stem_w, 3, 2),
        Bottleneck(stem_w, stem_w, 4 * stem_w),
    )  # fmt: skip
    round1 = nn.ModuleList(
        nn.Sequential(
            transition(4 * stem_w, widths, i), *(BasicBlock(c) for _ in range(BLOCKS_PER_ROUND))
        )
        for i, c in enumerate(widths)
    )
    fuse1 = Fuse(widths, len(widths))
    round2 = nn.ModuleList(
        nn.Sequential(*(BasicBlock(c) for _ in range(BLOCKS_PER_ROUND))) for c in widths
    )
    fuse2 = Fuse(widths, 1)
    head = nn.Conv2d(widths[0], keypoints, 1)
    model = nn.ModuleList([stem, round1, fuse1, round2, fuse2, head])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    h, w = height // STEM_STRIDE, width // STEM_STRIDE
    ys, xs = torch.meshgrid(
        torch.arange(h, device=device, dtype=torch.float32) * STEM_STRIDE,
        torch.arange(w, device=device, dtype=torch.float32) * STEM_STRIDE,
        indexing="ij",
    )
    grid = torch.stack([xs.flatten(), ys.flatten()], dim=-1)  # (h w, 2): x, y in input pixels
    streams = side_streams(device, len(widths))

    def branches(mods: nn.ModuleList, xs: list[Tensor]) -> list[Tensor]:
        return fork_join(
            device, streams, [lambda m=m, x=x: m(x) for m, x in zip(mods, xs, strict=True)]
        )

    @torch.no_grad()
    def step(images: Tensor) -> tuple[Tensor, Tensor]:
        x = stem(images)
        feats = fuse1(branches(round1, [x] * len(widths)))
        (top,) = fuse2(branches(round2, feats))
        heatmaps = head(top).float()  # (b, keypoints, h, w)
        probs = heatmaps.flatten(2).softmax(dim=-1)
        return heatmaps, probs @ grid  # (b, keypoints, 2)

    inputs = [(torch.randn(batch, 3, height, width, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"HRNet pose, branches {'/'.join(map(str, widths))} on {len(widths)} side streams in "
        f"2 fork/join rounds + multi-resolution fuses + soft-argmax, b{batch} at {height}x{width}",
        [model, grid],
    )


if __name__ == "__main__":
    main(build, __doc__)
