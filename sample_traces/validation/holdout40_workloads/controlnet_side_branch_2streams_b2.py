"""A ControlNet step (Zhang et al., 2023) on a cut-down UNet: the UNet's encoder and
ControlNet's trainable copy of it, fed by a conditioning image, on two side streams, the copy's
zero-convolution outputs added into the encoder's skip features at the join, then the mid block
and one decoder level on the current stream (fortieth hold-out): 2 latents of 4 x 64 x 64 (a 512
x 512 image) and 2 conditioning images of 3 x 512 x 512, bf16 on a GPU, eval mode, no gradients,
no timestep embedding. Every residual block: GroupNorm(32 groups, eps 1e-6) + SiLU + 3 x 3
``Conv2d``, GroupNorm + SiLU + 3 x 3 ``Conv2d``, plus the input (through a 1 x 1 ``Conv2d``
where the channels change). The encoder: ``Conv2d(4, 128, 3, padding 1)``, then three resolution
levels, a residual block 128 -> 128 at 64 x 64, 128 -> 256 at 32 x 32 and 256 -> 256 at 16 x 16,
a 3 x 3 stride-2 ``Conv2d`` between levels; its skip features are the three blocks' outputs, (2,
128, 64, 64), (2, 256, 32, 32) and (2, 256, 16, 16). Side stream 1: the encoder on the latents.
Side stream 2, the control branch: ControlNet's hint encoder on the conditioning image (3 x 3
convolutions each followed by SiLU, 3 -> 16 -> 16 -> 32 (stride 2) -> 32 -> 96 (stride 2) -> 96
-> 256 (stride 2), then ``Conv2d(256, 128, 3, padding 1)``, 512 -> 64 pixels); the copy of the
encoder (same layout, weights copied from it at build), its ``conv_in`` output plus the hint
features; and one zero convolution ``Conv2d(c, c, 1)`` per skip feature (default initialization,
not zeros, so the sum is not the encoder's skips alone). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
After the join, on the current stream: each skip plus its zero-conv output; the mid block on the
16 x 16 skip, a residual block, a single-head self-attention block over the 256 positions
(GroupNorm, ``Conv2d(256, 768, 1)`` queries / keys / values, SDPA, ``Conv2d(256, 256, 1)``,
residual add) and a residual block; one decoder level, the mid output concatenated with the 16 x
16 skip (512 channels), a residual block 512 -> 256, nearest 2x upsampling and ``Conv2d(256,
256, 3, padding 1)`` to 32 x 32. On a CPU the branches run in order. Inputs: latents (2, 4, 64,
64), conditioning images (2, 3, 512, 512). Returns the decoder level's output (2, 256, 32, 32)
and the two controlled skips the later levels would read, (2, 128, 64, 64) and (2, 256, 32, 32),
bf16 on a GPU.

    traceinspect profile controlnet_side_branch_2streams_b2.py
"""

from __future__ import annotations

import copy
from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

GROUPS, EPS, HINT = 32, 1e-6, (16, 16, 32, 32, 96, 96, 256)


def group_norm(c: int) -> nn.GroupNorm:
    return nn.GroupNorm(min(GROUPS, c), c, eps=EPS)


class ResBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            group_norm(cin), nn.SiLU(), nn.Conv2d(cin, cout, 3, padding=1),
            group_norm(cout), nn.SiLU(), nn.Conv2d(cout, cout, 3, padding=1),
        )  # fmt: skip
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: Tensor) -> Tensor:
        return self.skip(x) + self.body(x)


class AttnBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.norm, self.qkv, self.proj = group_norm(c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).flatten(2).transpose(1, 2).chunk(3, dim=-1)
        att = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
        return x + self.proj(att.transpose(1, 2).reshape(b, c, h, w))


class Encoder(nn.Module):
    def __init__(self, cin: int, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(cin, widths[0], 3, padding=1)
        self.blocks = nn.ModuleList(ResBlock(a, b) for a, b in pairwise((widths[0], *widths)))
        self.downs = nn.ModuleList(nn.Conv2d(c, c, 3, 2, 1) for c in widths[:-1])

    def forward(self, x: Tensor, hint: Tensor | None = None) -> tuple[Tensor, ...]:
        h = self.conv_in(x)
        if hint is not None:
            h = h + hint
        skips = []
        for i, block in enumerate(self.blocks):
            h = block(h)
            skips.append(h)
            if i < len(self.downs):
                h = self.downs[i](h)
        return tuple(skips)


class ControlBranch(nn.Module):
    def __init__(self, encoder: Encoder, widths: tuple[int, ...]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(pairwise((3, *HINT))):
            layers += [nn.Conv2d(a, b, 3, 2 if i in (2, 4, 6) else 1, 1), nn.SiLU()]
        layers.append(nn.Conv2d(HINT[-1], widths[0], 3, padding=1))
        self.hint = nn.Sequential(*layers)
        self.copy = copy.deepcopy(encoder)
        self.zero_convs = nn.ModuleList(nn.Conv2d(c, c, 1) for c in widths)

    def forward(self, x: Tensor, cond: Tensor) -> tuple[Tensor, ...]:
        skips = self.copy(x, self.hint(cond))
        return tuple(zc(s) for zc, s in zip(self.zero_convs, skips, strict=True))


class MidAndDecoder(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.mid = nn.Sequential(ResBlock(c, c), AttnBlock(c), ResBlock(c, c))
        self.dec = ResBlock(2 * c, c)
        self.up = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, skip: Tensor) -> Tensor:
        h = self.dec(torch.cat([self.mid(skip), skip], dim=1))
        return self.up(F.interpolate(h, scale_factor=2.0, mode="nearest"))


def build(device: torch.device, smoke: bool) -> Built:
    batch, latent, widths = (1, 16, (8, 16, 16)) if smoke else (2, 64, (128, 256, 256))
    dtype = low_precision(device)
    encoder = Encoder(4, widths)
    control = ControlBranch(encoder, widths)
    head = MidAndDecoder(widths[-1])
    model = nn.ModuleList([encoder, control, head]).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(latents: Tensor, cond: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        skips, ctrl = fork_join(
            device, streams, [lambda: encoder(latents), lambda: control(latents, cond)]
        )
        s0, s1, s2 = (s + c for s, c in zip(skips, ctrl, strict=True))
        return head(s2), s0, s1

    inputs = [
        (
            torch.randn(batch, 4, latent, latent, device=device, dtype=dtype),
            torch.rand(batch, 3, 8 * latent, 8 * latent, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"ControlNet: UNet encoder ({'/'.join(map(str, widths))}, GroupNorm + SiLU resblocks) "
        f"and its hint-fed control copy on 2 side streams + zero-conv adds, mid block and one "
        f"decoder level, b{batch} at {latent}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
