"""A temporal convolutional network (Bai et al., 2018, ``TemporalConvNet``) for polyphonic
music on 32 piano rolls of 1024 steps x 88 keys, bf16 (thirteenth hold-out), inference.
Eight ``TemporalBlock`` levels of 128 channels, kernel 3, dilations 1, 2, 4, ..., 128
(receptive field 1021 steps), with plain convolutions (no weight norm) and dropout off:
each block is conv1d (padding 2 x dilation on both sides), ``Chomp1d`` (the trailing
padding sliced off with ``.contiguous()``, a copy), ReLU, the same again, then ReLU of the
block output plus the residual (a conv1x1 88->128 downsample on the first block). A Linear
128->88 on every step and a ``sigmoid`` give the note probabilities. Some 70 kernels; the
16 dilated convolutions (32 x 128 x 1024 activations) dominate the GPU time. Input: the
piano rolls (32 x 88 x 1024). Returns the note probabilities (32 x 1024 x 88).

    traceinspect profile tcn_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class TemporalBlock(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, dilation: int) -> None:
        super().__init__()
        self.chomp = (kernel - 1) * dilation
        self.conv1 = nn.Conv1d(cin, cout, kernel, padding=self.chomp, dilation=dilation)
        self.conv2 = nn.Conv1d(cout, cout, kernel, padding=self.chomp, dilation=dilation)
        self.downsample = nn.Conv1d(cin, cout, 1) if cin != cout else None

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.conv1(x)[:, :, : -self.chomp].contiguous())
        h = torch.relu(self.conv2(h)[:, :, : -self.chomp].contiguous())
        res = x if self.downsample is None else self.downsample(x)
        return torch.relu(h + res)


class TCN(nn.Module):
    def __init__(self, cin: int, channels: int, levels: int, kernel: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(
            *(TemporalBlock(cin if i == 0 else channels, channels, kernel, 2**i)
              for i in range(levels))
        )  # fmt: skip
        self.head = nn.Linear(channels, cin)

    def forward(self, x: Tensor) -> Tensor:  # (B, keys, T)
        return torch.sigmoid(self.head(self.blocks(x).transpose(1, 2)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, keys, steps, channels, levels = (2, 8, 64, 16, 4) if smoke else (32, 88, 1024, 128, 8)
    dtype = low_precision(device)
    model = TCN(keys, channels, levels, 3).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [((torch.rand(batch, keys, steps, device=device) < 0.1).to(dtype),) for _ in range(2)]
    description = (
        f"TCN, {levels} levels of {channels} channels (kernel 3, dilations 1..{2 ** (levels - 1)})"
        f", batch {batch} x {steps} steps x {keys} keys"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
