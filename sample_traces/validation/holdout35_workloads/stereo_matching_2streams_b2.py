"""Stereo depth with the two feature towers on two side streams and a correlation cost volume
after the join (thirty-fifth hold-out): 2 stereo pairs of 3 x 256 x 512, bf16 on a GPU, eval
mode, no gradients. One shared-weight conv feature tower: 4 blocks of ``Conv2d(3 x 3,
padding 1, bias=False)`` + BatchNorm (eval, running statistics set at build) + ReLU, 3 -> 32
-> 32 -> 64 -> 64 channels, stride 2 on the first two, 256 x 512 -> 64 x 128 (1/4
resolution). The tower runs on the left image on one side stream and on the right image on
the other, both forked from the current stream and joined back with the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: a correlation cost volume over 48
disparities, a Python loop of 48 slices: for disparity d, the left features from column d on
times the right features shifted by d, the mean over the 64 channels, zero-padded back to 128
columns on the left (``F.pad``); stacked to (2, 48, 64, 128). Then the aggregation:
``Conv2d(48, 32, 3, padding 1)`` + ReLU, ``Conv2d(32, 32, 3, padding 1)`` + ReLU,
``Conv2d(32, 48, 3, padding 1)``, a softmax over the 48 disparities (in fp32) and the
soft-argmin, the sum of d times its probability. On a CPU the towers run in order. Inputs:
left and right images (2, 3, 256, 512). Returns the (2, 64, 128) disparity map (fp32, in
1/4-resolution pixels).

    traceinspect profile stereo_matching_2streams_b2.py
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

TOWER = (3, 32, 32, 64, 64)
STRIDES = (2, 2, 1, 1)


def cost_volume(left: Tensor, right: Tensor, disparities: int) -> Tensor:
    """(b, c, h, w) features -> (b, disparities, h, w) correlation, zero where d runs off."""
    costs = [(left * right).mean(dim=1)]
    for d in range(1, disparities):
        corr = (left[..., d:] * right[..., :-d]).mean(dim=1)  # (b, h, w - d)
        costs.append(F.pad(corr, (d, 0)))
    return torch.stack(costs, dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width, disparities, agg = (2, 32, 64, 8, 16) if smoke else (2, 256, 512, 48, 32)
    dtype = low_precision(device)
    blocks: list[nn.Module] = []
    for (cin, cout), stride in zip(pairwise(TOWER), STRIDES, strict=True):
        blocks += [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    tower = nn.Sequential(*blocks)
    random_batch_norm_stats(tower)
    aggregate = nn.Sequential(
        nn.Conv2d(disparities, agg, 3, padding=1), nn.ReLU(),
        nn.Conv2d(agg, agg, 3, padding=1), nn.ReLU(),
        nn.Conv2d(agg, disparities, 3, padding=1),
    )  # fmt: skip
    model = nn.ModuleList([tower, aggregate]).to(device, dtype).eval()
    levels = torch.arange(disparities, device=device, dtype=torch.float32).view(1, -1, 1, 1)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(left: Tensor, right: Tensor) -> Tensor:
        fl, fr = fork_join(device, streams, [lambda: tower(left), lambda: tower(right)])
        scores = aggregate(cost_volume(fl, fr, disparities))  # (b, disparities, h / 4, w / 4)
        probs = scores.float().softmax(dim=1)
        return (probs * levels).sum(dim=1)  # soft-argmin

    inputs = [
        tuple(torch.randn(batch, 3, height, width, device=device, dtype=dtype) for _ in range(2))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"stereo: shared conv tower on left / right on 2 side streams + {disparities}-disparity "
        f"correlation volume + aggregation, b{batch} at {height}x{width}",
        [model, levels],
    )


if __name__ == "__main__":
    main(build, __doc__)
