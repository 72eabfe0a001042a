"""Three dense-prediction heads on three side streams, all reading one shared feature map
(forty-fifth hold-out: heads whose first kernels run few blocks over the same input, the shape
in which a head's kernels ran slower in the eager trace than in the replay): a shared encoder
on the current stream (two ``Conv2d 3 x 3`` stride 2 + BatchNorm + ReLU, 3 -> 64 -> 128
channels) over 2 images of 3 x 128 x 128 gives 128 x 32 x 32 features; then, each on its own
side stream, a segmentation head (2x bilinear upsampling, ``Conv2d(128, 64, 3)``, ReLU,
``Conv2d(64, 21, 1)``), a depth head (the same with 1 output channel and a sigmoid) and a
surface-normal head (the same with 3 output channels, normalized over channels). After the
join, each head's mean over its pixels, concatenated (25 values). bf16, eval mode, no
gradients. Input: the (2, 3, 128, 128) images.

    traceinspect profile three_dense_heads_shared_feats_3streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def _head(cin: int, hidden: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        nn.Conv2d(cin, hidden, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(hidden, cout, 1),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, (c1, c2, hidden) = (1, 16, (4, 8, 4)) if smoke else (2, 128, (64, 128, 64))
    dtype = low_precision(device)
    encoder = nn.Sequential(
        nn.Conv2d(3, c1, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(c1),
        nn.ReLU(),
        nn.Conv2d(c1, c2, 3, stride=2, padding=1, bias=False),
        nn.BatchNorm2d(c2),
        nn.ReLU(),
    )
    seg, depth, normals = _head(c2, hidden, 21), _head(c2, hidden, 1), _head(c2, hidden, 3)
    model = nn.ModuleList([encoder, seg, depth, normals]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        feats = encoder(x)
        s, d, n = fork_join(
            device,
            streams,
            [
                lambda: seg(feats),
                lambda: torch.sigmoid(depth(feats)),
                lambda: F.normalize(normals(feats), dim=1),
            ],
        )
        return torch.cat([t.mean(dim=(0, 2, 3)) for t in (s, d, n)])

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"conv encoder -> {c2}ch {size // 4}x{size // 4}, 3 upsampling heads (21/1/3 ch) on 3 "
        f"side streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
