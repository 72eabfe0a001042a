"""BiLSTM sequence tagger over 16 sentences of 48 tokens, bf16 (seventh hold-out): an
embedding (vocabulary 20000, d 128), a 2-layer bidirectional ``nn.LSTM`` (hidden 256 per
direction, batch_first, no dropout) run as one cuDNN call (the module, not a cell loop; cuDNN
takes bf16 RNNs on sm80 and later, so the LSTM runs in bf16 on the H200 too), a Linear
512->17 tagger and log_softmax over the 17 tags per token. No packing: every sentence is 48
tokens. Returns 16 x 48 x 17 log-probabilities.

    traceinspect profile bilstm_tagger_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

TAGS = 17


class Tagger(nn.Module):
    def __init__(self, vocab: int, d: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, layers, batch_first=True, bidirectional=True)
        self.tagger = nn.Linear(2 * hidden, TAGS)

    def forward(self, tokens: Tensor) -> Tensor:  # tokens: (B, T) int64
        out, _ = self.lstm(self.embed(tokens))
        return torch.log_softmax(self.tagger(out), dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    vocab, d, hidden, layers, tokens, batch = (
        (100, 16, 32, 2, 8, 4) if smoke else (20000, 128, 256, 2, 48, 16)
    )
    dtype = low_precision(device)
    model = Tagger(vocab, d, hidden, layers).to(device=device, dtype=dtype).eval()
    model.lstm.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it

    @torch.no_grad()
    def step(words: Tensor) -> Tensor:
        return model(words)

    inputs = [(torch.randint(0, vocab, (batch, tokens), device=device),) for _ in range(2)]
    description = f"BiLSTM tagger, {layers} x {hidden} x 2 directions, batch {batch} x {tokens}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
