"""A Temporal Convolutional Network, as sequence models for audio and time series stack
dilated causal convolutions (thirty-second hold-out): 16 sequences of 128 channels x 1,024
steps, fp32, eval mode, no gradients. 8 residual blocks; block i holds two
``nn.Conv1d`` (128 -> 128, kernel 3, dilation 2**i, no padding of their own) made causal
by ``F.pad`` on the left by 2 * 2**i, a ReLU after each, and the block's input added back.
Every convolution's weight is under ``torch.nn.utils.parametrizations.weight_norm``, so
each forward recomputes it from its direction and magnitude (a norm, a division, a
multiplication) before the convolution: 16 small weight chains beside 16 convolutions,
16 pads, 16 ReLUs and 8 adds. Returns the last block's output (16 x 128 x 1,024).

    traceinspect profile tcn_dilated_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

BLOCKS, KERNEL = 8, 3


class Block(nn.Module):
    def __init__(self, channels: int, dilation: int) -> None:
        super().__init__()
        self.pad = (KERNEL - 1) * dilation
        self.conv1 = weight_norm(nn.Conv1d(channels, channels, KERNEL, dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(channels, channels, KERNEL, dilation=dilation))

    def forward(self, x: Tensor) -> Tensor:
        h = F.relu(self.conv1(F.pad(x, (self.pad, 0))))
        h = F.relu(self.conv2(F.pad(h, (self.pad, 0))))
        return h + x


def build(device: torch.device, smoke: bool) -> Built:
    batch, channels, length = (2, 8, 64) if smoke else (16, 128, 1024)
    model = nn.Sequential(*(Block(channels, 2**i) for i in range(BLOCKS))).to(device)
    model.eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, channels, length, device=device),) for _ in range(2)]
    description = (
        f"TCN, {BLOCKS} residual blocks of 2 weight-norm causal dilated convs, {channels} "
        f"channels x {length}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
