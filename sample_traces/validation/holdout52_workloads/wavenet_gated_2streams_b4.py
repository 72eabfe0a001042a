"""Two WaveNet stacks (van den Oord et al., 2016) over 4 clips, a fine one over 16,000 samples (one
second at 16 kHz) and a coarse one over the same clips average-pooled by 4 (4,000 frames), one on
each of two side streams (fifty-second hold-out: two chains of mid-sized memory-bound kernels, the
gated activations, residual and skip sums, of unequal length side by side, about 10 launches a
layer, joined on the current stream), laid out as r9y9's ``wavenet_vocoder`` builds its residual
stack. Each stack: an input ``Conv1d(1, 64, 1)``, then 10 residual layers with dilations 1, 2, 4,
..., 512, each a left pad by the dilation (``F.pad``, the causal shift) and a dilated ``Conv1d(64,
128, 2)``, split into halves a and b for the gated activation tanh(a) * sigmoid(b), a 1x1 residual
``Conv1d(64, 64)`` added to the layer's input and a 1x1 skip ``Conv1d(64, 128)`` summed over the
layers. Side stream 1: the fine stack over the clip (4, 1, 16000). Side stream 2: the clip
``F.avg_pool1d`` by 4, shifted right by one frame (a left pad, the last frame dropped) so that a
sample sees only whole earlier frames, and the coarse stack over those (4, 1, 4000). After the join
(the project's ``fork_join``: ``wait_stream``, and ``record_stream`` on the branch outputs outside
capture), on the current stream: the coarse skip sum up-sampled to 16,000 positions
(``repeat_interleave(4)``) and added to the fine one, ReLU, a 1x1 ``Conv1d(128, 256)`` and a softmax
over the 256 mu-law classes per sample. bf16 on a GPU (the fine stack's activations 8 MB a tensor at
64 channels, 16 MB at 128), eval mode, no gradients. Input: the clips (4, 1, 16000), uniform in [-1,
1). Returns the class probabilities (4, 256, 16000).

    traceinspect profile wavenet_gated_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, POOL = 256, 4


class ResidualLayer(nn.Module):
    def __init__(self, res: int, skip: int, dilation: int) -> None:
        super().__init__()
        self.dilation = dilation
        self.conv = nn.Conv1d(res, 2 * res, 2, dilation=dilation)
        self.res = nn.Conv1d(res, res, 1)
        self.skip = nn.Conv1d(res, skip, 1)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        a, b = self.conv(F.pad(x, (self.dilation, 0))).chunk(2, dim=1)
        h = torch.tanh(a) * torch.sigmoid(b)
        return x + self.res(h), self.skip(h)


class Stack(nn.Module):
    """The input convolution and the residual layers; returns the skip sum (B, skip, T)."""

    def __init__(self, res: int, skip: int, layers: int) -> None:
        super().__init__()
        self.start = nn.Conv1d(1, res, 1)
        self.layers = nn.ModuleList(ResidualLayer(res, skip, 2**i) for i in range(layers))

    def forward(self, audio: Tensor) -> Tensor:  # audio: (B, 1, T)
        x, skips = self.layers[0](self.start(audio))
        for layer in self.layers[1:]:
            x, s = layer(x)
            skips = skips + s
        return skips


class TwoRateWaveNet(nn.Module):
    def __init__(self, res: int, skip: int, layers: int) -> None:
        super().__init__()
        self.fine = Stack(res, skip, layers)
        self.coarse = Stack(res, skip, layers)
        self.head = nn.Conv1d(skip, CLASSES, 1)

    def coarse_skips(self, audio: Tensor) -> Tensor:
        frames = F.avg_pool1d(audio, POOL)
        return self.coarse(F.pad(frames, (1, 0))[..., :-1])


def build(device: torch.device, smoke: bool) -> Built:
    batch, samples, res, skip, layers = (2, 256, 8, 16, 10) if smoke else (4, 16000, 64, 128, 10)
    dtype = low_precision(device)
    model = TwoRateWaveNet(res, skip, layers).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(audio: Tensor) -> Tensor:
        fine, coarse = fork_join(
            device, streams, [lambda: model.fine(audio), lambda: model.coarse_skips(audio)]
        )
        skips = fine + coarse.repeat_interleave(POOL, dim=-1)
        return torch.softmax(model.head(torch.relu(skips)), dim=1)

    inputs = [
        (torch.rand(batch, 1, samples, device=device, dtype=dtype) * 2 - 1,) for _ in range(2)
    ]
    description = (
        f"WaveNet gated stacks: {layers} layers x {samples} and x {samples // POOL} samples, "
        f"res {res} skip {skip}, softmax {CLASSES}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
