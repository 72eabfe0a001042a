"""A diffusion U-Net residual block conditioned on the timestep (Ho et al., 2020; FiLM as in
improved DDPM), 8 images of 32 x 32 x 128, bf16 (nineteenth hold-out), inference, fed two
inputs: the feature map and the timesteps (8, int64). The sinusoidal embedding of the
timesteps (128 frequencies: ``exp``, ``arange``, outer product, ``sin`` and ``cos``,
concatenated), a two-layer MLP 256 -> 512 -> 512 with SiLU, and per block a Linear 512 ->
256 giving a scale and a shift; then GroupNorm(32), SiLU, conv 3x3, GroupNorm(32) scaled by
(1 + scale) and shifted, SiLU, conv 3x3 and the residual add, twice (two blocks). About 45
kernels, the four convolutions over 32 x 32 x 128 maps (0.6 GFLOP each) among many small
ones: mixed. Inputs: 8 x 128 x 32 x 32 and the 8 timesteps. Returns 8 x 128 x 32 x 32.

    traceinspect profile timestep_film_resblock_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

GROUPS, STEPS = 32, 1000


def timestep_embedding(t: Tensor, dim: int) -> Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device) / half)
    args = t.float().unsqueeze(1) * freqs.unsqueeze(0)
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, c: int, emb: int, groups: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(groups, c), nn.GroupNorm(groups, c)
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.film = nn.Linear(emb, 2 * c)

    def forward(self, x: Tensor, emb: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.film(F.silu(emb))[:, :, None, None].chunk(2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        return x + self.conv2(F.silu(h))


class Conditioned(nn.Module):
    def __init__(self, c: int, freq: int, emb: int, groups: int) -> None:
        super().__init__()
        self.freq = freq
        self.mlp = nn.Sequential(nn.Linear(freq, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.blocks = nn.ModuleList(ResBlock(c, emb, groups) for _ in range(2))

    def forward(self, x: Tensor, t: Tensor) -> Tensor:
        emb = self.mlp(timestep_embedding(t, self.freq).to(x.dtype))
        for block in self.blocks:
            x = block(x, emb)
        return x


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, size, freq, emb, groups = (
        (2, 8, 8, 16, 32, 4) if smoke else (8, 128, 32, 256, 512, GROUPS)
    )
    dtype = low_precision(device)
    model = Conditioned(c, freq, emb, groups).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor, t: Tensor) -> Tensor:
        return model(x, t)

    inputs = [
        (
            torch.randn(batch, c, size, size, device=device, dtype=dtype),
            torch.randint(0, STEPS, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = f"2 timestep-FiLM ResBlocks c{c} at {size}x{size}, batch {batch}, 2 inputs"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
