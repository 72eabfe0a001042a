"""A HiFi-GAN V2-style vocoder generator at batch 1 (thirty-fourth hold-out): a mel
spectrogram (1, 80, 128) through ``Conv1d(80, 128, 7, padding=3)``, then 4 upsampling
stages, each a LeakyReLU (slope 0.1) and a ``ConvTranspose1d`` (rates 8, 8, 2, 2, kernels
16, 16, 4, 4, padding (kernel - rate) / 2, channels halving 128 -> 64 -> 32 -> 16 -> 8)
followed by a multi-receptive-field fusion block: 3 residual blocks (kernel sizes 3, 7 and
11), each 3 residual units of LeakyReLU 0.1 -> a dilated ``Conv1d`` (dilations 1, 3, 5,
"same" padding) -> LeakyReLU 0.1 -> an undilated ``Conv1d`` of the same kernel, added to the
unit's input; the three residual blocks' outputs averaged. Then a final LeakyReLU (torch's
default slope 0.01, as the reference implementation has it), ``Conv1d(8, 1, 7,
padding=3)`` and tanh. The weight norm of training is folded away (plain convolutions), as
for inference. 128 frames -> 32,768 samples (hop 256); 4 transposed and 74 plain
convolutions, many of them on few channels over long signals. bf16 on a GPU, eval mode, no
gradients. Input: mel (1, 80, 128). Returns the waveform (1, 1, 32768).

    traceinspect profile hifigan_generator_b1.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

SLOPE = 0.1
RATES, UP_KERNELS = (8, 8, 2, 2), (16, 16, 4, 4)
RES_KERNELS, DILATIONS = (3, 7, 11), (1, 3, 5)


class ResBlock(nn.Module):
    """HiFi-GAN's ResBlock1: per dilation, lrelu -> dilated conv -> lrelu -> conv, + input."""

    def __init__(self, channels: int, kernel: int) -> None:
        super().__init__()
        self.convs1 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel, dilation=d, padding=d * (kernel - 1) // 2)
            for d in DILATIONS
        )
        self.convs2 = nn.ModuleList(
            nn.Conv1d(channels, channels, kernel, padding=(kernel - 1) // 2) for _ in DILATIONS
        )

    def forward(self, x: Tensor) -> Tensor:
        for c1, c2 in zip(self.convs1, self.convs2, strict=True):
            x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, SLOPE)), SLOPE))
        return x


class Generator(nn.Module):
    def __init__(self, mels: int, channels: int) -> None:
        super().__init__()
        self.conv_pre = nn.Conv1d(mels, channels, 7, padding=3)
        self.ups = nn.ModuleList()
        self.mrfs = nn.ModuleList()
        for i, (rate, kernel) in enumerate(zip(RATES, UP_KERNELS, strict=True)):
            cin, cout = channels >> i, channels >> (i + 1)
            self.ups.append(nn.ConvTranspose1d(cin, cout, kernel, rate, (kernel - rate) // 2))
            self.mrfs.append(nn.ModuleList(ResBlock(cout, k) for k in RES_KERNELS))
        self.conv_post = nn.Conv1d(channels >> len(RATES), 1, 7, padding=3)

    def forward(self, mel: Tensor) -> Tensor:
        x = self.conv_pre(mel)
        for up, mrf in zip(self.ups, self.mrfs, strict=True):
            x = up(F.leaky_relu(x, SLOPE))
            total = None
            for block in mrf:
                y = block(x)
                total = y if total is None else total + y
            assert total is not None
            x = total / len(mrf)
        return torch.tanh(self.conv_post(F.leaky_relu(x)))


def build(device: torch.device, smoke: bool) -> Built:
    mels, frames, channels = (8, 8, 16) if smoke else (80, 128, 128)
    dtype = low_precision(device)
    model = Generator(mels, channels).to(device, dtype).eval()

    @torch.no_grad()
    def step(mel: Tensor) -> Tensor:
        return model(mel)

    inputs = [(torch.randn(1, mels, frames, device=device, dtype=dtype),) for _ in range(2)]
    hop = math.prod(RATES)
    return Built(
        step,
        inputs,
        f"HiFi-GAN V2-style generator, {channels} channels, {frames} frames -> "
        f"{frames * hop} samples, b1",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
