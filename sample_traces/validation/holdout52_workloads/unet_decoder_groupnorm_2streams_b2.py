"""Two convolutional decoders over one diffusion latent, an RGB decoder and a lighter depth decoder,
one on each of two side streams (fifty-second hold-out: GroupNorm and SiLU over large NCHW
activations, up to 2 x 128 x 256 x 256 in bf16, 33 MB a tensor, between 3x3 convolutions, the two
branches of unequal width side by side and joined on the current stream), built from the ResNet
blocks of the diffusion UNet (Ho et al., 2020) the way Stable Diffusion's VAE decoder stacks them
(diffusers' ``Decoder`` and ``ResnetBlock2D``, without the mid-block attention). On the current
stream first: the latent (2, 4, 64, 64) scaled by 1 / 0.18215 and the 1x1 ``post_quant_conv`` (4 ->
4). Each branch: ``conv_in`` (3x3, 4 -> c0); 3 levels at 64 x 64, 128 x 128 and 256 x 256, each 2
ResNet blocks (``GroupNorm(32)``, SiLU, 3x3 conv, ``GroupNorm(32)``, SiLU, 3x3 conv, added to the
block's input), a nearest up-sample x2 (``F.interpolate``) and a 3x3 conv between levels that also
sets the next level's width; then ``GroupNorm(32)``, SiLU and ``conv_out`` (3x3). Side stream 1,
RGB: widths 256, 256, 128, ``conv_out`` to 3 channels. Side stream 2, depth: widths 256, 128, 64 (a
lighter head, a third of the RGB branch's convolution work), ``conv_out`` to 1 channel. Fork and
join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture); after the join, on the current stream, RGB and depth concatenated to an RGB-D
image and mapped to [0, 1] as the pipelines post-process, (x / 2 + 0.5).clamp(0, 1). bf16 on a GPU,
eval mode, no gradients. NCHW throughout (PyTorch's GroupNorm on CUDA works in contiguous NCHW and
would copy a channels-last input back to it). Input: the sampler's latent (2, 4, 64, 64), standard
normal. Returns the RGB-D image (2, 4, 256, 256).

    traceinspect profile unet_decoder_groupnorm_2streams_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

GROUPS, LATENT, SCALING = 32, 4, 0.18215


class ResnetBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(GROUPS, c), nn.Conv2d(c, c, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(GROUPS, c), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        return x + self.conv2(F.silu(self.norm2(h)))


class Upsample(nn.Module):
    def __init__(self, c_in: int, c_out: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))


class Decoder(nn.Module):
    def __init__(self, widths: tuple[int, ...], out: int, blocks: int = 2) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(LATENT, widths[0], 3, padding=1)
        layers: list[nn.Module] = []
        for i, c in enumerate(widths):
            if i:
                layers.append(Upsample(widths[i - 1], c))
            layers.extend(ResnetBlock(c) for _ in range(blocks))
        self.body = nn.Sequential(*layers)
        self.norm_out = nn.GroupNorm(GROUPS, widths[-1])
        self.conv_out = nn.Conv2d(widths[-1], out, 3, padding=1)

    def forward(self, z: Tensor) -> Tensor:  # z: (B, 4, h, w) -> (B, out, 4h, 4w)
        x = self.body(self.conv_in(z))
        return self.conv_out(F.silu(self.norm_out(x)))


class RgbdDecoder(nn.Module):
    def __init__(self, rgb: tuple[int, ...], depth: tuple[int, ...]) -> None:
        super().__init__()
        self.post_quant_conv = nn.Conv2d(LATENT, LATENT, 1)
        self.rgb = Decoder(rgb, 3)
        self.depth = Decoder(depth, 1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, rgb, depth = 2, 8, (64, 64, 32), (64, 32, 32)
    else:
        batch, size, rgb, depth = 2, 64, (256, 256, 128), (256, 128, 64)
    dtype = low_precision(device)
    model = RgbdDecoder(rgb, depth).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(latent: Tensor) -> Tensor:
        z = model.post_quant_conv(latent * (1 / SCALING))
        image, depth_map = fork_join(
            device, streams, [lambda: model.rgb(z), lambda: model.depth(z)]
        )
        return (torch.cat((image, depth_map), dim=1) / 2 + 0.5).clamp(0, 1)

    inputs = [
        (torch.randn(batch, LATENT, size, size, device=device, dtype=dtype),) for _ in range(2)
    ]
    widths = "/".join(map(str, rgb)), "/".join(map(str, depth))
    description = (
        f"GroupNorm ResNet decoders: RGB {widths[0]} and depth {widths[1]} channels, "
        f"{LATENT}x{size}x{size} -> {4 * size}x{4 * size}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
