"""Small VAE decoder over 2 latents of 4 x 32 x 32, bf16 (seventh hold-out): a conv3x3 4->128,
2 residual blocks at 128 channels, a nearest upsample x2 (to 64 x 64) and a conv3x3 128->64,
2 residual blocks at 64 channels, then GroupNorm, SiLU and a conv3x3 64->3 (an RGB image,
2 x 3 x 64 x 64). Each residual block is GroupNorm (32 groups), SiLU, conv3x3, GroupNorm,
SiLU, conv3x3, added to the block's input. No attention block.

    traceinspect profile vae_decoder_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

GROUPS = 32


class ResBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(GROUPS, c), nn.Conv2d(c, c, 3, padding=1)
        self.norm2, self.conv2 = nn.GroupNorm(GROUPS, c), nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        return x + self.conv2(F.silu(self.norm2(h)))


class Decoder(nn.Module):
    def __init__(self, latent: int, wide: int, narrow: int) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(latent, wide, 3, padding=1)
        self.low = nn.Sequential(ResBlock(wide), ResBlock(wide))
        self.up_conv = nn.Conv2d(wide, narrow, 3, padding=1)
        self.high = nn.Sequential(ResBlock(narrow), ResBlock(narrow))
        self.norm_out = nn.GroupNorm(GROUPS, narrow)
        self.conv_out = nn.Conv2d(narrow, 3, 3, padding=1)

    def forward(self, z: Tensor) -> Tensor:  # z: (B, latent, H, W)
        x = self.low(self.conv_in(z))
        x = self.up_conv(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        x = self.high(x)
        return self.conv_out(F.silu(self.norm_out(x)))


def build(device: torch.device, smoke: bool) -> Built:
    latent, wide, narrow, size, batch = (4, 64, 32, 8, 2) if smoke else (4, 128, 64, 32, 2)
    dtype = low_precision(device)
    model = Decoder(latent, wide, narrow).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(z: Tensor) -> Tensor:
        return model(z)

    inputs = [
        (torch.randn(batch, latent, size, size, device=device, dtype=dtype),) for _ in range(2)
    ]
    description = f"VAE decoder {wide}/{narrow} channels, batch {batch} x {latent}x{size}x{size}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
