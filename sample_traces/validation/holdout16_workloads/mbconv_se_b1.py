"""Four EfficientNet MBConv blocks (Tan & Le, 2019: inverted residuals with squeeze-and-
excitation) on one 32 x 56 x 56 map, bf16 (sixteenth hold-out), inference at batch 1. Per
block: a 1x1 expansion conv (x6, or x4 in the first block) with batch norm and SiLU, a
depthwise 3x3 conv (stride 1 or 2) with batch norm and SiLU, squeeze-and-excitation (the
spatial mean, a 1x1 conv down to a quarter of the block's input channels, SiLU, a 1x1 conv
back up, sigmoid, and the channel-wise product), a 1x1 projection conv with batch norm, and
the residual add where the input and output shapes match (blocks 1 and 3). The blocks: 32->32
at 56 x 56 (expand 4, residual), 32->48 stride 2 to 28 x 28 (expand 6), 48->48 at 28 x 28
(expand 6, residual), 48->96 stride 2 to 14 x 14 (expand 6). Batch norm in eval mode (its
own kernels, not folded into the convs), NCHW memory format. About 22 kernels per block,
some 90 in all (on an H200 each bf16 batch norm is three small kernels and each SE conv a
GEMM and a bias add), the largest over the 128-channel maps of 56 x 56 (800 KB):
launch-bound. Input: 1 x 32
x 56 x 56. Returns 1 x 96 x 14 x 14.

    traceinspect profile mbconv_se_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

# (input channels, output channels, expansion, stride)
BLOCKS = [(32, 32, 4, 1), (32, 48, 6, 2), (48, 48, 6, 1), (48, 96, 6, 2)]


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    conv = nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False)
    return [conv, nn.BatchNorm2d(cout)]


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        s = x.mean((2, 3), keepdim=True)
        s = torch.sigmoid(self.expand(F.silu(self.reduce(s))))
        return x * s


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, expand: int, stride: int) -> None:
        super().__init__()
        mid = cin * expand
        self.residual = stride == 1 and cin == cout
        self.body = nn.Sequential(
            *conv_bn(cin, mid, 1), nn.SiLU(),
            *conv_bn(mid, mid, 3, stride, groups=mid), nn.SiLU(),
            SqueezeExcite(mid, max(1, cin // 4)),
            *conv_bn(mid, cout, 1),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        y = self.body(x)
        return x + y if self.residual else y


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
    batch, size = (1, 16) if smoke else (1, 56)
    dtype = low_precision(device)
    model = nn.Sequential(*(MBConv(*spec) for spec in BLOCKS))
    with torch.no_grad():
        randomize_bn(model)
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    cin = BLOCKS[0][0]
    inputs = [(torch.randn(batch, cin, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"{len(BLOCKS)} MBConv blocks (expand, depthwise 3x3, SE, project, BN, SiLU), "
        f"batch {batch} x {cin} ch x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
