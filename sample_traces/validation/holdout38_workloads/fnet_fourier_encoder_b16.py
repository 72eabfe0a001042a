"""An FNet sequence classifier (Lee-Thorp et al., 2022, "FNet: Mixing Tokens with Fourier
Transforms", laid out as Hugging Face's ``FNetForSequenceClassification``), attention-free,
at batch 16 (thirty-eighth hold-out): 16 sequences of 512 token ids, width 512, bf16 on a GPU
(the Fourier transforms in fp32), eval mode, no gradients. Embeddings: ``nn.Embedding(32000,
512)`` of the ids plus a learned position embedding (512 x 512) plus the token-type-0
embedding (one row of a (4, 512) table), LayerNorm and the embedding projection ``Linear(512,
512)``. 6 post-LayerNorm layers, each: the Fourier mixing, the real part of the 2-D FFT over
the sequence and the hidden dimensions (``torch.fft.fftn(x.float(), dim=(1, 2)).real``, cast
back to bf16; cuFFT has no bf16), the residual add and LayerNorm; then ``Linear(512, 2048)``
+ GELU (tanh approximation, as FNet's ``gelu_new``) + ``Linear(2048, 512)``, the residual add
and LayerNorm. The pooler, ``Linear(512, 512)`` + tanh of the first token, and the classifier
``Linear(512, 3)``. Input: the token ids (16, 512) int64. Returns the (16, 3) class logits
(fp32).

    traceinspect profile fnet_fourier_encoder_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, TYPE_VOCAB, CLASSES = 6, 4, 3


class FNetLayer(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.mix_norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.out_norm = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        mixed = torch.fft.fftn(x.float(), dim=(1, 2)).real.to(x.dtype)
        x = self.mix_norm(x + mixed)
        return self.out_norm(x + self.fc2(F.gelu(self.fc1(x), approximate="tanh")))


class FNetClassifier(nn.Module):
    def __init__(self, vocab: int, seq: int, d: int, hidden: int) -> None:
        super().__init__()
        self.words = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(seq, d)
        self.types = nn.Embedding(TYPE_VOCAB, d)
        self.embed_norm = nn.LayerNorm(d)
        self.projection = nn.Linear(d, d)
        self.layers = nn.Sequential(*(FNetLayer(d, hidden) for _ in range(LAYERS)))
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, CLASSES)

    def forward(self, ids: Tensor) -> Tensor:
        x = self.words(ids) + self.positions.weight + self.types.weight[0]
        x = self.layers(self.projection(self.embed_norm(x)))
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden, vocab = (2, 16, 32, 64, 100) if smoke else (16, 512, 512, 2048, 32000)
    dtype = low_precision(device)
    model = FNetClassifier(vocab, seq, d, hidden).to(device, dtype).eval()

    @torch.no_grad()
    def step(ids: Tensor) -> Tensor:
        return model(ids).float()

    inputs = [(torch.randint(0, vocab, (batch, seq), device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"FNet, {LAYERS} layers d{d} (FFT mixing in fp32, FFN {hidden}) + pooler + classifier, "
        f"b{batch} x {seq}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
