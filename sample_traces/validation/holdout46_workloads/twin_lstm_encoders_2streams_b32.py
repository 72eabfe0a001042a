"""Query and passage encoders for retrieval, each a unidirectional LSTM on its own side stream,
joined on the current stream (forty-sixth hold-out: two cuDNN LSTMs side by side): 32
queries of 24 tokens and 32 passages of 96 tokens, each ``Embedding(30000, 300)`` then a
1-layer ``nn.LSTM(300, 512)`` (batch_first; the last hidden state); after the join the 32 x 32
dot-product scores, softmax over passages in fp32. bf16 on a GPU, eval mode, no gradients.
Inputs: query ids (32, 24) and passage ids (32, 96), int64. Returns (32, 32) fp32.

    traceinspect profile twin_lstm_encoders_2streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


class Encoder(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, 1, batch_first=True)

    def forward(self, ids: Tensor) -> Tensor:
        return self.rnn(self.embed(ids))[1][0][-1]


def build(device: torch.device, smoke: bool) -> Built:
    batch, qlen, plen, vocab, emb, hidden = (
        (2, 3, 5, 50, 8, 8) if smoke else (32, 24, 96, 30000, 300, 512)
    )
    query, passage = Encoder(vocab, emb, hidden), Encoder(vocab, emb, hidden)
    model = nn.ModuleList([query, passage]).to(device, low_precision(device)).eval()
    query.rnn.flatten_parameters()
    passage.rnn.flatten_parameters()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(q: Tensor, p: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: query(q), lambda: passage(p)])
        return (a @ b.t()).float().softmax(dim=-1)

    inputs = [
        (
            torch.randint(0, vocab, (batch, qlen), device=device),
            torch.randint(0, vocab, (batch, plen), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"twin LSTM {hidden} encoders ({qlen} and {plen} tokens) on 2 side streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
