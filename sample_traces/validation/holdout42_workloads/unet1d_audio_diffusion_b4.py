"""One denoiser evaluation of a 1-D UNet for audio diffusion (the DDPM UNet's layout in 1-D:
sinusoidal timestep embedding and MLP, residual blocks with timestep FiLM, a self-attention mid
block, skip concatenation), the noise prediction for one sampling step (forty-second hold-out): 4
clips of 16,384 samples, mono, bf16 on a GPU (the GroupNorm statistics in fp32 inside its
kernel), eval mode, no gradients. Timestep embedding: the (4,) timesteps as 64 sinusoids
(frequencies 10000^(-i/32), computed in fp32), ``Linear(64, 256)`` + SiLU + ``Linear(256,
256)``. ResBlock1d(cin, cout): GroupNorm(8) + SiLU + ``Conv1d(cin, cout, 5, padding 2)``; the
FiLM, ``Linear(256, 2 cout)`` of SiLU(embedding) split into scale and shift, GroupNorm(8)(h) x
(1 + scale) + shift; SiLU + ``Conv1d(cout, cout, 5, padding 2)``; a 1 x 1 ``Conv1d`` on the
residual when cin != cout. Stem ``Conv1d(1, 64, 5, padding 2)``. Down path, 4 levels of 64, 128,
256, 256 channels at 16,384, 8,192, 4,096 and 2,048 samples: each level two ResBlock1d, its
output kept as the level's skip, then (levels 1-3) ``Conv1d(c, c, 3, stride 2, padding 1)``.
Mid block at 2,048 samples, 256 channels: ResBlock1d, self-attention (GroupNorm, ``Conv1d(256,
768, 1)`` to q, k, v of 4 heads of 64, ``F.scaled_dot_product_attention`` over the 2,048
positions, ``Conv1d(256, 256, 1)``, residual), ResBlock1d. Up path, mirrored: at each level the
input concatenated with the level's skip, two ResBlock1d (the first from the concatenated
channels), then (levels 4-2) nearest 2x ``F.interpolate`` + ``Conv1d(c, c, 5, padding 2)``.
Output: GroupNorm + SiLU + ``Conv1d(64, 1, 5, padding 2)``. Inputs: the noisy audio (4, 1,
16384) and the timesteps (4,) fp32 in [0, 1000). Returns the predicted noise (4, 1, 16384)
(bf16 on a GPU).

    traceinspect profile unet1d_audio_diffusion_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

GROUPS, KERNEL = 8, 5


def conv(cin: int, cout: int) -> nn.Conv1d:
    return nn.Conv1d(cin, cout, KERNEL, padding=KERNEL // 2)


class ResBlock1d(nn.Module):
    def __init__(self, cin: int, cout: int, emb: int) -> None:
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(GROUPS, cin), conv(cin, cout)
        self.film = nn.Linear(emb, 2 * cout)
        self.norm2, self.conv2 = nn.GroupNorm(GROUPS, cout), conv(cout, cout)
        self.skip = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: Tensor, emb: Tensor) -> Tensor:
        h = self.conv1(F.silu(self.norm1(x)))
        scale, shift = self.film(F.silu(emb))[..., None].chunk(2, dim=1)
        h = self.conv2(F.silu(self.norm2(h) * (1 + scale) + shift))
        return self.skip(x) + h


class Attention1d(nn.Module):
    def __init__(self, c: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(GROUPS, c)
        self.qkv, self.proj = nn.Conv1d(c, 3 * c, 1), nn.Conv1d(c, c, 1)

    def forward(self, x: Tensor) -> Tensor:
        b, c, t = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, 3, self.heads, c // self.heads, t).unbind(1)
        out = F.scaled_dot_product_attention(q.mT, k.mT, v.mT)  # (b, heads, t, d)
        return x + self.proj(out.mT.reshape(b, c, t))


class UNet1d(nn.Module):
    def __init__(self, channels: tuple[int, ...], emb: int, heads: int) -> None:
        super().__init__()
        self.freq_dim = channels[0]
        half = self.freq_dim // 2
        self.register_buffer("freqs", torch.exp(-math.log(10000.0) * torch.arange(half) / half))
        self.time_mlp = nn.Sequential(nn.Linear(self.freq_dim, emb), nn.SiLU(), nn.Linear(emb, emb))
        self.stem = conv(1, channels[0])
        last = len(channels) - 1
        self.down = nn.ModuleList()
        self.downsample = nn.ModuleList()
        cin = channels[0]
        for i, c in enumerate(channels):
            self.down.append(nn.ModuleList([ResBlock1d(cin, c, emb), ResBlock1d(c, c, emb)]))
            if i < last:
                self.downsample.append(nn.Conv1d(c, c, 3, 2, 1))
            cin = c
        self.mid1, self.mid2 = ResBlock1d(cin, cin, emb), ResBlock1d(cin, cin, emb)
        self.attn = Attention1d(cin, heads)
        self.up = nn.ModuleList()
        self.upsample = nn.ModuleList()
        for i in reversed(range(len(channels))):
            c = channels[i]
            self.up.append(nn.ModuleList([ResBlock1d(cin + c, c, emb), ResBlock1d(c, c, emb)]))
            if i > 0:
                self.upsample.append(conv(c, c))
            cin = c
        self.out = nn.Sequential(nn.GroupNorm(GROUPS, cin), nn.SiLU(), conv(cin, 1))

    def forward(self, x: Tensor, t: Tensor) -> Tensor:
        args = t.float()[:, None] * self.freqs[None]
        emb = self.time_mlp(torch.cat([args.sin(), args.cos()], dim=-1).to(x.dtype))
        h, skips = self.stem(x), []
        for i, blocks in enumerate(self.down):
            for block in blocks:
                h = block(h, emb)
            skips.append(h)
            if i < len(self.downsample):
                h = self.downsample[i](h)
        h = self.mid2(self.attn(self.mid1(h, emb)), emb)
        for i, blocks in enumerate(self.up):
            h = torch.cat([h, skips.pop()], dim=1)
            for block in blocks:
                h = block(h, emb)
            if i < len(self.upsample):
                h = self.upsample[i](F.interpolate(h, scale_factor=2.0, mode="nearest"))
        return self.out(h)


def build(device: torch.device, smoke: bool) -> Built:
    batch, samples, channels, emb, heads = (
        (1, 64, (8, 16, 16, 16), 16, 2) if smoke else (4, 16384, (64, 128, 256, 256), 256, 4)
    )
    dtype = low_precision(device)
    model = UNet1d(channels, emb, heads).to(device, dtype).eval()

    @torch.no_grad()
    def step(noisy: Tensor, t: Tensor) -> Tensor:
        return model(noisy, t)

    inputs = [
        (
            torch.randn(batch, 1, samples, device=device, dtype=dtype),
            torch.rand(batch, device=device) * 1000,
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"1-D UNet denoiser: {len(channels)} levels {'-'.join(map(str, channels))} of 2 "
        f"ResBlock1d (k{KERNEL}, GroupNorm, FiLM), mid self-attention over "
        f"{samples >> (len(channels) - 1)} positions, skip concat, b{batch} x {samples} samples",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
