"""WaveNet stack over 4 clips of 4096 samples (4 x 1 x 4096), bf16 (sixth hold-out): a causal
input Conv1d 1->64 (kernel 1), then 10 residual layers with dilations 1, 2, 4, ..., 512, each
a left pad by the dilation (``F.pad``) and a dilated Conv1d 64->128 with kernel 2, the gated
activation tanh(filter) * sigmoid(gate) over its two halves, a 1x1 residual Conv1d 64->64
added to the layer's input and a 1x1 skip Conv1d 64->64 summed over the layers; the output
head is ReLU, a 1x1 Conv1d 64->256 (mu-law classes) per sample.

    traceinspect profile wavenet_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES = 256


class ResidualLayer(nn.Module):
    def __init__(self, c: int, dilation: int) -> None:
        super().__init__()
        self.dilation = dilation
        self.conv = nn.Conv1d(c, 2 * c, 2, dilation=dilation)
        self.res, self.skip = nn.Conv1d(c, c, 1), nn.Conv1d(c, c, 1)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        filt, gate = self.conv(F.pad(x, (self.dilation, 0))).chunk(2, dim=1)
        h = torch.tanh(filt) * torch.sigmoid(gate)
        return x + self.res(h), self.skip(h)


class WaveNet(nn.Module):
    def __init__(self, c: int, layers: int) -> None:
        super().__init__()
        self.start = nn.Conv1d(1, c, 1)
        self.layers = nn.ModuleList(ResidualLayer(c, 2 ** (i % 10)) for i in range(layers))
        self.head = nn.Conv1d(c, CLASSES, 1)

    def forward(self, audio: Tensor) -> Tensor:  # audio: (B, 1, T)
        x, skips = self.layers[0](self.start(audio))
        for layer in self.layers[1:]:
            x, s = layer(x)
            skips = skips + s
        return self.head(torch.relu(skips))


def build(device: torch.device, smoke: bool) -> Built:
    c, layers, samples, batch = (8, 10, 256, 2) if smoke else (64, 10, 4096, 4)
    dtype = low_precision(device)
    model = WaveNet(c, layers).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(audio: Tensor) -> Tensor:
        return model(audio)

    inputs = [(torch.randn(batch, 1, samples, device=device, dtype=dtype),) for _ in range(2)]
    description = f"WaveNet, {layers} layers of {c} channels, batch {batch} x {samples}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
