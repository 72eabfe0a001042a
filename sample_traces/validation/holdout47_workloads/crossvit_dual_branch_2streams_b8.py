"""A CrossViT-style dual-branch vision transformer on two side streams (forty-seventh hold-out:
two token scales of one image, each branch's encoder blocks on its own stream, fused by
CLS-token cross-attention on the current stream between the stages): 8 images of 224 x 224. The
small-patch branch resizes them to 240 x 240 (bilinear) and embeds 12 x 12 patches (400 tokens
+ CLS, d_model 192); the large-patch branch embeds 16 x 16 patches of the 224 x 224 image (196
tokens + CLS, d_model 384); both add learned positions. 3 stages, each 1 pre-norm block in the
small branch and 3 in the large one (6 heads, SDPA attention, a 4x GELU MLP), then the fusion:
each branch's CLS token is projected (LayerNorm, GELU, Linear) to the other branch's width,
attends (6 heads, residual) over itself and the other branch's patch tokens (LayerNorm first),
and is projected back (LayerNorm, GELU, Linear) to replace its CLS token. Then a LayerNorm and
a Linear to 1000 classes per branch, the two logits averaged. bf16 on a GPU, eval mode, no
gradients. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture): three fork-joins a step. Input: (8,
3, 224, 224). Returns (8, 1000) logits.

    traceinspect profile crossvit_dual_branch_2streams_b8.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import Attention, PreNormAttention, ResidualMLP
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


class PatchEmbed(nn.Module):
    def __init__(self, image: int, patch: int, d: int) -> None:
        super().__init__()
        self.image = image
        self.conv = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.image:
            x = F.interpolate(x, size=(self.image, self.image), mode="bilinear")
        tokens = self.conv(x).flatten(2).transpose(1, 2)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1) + self.pos


def blocks(d: int, heads: int, count: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(count):
        layers += [PreNormAttention(d, heads), ResidualMLP(d, 4 * d)]
    return nn.Sequential(*layers)


class CrossFusion(nn.Module):
    """The CLS token of one branch attends over the other branch's tokens."""

    def __init__(self, d_own: int, d_other: int, heads: int) -> None:
        super().__init__()
        self.to_other = nn.Sequential(nn.LayerNorm(d_own), nn.GELU(), nn.Linear(d_own, d_other))
        self.norm = nn.LayerNorm(d_other)
        self.attn = Attention(d_other, heads, cross=True)
        self.back = nn.Sequential(nn.LayerNorm(d_other), nn.GELU(), nn.Linear(d_other, d_own))

    def forward(self, own: Tensor, other: Tensor) -> Tensor:
        cls = self.to_other(own[:, :1])
        ctx = self.norm(torch.cat([cls, other[:, 1:]], dim=1))
        cls = self.back(cls + self.attn(ctx[:, :1], ctx))
        return torch.cat([cls, own[:, 1:]], dim=1)


class CrossViT(nn.Module):
    def __init__(
        self,
        small: tuple[int, int, int, int],
        large: tuple[int, int, int, int],
        heads: int,
        stages: int,
        classes: int,
    ) -> None:
        super().__init__()
        (s_image, s_patch, d_s, s_blocks), (l_image, l_patch, d_l, l_blocks) = small, large
        self.embed_s = PatchEmbed(s_image, s_patch, d_s)
        self.embed_l = PatchEmbed(l_image, l_patch, d_l)
        self.small = nn.ModuleList(blocks(d_s, heads, s_blocks) for _ in range(stages))
        self.large = nn.ModuleList(blocks(d_l, heads, l_blocks) for _ in range(stages))
        self.fuse_s = nn.ModuleList(CrossFusion(d_s, d_l, heads) for _ in range(stages))
        self.fuse_l = nn.ModuleList(CrossFusion(d_l, d_s, heads) for _ in range(stages))
        self.norm_s, self.norm_l = nn.LayerNorm(d_s), nn.LayerNorm(d_l)
        self.head_s, self.head_l = nn.Linear(d_s, classes), nn.Linear(d_l, classes)

    def run_small(self, stage: int, x: Tensor) -> Tensor:
        return self.small[stage](self.embed_s(x) if stage == 0 else x)

    def run_large(self, stage: int, x: Tensor) -> Tensor:
        return self.large[stage](self.embed_l(x) if stage == 0 else x)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, small, large, heads, stages, classes = (
            2, 32, (36, 6, 16, 1), (32, 8, 32, 2), 2, 2, 10
        )  # fmt: skip
    else:
        batch, image, small, large, heads, stages, classes = (
            8, 224, (240, 12, 192, 1), (224, 16, 384, 3), 6, 3, 1000
        )  # fmt: skip
    dtype = low_precision(device)
    net = CrossViT(small, large, heads, stages, classes).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        s, lg = x, x
        for i in range(stages):
            branches = [partial(net.run_small, i, s), partial(net.run_large, i, lg)]
            s, lg = fork_join(device, streams, branches)
            s, lg = net.fuse_s[i](s, lg), net.fuse_l[i](lg, s)
        return (net.head_s(net.norm_s(s[:, 0])) + net.head_l(net.norm_l(lg[:, 0]))) / 2

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"CrossViT, {stages} stages, small branch {small[0]}px/{small[1]} d{small[2]} "
        f"x{small[3]}, large branch {large[0]}px/{large[1]} d{large[2]} x{large[3]}, "
        f"b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
