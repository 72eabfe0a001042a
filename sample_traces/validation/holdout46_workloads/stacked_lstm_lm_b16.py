"""A 3-layer LSTM language model scoring 16 sequences of 64 tokens (forty-sixth hold-out: a
deep unidirectional cuDNN LSTM, whose layers cuDNN pipelines on streams of its own):
``Embedding(8000, 512)``, ``nn.LSTM(512, 512, 3)`` (batch_first, one cuDNN call), a tied output
projection to the 8,000-word vocabulary and log-softmax in fp32. bf16 on a GPU, eval mode, no
gradients. Input: token ids (16, 64) int64. Returns (16, 64, 8000) fp32.

    traceinspect profile stacked_lstm_lm_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, vocab, width = (2, 5, 50, 8) if smoke else (16, 64, 8000, 512)
    embed = nn.Embedding(vocab, width)
    rnn = nn.LSTM(width, width, 3, batch_first=True)
    model = nn.ModuleList([embed, rnn]).to(device, low_precision(device)).eval()
    rnn.flatten_parameters()

    @torch.no_grad()
    def step(ids: Tensor) -> Tensor:
        h = rnn(embed(ids))[0]
        return (h @ embed.weight.t()).float().log_softmax(dim=-1)

    inputs = [(torch.randint(0, vocab, (batch, tokens), device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"3-layer LSTM LM {width}, {tokens} tokens, vocab {vocab}, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
