"""A stack of diffusion-UNet ResBlocks conditioned on the timestep: 4 latents of 128 x 64 x 64
and 4 timesteps, bf16 (eleventh hold-out), as in a DDPM / Stable Diffusion UNet level. The
timesteps (int64, one per sample) get a sinusoidal embedding in the step (sin and cos of t
times 64 frequencies, fp32, the frequencies made at build) and a time MLP (Linear 128->512,
SiLU, Linear 512->512). Then 4 ResBlocks at 128, 128, 256 and 256 channels. A ResBlock:
GroupNorm (32 groups), SiLU, conv3x3; plus the block's own projection of the embedding
(SiLU, Linear 512->channels) added per channel (broadcast over 64 x 64); GroupNorm, SiLU,
conv3x3; plus the shortcut (a conv1x1 where the channel count changes, else the input).
Returns 4 x 256 x 64 x 64.

    traceinspect profile group_norm_unet_block_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

GROUPS = 32


class TimeResBlock(nn.Module):
    def __init__(self, cin: int, cout: int, emb: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(GROUPS, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.time = nn.Linear(emb, cout)
        self.norm2, self.conv2 = nn.GroupNorm(GROUPS, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip: nn.Module = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: Tensor, emb: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(F.silu(emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class TimeConditionedStack(nn.Module):
    def __init__(self, widths: tuple[int, ...], freq_dim: int, emb: int) -> None:
        super().__init__()
        half = freq_dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))
        self.time_mlp = nn.Sequential(nn.Linear(freq_dim, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.blocks = nn.ModuleList(
            TimeResBlock(a, b, emb) for a, b in zip(widths, widths[1:], strict=False)
        )

    def forward(self, x: Tensor, t: Tensor) -> Tensor:
        angles = t.float()[:, None] * self.freqs[None, :]
        emb = self.time_mlp(torch.cat((angles.sin(), angles.cos()), dim=-1).to(x.dtype))
        for block in self.blocks:
            x = block(x, emb)
        return x


def build(device: torch.device, smoke: bool) -> Built:
    widths, freq_dim, emb, size, batch = (
        ((32, 32, 32, 64, 64), 16, 32, 8, 2)
        if smoke
        else ((128, 128, 128, 256, 256), 128, 512, 64, 4)
    )
    dtype = low_precision(device)
    model = TimeConditionedStack(widths, freq_dim, emb)
    model.time_mlp.to(dtype)
    model.blocks.to(dtype)
    model = model.to(device).eval()  # the frequencies stay fp32

    @torch.no_grad()
    def step(x: Tensor, t: Tensor) -> Tensor:
        return model(x, t)

    inputs = [
        (
            torch.randn(batch, widths[0], size, size, device=device, dtype=dtype),
            torch.randint(0, 1000, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"timestep-conditioned GroupNorm ResBlocks {'-'.join(map(str, widths[1:]))}, "
        f"batch {batch} x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
