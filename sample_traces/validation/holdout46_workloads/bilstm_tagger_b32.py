"""A BiLSTM sequence tagger on the current stream (forty-sixth hold-out: one cuDNN
bidirectional LSTM, which cuDNN runs on two streams of its own): 32 sentences of 60 tokens,
``Embedding(30000, 300)``, a 2-layer bidirectional ``nn.LSTM(300, 256)`` (batch_first, one cuDNN
call), ``Linear(512, 9)`` to BIO tags over four entity types, log-softmax in fp32. bf16 on a
GPU, eval mode, no gradients. Input: token ids (32, 60) int64. Returns (32, 60, 9) fp32.

    traceinspect profile bilstm_tagger_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, vocab, emb, hidden = (2, 5, 50, 8, 8) if smoke else (32, 60, 30000, 300, 256)
    embed = nn.Embedding(vocab, emb)
    rnn = nn.LSTM(emb, hidden, 2, batch_first=True, bidirectional=True)
    out = nn.Linear(2 * hidden, 9)
    model = nn.ModuleList([embed, rnn, out]).to(device, low_precision(device)).eval()
    rnn.flatten_parameters()

    @torch.no_grad()
    def step(ids: Tensor) -> Tensor:
        return out(rnn(embed(ids))[0]).float().log_softmax(dim=-1)

    inputs = [(torch.randint(0, vocab, (batch, tokens), device=device),) for _ in range(2)]
    return Built(step, inputs, f"BiLSTM tagger 2x{hidden} over {tokens} tokens, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
