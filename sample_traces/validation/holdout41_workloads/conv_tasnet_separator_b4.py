"""Conv-TasNet (Luo and Mesgarani, 2019: a learned 1-D conv encoder, a TCN mask estimator of
dilated depthwise-separable conv blocks with PReLU and global layer norm, a transposed-conv
decoder) separating 2 speakers from 4 mixtures of 4 s at 8 kHz, with the paper's N 512, L 16,
B 128, H 512, P 3, X 8 and R cut from 3 to 2 (forty-first hold-out): bf16 on a GPU (the gLN
statistics accumulate in fp32 inside ``torch.var_mean``), eval mode, no gradients. Encoder:
``Conv1d(1, 512, 16, stride 8, bias=False)`` + ReLU on the (4, 1, 32000) mixtures, (4, 512,
3999) frames. Separator: gLN(512), the bottleneck ``Conv1d(512, 128, 1)``, then 2 repeats of 8
blocks with dilations 1, 2, ..., 128; each block ``Conv1d(128, 512, 1)``, PReLU, gLN,
depthwise ``Conv1d(512, 512, 3, groups 512, dilation d, padding d)``, PReLU, gLN, and two 1 x 1
convolutions back to 128 channels, the residual (added to the block input) and the skip (summed
over the 16 blocks). gLN, the global layer norm over channels and time per mixture:
``torch.var_mean`` over (channels, frames), then one ``torch.addcmul`` with the per-channel
scale gamma / sqrt(var + 1e-8) and shift beta - mean x scale. The mask head: PReLU on the skip
sum, ``Conv1d(128, 1024, 1)`` and a sigmoid, 2 masks of (512, 3999) per mixture. Decoder: the
encoder output times each mask, (8, 512, 3999), through ``ConvTranspose1d(512, 1, 16, stride 8,
bias=False)`` to (8, 1, 32000). Memory-bound passes over (4, 512, 3999) activations (8 M values)
between 1 x 1 convolutions over 4 x 3,999 frames. Input: the mixtures (4, 1, 32000). Returns the
separated sources (4, 2, 32000) (bf16 on a GPU).

    traceinspect profile conv_tasnet_separator_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

SPEAKERS, KERNEL, BLOCKS, REPEATS, EPS = 2, 16, 8, 2, 1e-8


class GlobalLayerNorm(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(c, 1)), nn.Parameter(torch.zeros(c, 1))

    def forward(self, x: Tensor) -> Tensor:  # (b, c, t)
        var, mean = torch.var_mean(x, dim=(1, 2), keepdim=True, correction=0)
        scale = self.gamma * torch.rsqrt(var + EPS)
        return torch.addcmul(self.beta - mean * scale, x, scale)


class TCNBlock(nn.Module):
    def __init__(self, b: int, h: int, dilation: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(b, h, 1), nn.PReLU(), GlobalLayerNorm(h),
            nn.Conv1d(h, h, 3, padding=dilation, dilation=dilation, groups=h),
            nn.PReLU(), GlobalLayerNorm(h),
        )  # fmt: skip
        self.res, self.skip = nn.Conv1d(h, b, 1), nn.Conv1d(h, b, 1)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        y = self.body(x)
        return x + self.res(y), self.skip(y)


class ConvTasNet(nn.Module):
    def __init__(self, n: int, b: int, h: int) -> None:
        super().__init__()
        self.n = n
        self.encoder = nn.Conv1d(1, n, KERNEL, KERNEL // 2, bias=False)
        self.norm, self.bottleneck = GlobalLayerNorm(n), nn.Conv1d(n, b, 1)
        self.blocks = nn.ModuleList(
            TCNBlock(b, h, 2**i) for _ in range(REPEATS) for i in range(BLOCKS)
        )
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(b, SPEAKERS * n, 1), nn.Sigmoid())
        self.decoder = nn.ConvTranspose1d(n, 1, KERNEL, KERNEL // 2, bias=False)

    def forward(self, mix: Tensor) -> Tensor:
        w = torch.relu(self.encoder(mix))  # (batch, n, frames)
        x = self.bottleneck(self.norm(w))
        skips = torch.zeros_like(x)
        for block in self.blocks:
            x, s = block(x)
            skips = skips + s
        batch, _, frames = w.shape
        masks = self.mask(skips).view(batch, SPEAKERS, self.n, frames)
        masked = (w[:, None] * masks).view(batch * SPEAKERS, self.n, frames)
        return self.decoder(masked).view(batch, SPEAKERS, -1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, samples, n, b, h = (2, 800, 32, 16, 32) if smoke else (4, 32000, 512, 128, 512)
    dtype = low_precision(device)
    model = ConvTasNet(n, b, h).to(device, dtype).eval()

    @torch.no_grad()
    def step(mix: Tensor) -> Tensor:
        return model(mix)

    inputs = [(torch.randn(batch, 1, samples, device=device, dtype=dtype) * 0.1,) for _ in range(2)]
    frames = (samples - KERNEL) // (KERNEL // 2) + 1
    return Built(
        step,
        inputs,
        f"Conv-TasNet: conv encoder {n} x L{KERNEL} ({frames} frames), TCN {REPEATS} x {BLOCKS} "
        f"dilated separable blocks (B {b}, H {h}, PReLU + gLN), {SPEAKERS} masks, transposed-conv "
        f"decoder, b{batch} x {samples} samples",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
