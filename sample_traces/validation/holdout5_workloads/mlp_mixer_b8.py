"""MLP-Mixer: 16x16 patch embedding (Conv2d 3->256) of 8 x 3 x 224 x 224, 6 mixer blocks
(LayerNorm, token-mixing MLP 196->256->196 on the transposed (B, C, T) tensor, channel-mixing
MLP 256->1024->256, GELU), bf16 (fifth hold-out).

    traceinspect profile mlp_mixer_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def mlp(d: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, channels: int, token_hidden: int, hidden: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(channels), nn.LayerNorm(channels)
        self.token_mlp, self.channel_mlp = mlp(tokens, token_hidden), mlp(channels, hidden)

    def forward(self, x: Tensor) -> Tensor:  # x: (B, T, C)
        x = x + self.token_mlp(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.ln2(x))


class Mixer(nn.Module):
    def __init__(self, size: int, patch: int, c: int, th: int, h: int, depth: int) -> None:
        super().__init__()
        tokens = (size // patch) ** 2
        self.embed = nn.Conv2d(3, c, patch, patch)
        self.blocks = nn.Sequential(*(MixerBlock(tokens, c, th, h) for _ in range(depth)))
        self.norm = nn.LayerNorm(c)
        self.head = nn.Linear(c, 1000)

    def forward(self, x: Tensor) -> Tensor:
        x = self.blocks(self.embed(x).flatten(2).transpose(1, 2))
        return self.head(self.norm(x).mean(1))


def build(device: torch.device, smoke: bool) -> Built:
    size, patch, c, th, h, depth, batch = (
        (32, 8, 16, 32, 64, 2, 2) if smoke else (224, 16, 256, 256, 1024, 6, 8)
    )
    dtype = low_precision(device)
    model = Mixer(size, patch, c, th, h, depth).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"MLP-Mixer {depth} x C{c}, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
