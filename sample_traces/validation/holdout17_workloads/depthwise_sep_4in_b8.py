"""A four-camera classifier on 8 samples, four views of 3 x 64 x 64 each fed as a separate
input, bf16 (seventeenth hold-out), inference. Each view, one after the other, goes through
ONE shared depthwise-separable stem (as MobileNet's blocks, Howard et al., 2017): three
blocks of a depthwise 3x3 conv (no bias), a pointwise 1x1 conv (no bias), batch norm (eval
mode, statistics and affine parameters randomized at build, its own kernels) and ReLU6, the
blocks 3->32 at 64 x 64, 32->64 with stride 2 to 32 x 32, 64->128 with stride 2 to 16 x 16
(the stride on the depthwise conv); then a global average pool (8 x 128 per view). The four
views' features are concatenated (8 x 512) and fed to a Linear 512->10. NCHW memory format.
About 20 kernels per view (per block the two convs, the batch norm's three small kernels on
an H200 in bf16 and the ReLU6; the pool), some 85 in all, the largest over the 32-channel
maps of 64 x 64 (2 MB): launch-bound. Inputs: the four views (8 x 3 x 64 x 64 each).
Returns the logits (8 x 10, bf16).

    traceinspect profile depthwise_sep_4in_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

VIEWS, CLASSES = 4, 10
# (input channels, output channels, stride)
BLOCKS = [(3, 32, 1), (32, 64, 2), (64, 128, 2)]


def separable(cin: int, cout: int, stride: int) -> list[nn.Module]:
    return [
        nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
        nn.Conv2d(cin, cout, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(),
    ]


def randomize_bn(module: nn.Module) -> None:
    """Trained-looking batch-norm statistics and affine parameters (the defaults are 0 / 1)."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n))
            m.running_var.copy_(0.5 + torch.rand(n))
            m.weight.data.copy_(1 + 0.1 * torch.randn(n))
            m.bias.data.copy_(0.1 * torch.randn(n))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (2, 16) if smoke else (8, 64)
    dtype = low_precision(device)
    stem = nn.Sequential(*(m for spec in BLOCKS for m in separable(*spec)))
    with torch.no_grad():
        randomize_bn(stem)
    stem = stem.to(device=device, dtype=dtype).eval()
    features = BLOCKS[-1][1]
    head = nn.Linear(VIEWS * features, CLASSES).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(view_0: Tensor, view_1: Tensor, view_2: Tensor, view_3: Tensor) -> Tensor:
        pooled = [stem(v).mean((2, 3)) for v in (view_0, view_1, view_2, view_3)]
        return head(torch.cat(pooled, dim=1))

    inputs = [
        tuple(torch.randn(batch, 3, size, size, device=device, dtype=dtype) for _ in range(VIEWS))
        for _ in range(2)
    ]
    chans = "-".join(str(c) for c in (BLOCKS[0][0], *(spec[1] for spec in BLOCKS)))
    description = (
        f"{VIEWS}-view classifier, shared depthwise-separable stem ({len(BLOCKS)} blocks "
        f"dw3x3 + pw1x1 + BN + ReLU6, {chans} ch) per view, pool, cat, Linear "
        f"{VIEWS * features}-{CLASSES}, batch {batch} x 3 x {size}x{size} per view"
    )
    return Built(step, inputs, description, [stem, head])


if __name__ == "__main__":
    main(build, __doc__)
