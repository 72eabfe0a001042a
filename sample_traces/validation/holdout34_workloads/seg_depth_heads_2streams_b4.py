"""A multi-task dense-prediction step with its two decoder heads on two side streams and fused
work after the join (thirty-fourth hold-out): 4 images of 3 x 256 x 256, bf16 on a GPU,
eval mode, no gradients. On the current stream a shared conv encoder: 4 stages of
``Conv2d(3 x 3, stride 2, padding 1, bias=False)`` + BatchNorm (eval, running statistics
set at build) + ReLU, 3 -> 64 -> 128 -> 256 -> 256 channels, 256 x 256 -> 16 x 16. Then the
two heads are forked from the current stream with ``wait_stream``, each on its own side
stream, both reading the shared features: the segmentation head is 3 blocks of bilinear
upsampling x 2 (``F.interpolate``, align_corners=False) + ``Conv2d(3 x 3, padding 1)`` +
ReLU, 256 -> 128 -> 64 -> 64 channels, 16 x 16 -> 128 x 128, and a 1 x 1 ``Conv2d(64, 21)``
to the class logits; the depth head has the same shape with a 1 x 1 ``Conv2d(64, 1)`` and a
sigmoid. The current stream joins both (the project's ``fork_join``: ``wait_stream``, and
``record_stream`` on the head outputs outside capture) and then, on the current stream, the
fused output: the softmax of the segmentation logits over the 21 classes (in fp32), each
class map multiplied by the depth map, and the mean over the 128 x 128 positions. On a CPU
the heads run in order. Input: images (4, 3, 256, 256). Returns the (4, 21) depth-weighted
class scores (fp32).

    traceinspect profile seg_depth_heads_2streams_b4.py
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

CLASSES = 21


class UpBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return F.relu(self.conv(x))


def head(widths: tuple[int, ...], out: int) -> nn.Sequential:
    blocks = [UpBlock(cin, cout) for cin, cout in pairwise(widths)]
    return nn.Sequential(*blocks, nn.Conv2d(widths[-1], out, 1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, enc, dec = (
        (2, 32, (3, 8, 16, 16, 16), (16, 16, 8, 8))
        if smoke
        else (4, 256, (3, 64, 128, 256, 256), (256, 128, 64, 64))
    )
    dtype = low_precision(device)
    stages: list[nn.Module] = []
    for cin, cout in pairwise(enc):
        stages += [nn.Conv2d(cin, cout, 3, 2, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]
    encoder = nn.Sequential(*stages)
    random_batch_norm_stats(encoder)
    seg_head, depth_head = head(dec, CLASSES), head(dec, 1)
    model = nn.ModuleList([encoder, seg_head, depth_head]).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        feats = encoder(images)
        seg, depth = fork_join(
            device, streams, [lambda: seg_head(feats), lambda: torch.sigmoid(depth_head(feats))]
        )
        probs = seg.float().softmax(dim=1)  # (b, classes, h, w)
        return (probs * depth.float()).mean(dim=(2, 3))  # depth broadcast over the classes

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"conv encoder + segmentation / depth heads on 2 side streams + fused output, "
        f"b{batch} at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
