"""The first encoder level of a pixel-space diffusion U-Net run on four crops of each of 2 images at
four resolutions, 256, 192, 128 and 96 pixels, each crop size on its own side stream, as multi-crop
training (SwAV's and DINO's global and local crops, Caron et al., 2020 and 2021) feeds a dense
encoder at several sizes at once (fifty-fifth hold-out: four concurrent chains of 18 kernels each,
cuDNN 3x3 convolutions between PyTorch's GroupNorm kernels, SiLUs and residual adds over bf16 NCHW
maps of 4.7 to 33.5 MB, the same kernels on four sizes, so the four chains differ some sevenfold in
work and run side by side). The level is laid out as the first level of DDPM's 256 x 256 U-Net (Ho
et al., 2020: base width 128, two ResNet blocks a level) in diffusers' ``UNet2DModel`` (its
``conv_in`` and first ``DownBlock2D``, no time embedding, as a denoiser's encoder used for
features): ``conv_in``, a ``Conv2d(3, 128, 3, padding 1)``; two ``ResnetBlock2D`` of 128 channels,
each ``GroupNorm(32, 128, eps=1e-6)``, SiLU, ``Conv2d(128, 128, 3, padding 1)``, ``GroupNorm``,
SiLU, (dropout, none in eval) ``Conv2d(128, 128, 3, padding 1)``, the block's input added and the
sum divided by the output scale factor 1.0 (a kernel, as diffusers writes it); then
``Downsample2D``, a ``Conv2d(128, 128, 3, stride 2, padding 1)``. The four crops share the weights.
Side stream 1, the 256-pixel crops (2, 3, 256, 256); side stream 2, the 192-pixel ones; side stream
3, 128; side stream 4, 96. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current stream:
each level's output (2, 128, 128, 128) down to (2, 128, 48, 48) cast to fp32 and average-pooled
over its pixels, and the four concatenated, (2, 512), as a multi-crop head reads them. bf16 on a
GPU, weights included (fp32 on a CPU), eval mode, no gradients, random weights (torch's defaults).
Inputs (two input sets): the four crop batches, random. Returns the pooled features (2, 512), fp32.

    traceinspect profile multicrop_unet_down_level_4streams_b2.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CROPS, WIDTH, GROUPS, EPS, OUTPUT_SCALE = (256, 192, 128, 96), 128, 32, 1e-6, 1.0


class ResnetBlock2D(nn.Module):
    """diffusers' ResnetBlock2D without a time embedding, same width in and out."""

    def __init__(self, channels: int, groups: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, channels, eps=EPS)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, channels, eps=EPS)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return (x + h) / OUTPUT_SCALE


class DownLevel(nn.Module):
    """UNet2DModel's conv_in and first DownBlock2D (2 ResNet blocks, a strided conv)."""

    def __init__(self, width: int, groups: int) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(3, width, 3, padding=1)
        self.resnets = nn.Sequential(ResnetBlock2D(width, groups), ResnetBlock2D(width, groups))
        self.downsample = nn.Conv2d(width, width, 3, stride=2, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.downsample(self.resnets(self.conv_in(x)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, crops, width, groups = 2, (32, 24, 16, 12), 16, 4
    else:
        batch, crops, width, groups = 2, CROPS, WIDTH, GROUPS
    dtype = low_precision(device)
    model = DownLevel(width, groups).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, len(crops))

    @torch.no_grad()
    def step(*views: Tensor) -> Tensor:
        outs = fork_join(device, streams, [partial(model, v) for v in views])
        return torch.cat([o.float().mean(dim=(2, 3)) for o in outs], dim=1)

    inputs = [
        tuple(torch.randn(batch, 3, c, c, device=device, dtype=dtype) for c in crops)
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"DDPM U-Net first level (conv_in, 2 ResNet blocks GroupNorm({groups}) + SiLU + 3x3 "
        f"conv at {width}, strided conv) on crops {'/'.join(map(str, crops))} on "
        f"{len(crops)} side streams, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
