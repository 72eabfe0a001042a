"""A StyleGAN2 generator forward (Karras et al., 2020: the mapping network, weight modulation and
demodulation in place of AdaIN, run as one grouped convolution per layer with a per-sample
weight, noise inputs, skip-connected toRGB outputs) from latents to 64 x 64 images (forty-third
hold-out): 8 latents of 512, bf16 on a GPU (the demodulation's sum of squares in fp32), eval
mode, no gradients; the upsampling simplified to a bilinear 2x ``F.interpolate`` before the
3 x 3 convolution (the official code fuses a transposed convolution and a [1, 3, 3, 1] blur).
Mapping: z normalized (z x rsqrt(mean(z^2) + 1e-8)), 8 ``Linear(512, 512)`` each + LeakyReLU(0.2)
(the shared ``_blocks.mlp_tower``), then the truncation trick w = w_avg + 0.7 (w - w_avg) with a
fixed w_avg; the same w drives every layer (no style mixing). Modulated convolution (cin, cout,
k): the style s = ``Linear(512, cin)`` of w (bias initialized to 1); the per-sample weight
W'[n] = W x 1/sqrt(cin k^2) x s[n] over the input channels, (8, cout, cin, k, k), demodulated
(divided by sqrt(sum over cin, k, k of W'^2 + 1e-8)); the (8, cin, h, w) input viewed as (1, 8
cin, h, w) and ``F.conv2d`` with the (8 cout, cin, k, k) weight and ``groups=8``, viewed back.
A styled layer: modulated 3 x 3 conv, + strength x a constant noise map (1, 1, h, w) fixed at
build (the official ``noise_mode='const'``) with a learned strength, + bias, LeakyReLU(0.2) x
sqrt(2). ToRGB: a modulated 1 x 1 conv to 3 channels without demodulation + bias. Synthesis: a
learned constant (512, 4, 4) repeated over the batch; at 4 x 4 one styled layer (512) and
ToRGB; then at 8, 16, 32, 64 (512, 512, 256, 128 channels) the upsample + styled layer, a second
styled layer and ToRGB, added to the bilinearly upsampled image so far. Nine modulated 3 x 3
convolutions (some 80 GFLOP over the batch, the 32 x 32 and 64 x 64 ones the largest), five
1 x 1. Input: the latents z (8, 512). Returns the images (8, 3, 64, 64) (bf16 on a GPU).

    traceinspect profile stylegan2_modconv_synthesis_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import mlp_tower
from _common import Built, low_precision, main
from torch import Tensor, nn

MAPPING_LAYERS, TRUNCATION, SLOPE = 8, 0.7, 0.2


class ModulatedConv(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, w_dim: int, demodulate: bool) -> None:
        super().__init__()
        self.demodulate, self.kernel = demodulate, kernel
        self.weight = nn.Parameter(torch.randn(cout, cin, kernel, kernel))
        self.gain = 1 / math.sqrt(cin * kernel * kernel)
        self.affine = nn.Linear(w_dim, cin)
        nn.init.ones_(self.affine.bias)

    def forward(self, x: Tensor, w: Tensor) -> Tensor:  # x (b, cin, h, w), w (b, w_dim)
        b, cin, h, wd = x.shape
        style = self.affine(w)  # (b, cin)
        weight = self.weight[None] * self.gain * style[:, None, :, None, None]
        if self.demodulate:
            norm = weight.float().square().sum(dim=(2, 3, 4), keepdim=True) + 1e-8
            weight = weight * torch.rsqrt(norm).to(weight.dtype)
        cout = weight.shape[1]
        out = F.conv2d(
            x.reshape(1, b * cin, h, wd),
            weight.reshape(b * cout, cin, self.kernel, self.kernel),
            padding=self.kernel // 2,
            groups=b,
        )
        return out.view(b, cout, h, wd)


class StyledLayer(nn.Module):
    def __init__(self, cin: int, cout: int, w_dim: int, size: int, up: bool) -> None:
        super().__init__()
        self.up = up
        self.conv = ModulatedConv(cin, cout, 3, w_dim, demodulate=True)
        self.register_buffer("noise", torch.randn(1, 1, size, size))
        self.noise_strength = nn.Parameter(torch.full((), 0.1))
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x: Tensor, w: Tensor) -> Tensor:
        if self.up:
            x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
        x = self.conv(x, w) + self.noise_strength * self.noise + self.bias[:, None, None]
        return F.leaky_relu(x, SLOPE) * math.sqrt(2)


class ToRGB(nn.Module):
    def __init__(self, cin: int, w_dim: int) -> None:
        super().__init__()
        self.conv = ModulatedConv(cin, 3, 1, w_dim, demodulate=False)
        self.bias = nn.Parameter(torch.zeros(3))

    def forward(self, x: Tensor, w: Tensor) -> Tensor:
        return self.conv(x, w) + self.bias[:, None, None]


class Generator(nn.Module):
    def __init__(self, z_dim: int, channels: dict[int, int]) -> None:
        super().__init__()
        self.mapping = mlp_tower(
            [z_dim] * (MAPPING_LAYERS + 1), lambda: nn.LeakyReLU(SLOPE), last_act=True
        )
        self.register_buffer("w_avg", torch.randn(z_dim) * 0.1)
        sizes = sorted(channels)
        self.const = nn.Parameter(torch.randn(channels[sizes[0]], sizes[0], sizes[0]))
        self.first = StyledLayer(channels[sizes[0]], channels[sizes[0]], z_dim, sizes[0], False)
        self.first_rgb = ToRGB(channels[sizes[0]], z_dim)
        self.blocks = nn.ModuleList()
        for prev, size in zip(sizes[:-1], sizes[1:], strict=True):
            cin, cout = channels[prev], channels[size]
            self.blocks.append(
                nn.ModuleList(
                    [
                        StyledLayer(cin, cout, z_dim, size, True),
                        StyledLayer(cout, cout, z_dim, size, False),
                        ToRGB(cout, z_dim),
                    ]
                )
            )

    def forward(self, z: Tensor) -> Tensor:
        z = z * torch.rsqrt(z.float().square().mean(dim=1, keepdim=True) + 1e-8).to(z.dtype)
        w = self.mapping(z)
        w = self.w_avg + TRUNCATION * (w - self.w_avg)
        x = self.first(self.const[None].expand(z.shape[0], -1, -1, -1), w)
        rgb = self.first_rgb(x, w)
        for up, conv, to_rgb in self.blocks:
            x = conv(up(x, w), w)
            rgb = F.interpolate(rgb, scale_factor=2.0, mode="bilinear", align_corners=False)
            rgb = rgb + to_rgb(x, w)
        return rgb


def build(device: torch.device, smoke: bool) -> Built:
    batch, z_dim, channels = (
        (2, 16, {4: 16, 8: 16, 16: 8})
        if smoke
        else (8, 512, {4: 512, 8: 512, 16: 512, 32: 256, 64: 128})
    )
    dtype = low_precision(device)
    model = Generator(z_dim, channels).to(device, dtype).eval()

    @torch.no_grad()
    def step(z: Tensor) -> Tensor:
        return model(z)

    inputs = [(torch.randn(batch, z_dim, device=device, dtype=dtype),) for _ in range(2)]
    top = max(channels)
    return Built(
        step,
        inputs,
        f"StyleGAN2 generator: {MAPPING_LAYERS}-layer mapping {z_dim}, modulated/demodulated "
        f"3x3 convs as grouped convs (groups = batch), const noise, skip toRGB, 4 -> {top} px "
        f"({'-'.join(str(channels[s]) for s in sorted(channels))} channels), b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
