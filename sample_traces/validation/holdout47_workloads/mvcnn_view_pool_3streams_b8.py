"""A multi-view CNN (MVCNN-style) classifying 8 objects from 3 rendered views, one view per
side stream (forty-seventh hold-out: the same weights run on three streams at once, joined by
an element-wise max over views): each view is a batch of 8 RGB images of 224 x 224,
channels-last, through one shared CNN of five convolution + BatchNorm + ReLU units (3x3,
3 -> 32 -> 64 -> 128 -> 256 channels at stride 2, then 256 -> 256 at stride 1, ending at 14 x
14) and a global average pool to 256 features. After the join the three views' features are
max-pooled (``amax`` over a stacked view axis) and classified by ``Linear(256, 512)`` + ReLU
+ ``Linear(512, 40)``. bf16 on a GPU, eval mode (running batch-norm statistics), no
gradients. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Inputs: three (8, 3, 224, 224)
views. Returns (8, 40) logits.

    traceinspect profile mvcnn_view_pool_3streams_b8.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _blocks import conv_bn_relu, mlp_tower
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

VIEWS = 3


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, widths, classes = (
        (2, 32, [3, 8, 8, 16, 16], 5) if smoke else (8, 224, [3, 32, 64, 128, 256], 40)
    )
    dtype = low_precision(device)
    fmt = torch.channels_last
    layers: list[nn.Module] = [
        conv_bn_relu(cin, cout, 2) for cin, cout in zip(widths[:-1], widths[1:], strict=True)
    ]
    layers += [conv_bn_relu(widths[-1], widths[-1], 1), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    cnn = nn.Sequential(*layers)
    random_batch_norm_stats(cnn)
    cnn = cnn.to(device=device, dtype=dtype, memory_format=fmt).eval()
    head = mlp_tower([widths[-1], 2 * widths[-1], classes]).to(device, dtype).eval()
    streams = side_streams(device, VIEWS)

    @torch.no_grad()
    def step(*views: Tensor) -> Tensor:
        feats = fork_join(device, streams, [partial(cnn, v) for v in views])
        return head(torch.stack(feats).amax(dim=0))

    inputs = [
        tuple(
            torch.randn(batch, 3, side, side, device=device, dtype=dtype).to(memory_format=fmt)
            for _ in range(VIEWS)
        )
        for _ in range(2)
    ]
    description = (
        f"MVCNN, {VIEWS} views of {side}x{side}, CNN {'-'.join(map(str, widths))}, max view "
        f"pool, b{batch}, {VIEWS} side streams"
    )
    return Built(step, inputs, description, [cnn, head])


if __name__ == "__main__":
    main(build, __doc__)
