"""A cascaded segmentation step with two fork / join rounds on two side streams (thirty-fifth
hold-out): 4 images of 3 x 256 x 256, 19 classes, bf16 on a GPU, eval mode, no gradients.
Every conv block below is ``Conv2d(3 x 3, padding 1, bias=False)`` + BatchNorm (eval, running
statistics set at build) + ReLU. Round 1, forked from the current stream: on one side stream
the coarse net reads the half-resolution image (``F.avg_pool2d`` by 2, 128 x 128) through
blocks 3 -> 32 (stride 2) -> 64 (stride 2) -> 64 and a 1 x 1 ``Conv2d(64, 19)``, coarse
logits at 32 x 32; on the other the feature extractor reads the full-resolution image through
blocks 3 -> 16 -> 32 (stride 2) -> 32 -> 32 (stride 2), features at 64 x 64. Join; on the
current stream the coarse logits are upsampled x 2 (bilinear, align_corners=False) to 64 x 64,
concatenated with the features (19 + 32 channels) and refined by blocks 51 -> 64 -> 64. Round
2, forked again, both reading the round-1 output: on one side stream a second refinement,
blocks 64 -> 64 -> 64 and a 1 x 1 ``Conv2d(64, 19)``; on the other a boundary head, a block
64 -> 32, a 1 x 1 ``Conv2d(32, 1)`` and a sigmoid. Join; on the current stream the fusion: a
``Conv2d(20, 19, 3 x 3, padding 1)`` over the concat of the refined logits and the boundary
map, a bilinear upsampling x 4 to 256 x 256 and a softmax over the 19 classes (in fp32).
Joins are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). On a CPU the branches run in order. Input: images (4, 3, 256, 256).
Returns the (4, 19, 256, 256) class probabilities (fp32).

    traceinspect profile cascade_refine_2rounds_2streams_b4.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES = 19


def blocks(widths: tuple[int, ...], strides: tuple[int, ...]) -> list[nn.Module]:
    layers: list[nn.Module] = []
    for (cin, cout), stride in zip(pairwise(widths), strides, strict=True):
        layers += [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    return layers


def up(x: Tensor, factor: int) -> Tensor:
    return F.interpolate(x, scale_factor=factor, mode="bilinear", align_corners=False)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, w = (2, 32, 8) if smoke else (4, 256, 16)  # w: the narrowest width
    dtype = low_precision(device)
    coarse = nn.Sequential(
        *blocks((3, 2 * w, 4 * w, 4 * w), (2, 2, 1)), nn.Conv2d(4 * w, CLASSES, 1)
    )
    features = nn.Sequential(*blocks((3, w, 2 * w, 2 * w, 2 * w), (1, 2, 1, 2)))
    refine1 = nn.Sequential(*blocks((CLASSES + 2 * w, 4 * w, 4 * w), (1, 1)))
    refine2 = nn.Sequential(*blocks((4 * w, 4 * w, 4 * w), (1, 1)), nn.Conv2d(4 * w, CLASSES, 1))
    boundary = nn.Sequential(*blocks((4 * w, 2 * w), (1,)), nn.Conv2d(2 * w, 1, 1), nn.Sigmoid())
    fuse = nn.Conv2d(CLASSES + 1, CLASSES, 3, padding=1)
    model = nn.ModuleList([coarse, features, refine1, refine2, boundary, fuse])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        logits, feats = fork_join(
            device, streams, [lambda: coarse(F.avg_pool2d(images, 2)), lambda: features(images)]
        )  # round 1: 1/8 and 1/4 resolution
        r1 = refine1(torch.cat([up(logits, 2), feats], dim=1))
        refined, edges = fork_join(device, streams, [lambda: refine2(r1), lambda: boundary(r1)])
        fused = fuse(torch.cat([refined, edges], dim=1))  # round 2 at 1/4 resolution
        return up(fused, 4).float().softmax(dim=1)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"cascaded segmentation, 2 fork/join rounds on 2 side streams (coarse / features, "
        f"refine / boundary), b{batch} at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
