"""Three ConvNeXt blocks (Liu et al., 2022) at the first stage of ConvNeXt-T: 8 maps of 96
channels at 56 x 56, bf16 (fourteenth hold-out), inference, as the reference ``Block``: a
depthwise conv 7x7 (padding 3, 96 groups) on the NCHW map, a permute to channels-last (N, H,
W, C), ``LayerNorm`` over the 96 channels (the permuted view is not contiguous, so the norm
reads it through a copy), Linear 96->384, GELU, Linear 384->96 (the pointwise convolutions as
GEMMs over 25,088 pixel rows), the layer scale (a learned per-channel gamma, 1e-6 at init,
as in the paper), a permute back to NCHW and the residual add; no drop path at inference.
About 10 kernels per block, 30 in all; the depthwise convolutions and the two GEMMs over 8 x
96 x 56 x 56 activations make the step largely GPU-bound. Input: 8 x 96 x 56 x 56. Returns 8
x 96 x 56 x 56.

    traceinspect profile convnext_block_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYER_SCALE = 1e-6


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(LAYER_SCALE * torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        y = self.dwconv(x).permute(0, 2, 3, 1)  # (N, C, H, W) -> (N, H, W, C)
        y = self.pwconv2(F.gelu(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


def build(device: torch.device, smoke: bool) -> Built:
    batch, dim, size, depth = (2, 16, 8, 3) if smoke else (8, 96, 56, 3)
    dtype = low_precision(device)
    model = nn.Sequential(*(ConvNeXtBlock(dim) for _ in range(depth)))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, dim, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"{depth} ConvNeXt blocks ({dim} ch, dw 7x7, MLP x4), batch {batch} x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
