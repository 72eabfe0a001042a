"""A self-attention block beside a depthwise-separable convolution block, on two side streams
(twenty-fifth hold-out), fp32: on one stream 4 sequences of 256 tokens, d 512, through
``nn.MultiheadAttention`` (8 heads of 64, batch-first), a residual add and a LayerNorm; on
the other 4 feature maps of 256 channels at 32 x 32 through a depthwise 3 x 3 convolution
(256 groups, padding 1), a pointwise 1 x 1 convolution 256 -> 256, a BatchNorm in eval mode
(running statistics set to random values at build) and a ReLU. Each block forked onto its
own stream with ``wait_stream`` and joined back; the step returns the sum of the two
outputs' means (a 0-d tensor). GEMMs and an attention kernel on one stream, convolution
and normalization kernels on the other. On a CPU all runs on one stream.

    traceinspect profile attn_beside_conv_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn


class AttentionBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        y, _ = self.attn(x, x, x, need_weights=False)
        return self.norm(x + y)


def separable(c: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(c, c, 3, padding=1, groups=c),
        nn.Conv2d(c, c, 1),
        nn.BatchNorm2d(c),
        nn.ReLU(),
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads, c, side = (2, 4, 8, 2, 4, 8) if smoke else (4, 256, 512, 8, 256, 32)
    attention, conv = AttentionBlock(d, heads), separable(c)
    random_batch_norm_stats(conv)
    modules = nn.ModuleList([attention, conv]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(tokens: Tensor, image: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: attention(tokens), lambda: conv(image)])
        return a.mean() + b.mean()

    inputs = [
        (
            torch.randn(batch, n, d, device=device),
            torch.randn(batch, c, side, side, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"self-attention d{d} {heads} heads on {n} tokens beside a separable conv {c}ch "
        f"{side}x{side} on 2 streams, b{batch}",
        [modules],
    )


if __name__ == "__main__":
    main(build, __doc__)
