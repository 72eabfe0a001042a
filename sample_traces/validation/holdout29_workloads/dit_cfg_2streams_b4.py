"""Diffusion-transformer blocks with adaLN-Zero conditioning (Peebles & Xie, 2023) under
classifier-free guidance, the conditional and the unconditional pass side by side on two
streams (twenty-ninth hold-out): 4 latents of 256 patch tokens, 768 channels in 12 heads,
bf16 on a GPU. The timestep's sinusoidal embedding and the class embedding (the null class
for the unconditional pass) go through an MLP to a conditioning vector; each of 3 blocks
regresses six modulation vectors from it (SiLU + Linear 768 -> 4,608), then LayerNorm
without affine, shift and scale, attention (scaled-dot-product), a gated residual, the same
around a GELU MLP (x 4). Joined back, the guided output ``uncond + 4 (cond - uncond)``.

    traceinspect profile dit_cfg_2streams_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS, GUIDANCE = 3, 4.0


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.modulation = nn.Linear(d, 6 * d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor, c: Tensor) -> Tensor:
        b, t, d = x.shape
        shift1, scale1, gate1, shift2, scale2, gate2 = self.modulation(F.silu(c))[:, None].chunk(
            6, dim=-1
        )
        y = F.layer_norm(x, (d,)) * (1 + scale1) + shift1
        q, k, v = self.qkv(y).view(b, t, 3, self.heads, -1).transpose(1, 3).unbind(2)
        y = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + gate1 * self.out(y)
        y = F.layer_norm(x, (d,)) * (1 + scale2) + shift2
        return x + gate2 * self.fc2(F.gelu(self.fc1(y), approximate="tanh"))


def timestep_embedding(t: Tensor, dim: int) -> Tensor:
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2, device=t.device) / (dim // 2))
    angles = t[:, None].float() * freqs[None]
    return torch.cat([angles.cos(), angles.sin()], dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, heads, classes = (2, 8, 32, 2, 10) if smoke else (4, 256, 768, 12, 1000)
    dtype = low_precision(device)
    blocks = nn.ModuleList([Block(d, heads) for _ in range(BLOCKS)])
    t_mlp = nn.Sequential(nn.Linear(256, d), nn.SiLU(), nn.Linear(d, d))
    labels = nn.Embedding(classes + 1, d)  # the last is the null class
    model = nn.ModuleList([blocks, t_mlp, labels]).to(device, dtype).eval()
    streams = side_streams(device, 2)
    null = torch.full((batch,), classes, device=device)

    def denoise(x: Tensor, t_emb: Tensor, y: Tensor) -> Tensor:
        c = t_mlp(t_emb) + labels(y)
        for block in blocks:
            x = block(x, c)
        return x

    @torch.no_grad()
    def step(x: Tensor, t: Tensor, y: Tensor) -> Tensor:
        t_emb = timestep_embedding(t, 256).to(dtype)
        cond, uncond = fork_join(
            device, streams, [lambda: denoise(x, t_emb, y), lambda: denoise(x, t_emb, null)]
        )
        return uncond + GUIDANCE * (cond - uncond)

    inputs = [
        (
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
            torch.randint(0, 1000, (batch,), device=device),
            torch.randint(0, classes, (batch,), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{BLOCKS} DiT blocks d{d}, {tokens} tokens, CFG on 2 streams, b{batch}",
        [model, null],
    )


if __name__ == "__main__":
    main(build, __doc__)
