"""Kim's convolutional sentence classifier (Kim, 2014, "Convolutional Neural Networks for
Sentence Classification", the CNN-multichannel variant, laid out as the common PyTorch ports
with ``Conv2d`` filters spanning the whole embedding) at batch 32 (thirty-eighth hold-out): 32
reviews of 256 token ids, bf16 on a GPU, eval mode (dropout off), no gradients. Two embedding
channels over a vocabulary of 30,000 of width 300, a static and a non-static one (both
``nn.Embedding(30000, 300)``, the second a perturbed copy of the first, set at build), stacked
as 2 input channels, (32, 2, 256, 300). Three filter windows, 3, 4 and 5 tokens, 100 feature
maps each: ``Conv2d(2, 100, (k, 300))`` + ReLU, squeezed to (32, 100, 257 - k), max-over-time
pooling (``amax`` over the positions), the three (32, 100) concatenated to (32, 300), then
``Linear(300, 5)`` (SST-1's five sentiment classes) and ``log_softmax`` in fp32. Input: the
token ids (32, 256) int64. Returns the (32, 5) class log-probabilities (fp32).

    traceinspect profile textcnn_multichannel_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

WINDOWS, MAPS, CLASSES = (3, 4, 5), 100, 5


class KimCNN(nn.Module):
    def __init__(self, vocab: int, d: int, maps: int) -> None:
        super().__init__()
        self.static = nn.Embedding(vocab, d)
        self.non_static = nn.Embedding(vocab, d)
        with torch.no_grad():  # fine-tuned copy of the same pretrained vectors
            self.non_static.weight.copy_(self.static.weight + 0.05 * torch.randn(vocab, d))
        self.convs = nn.ModuleList(nn.Conv2d(2, maps, (k, d)) for k in WINDOWS)
        self.fc = nn.Linear(len(WINDOWS) * maps, CLASSES)

    def forward(self, ids: Tensor) -> Tensor:
        x = torch.stack([self.static(ids), self.non_static(ids)], dim=1)  # (b, 2, n, d)
        pooled = [torch.relu(conv(x)).squeeze(3).amax(dim=2) for conv in self.convs]
        return self.fc(torch.cat(pooled, dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, vocab, d, maps = (2, 16, 100, 16, 8) if smoke else (32, 256, 30000, 300, MAPS)
    dtype = low_precision(device)
    model = KimCNN(vocab, d, maps).to(device, dtype).eval()

    @torch.no_grad()
    def step(ids: Tensor) -> Tensor:
        return model(ids).float().log_softmax(dim=-1)

    inputs = [(torch.randint(0, vocab, (batch, seq), device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Kim CNN-multichannel, 2 x {vocab} x {d} embeddings + windows "
        f"{'/'.join(map(str, WINDOWS))} x {maps} maps + max-over-time, b{batch} x {seq}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
