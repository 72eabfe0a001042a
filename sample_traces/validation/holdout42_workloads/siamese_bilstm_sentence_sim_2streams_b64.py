"""A siamese sentence-pair classifier in the InferSent layout (Conneau et al., 2017: one shared
BiLSTM-max sentence encoder, the features [u, v, |u - v|, u * v], an MLP over 3 NLI classes),
the encoder applied to sentence A's batch on one side stream and sentence B's on the other, the
classifier after the join (forty-second hold-out): 64 pairs of 32 tokens each, bf16 on a GPU
(the LSTM too: cuDNN takes bf16 RNNs on sm80 and later; the softmax in fp32), eval mode, no
gradients. The encoder, one module and one set of weights in both branches:
``Embedding(20000, 300)`` of the tokens, a 1-layer bidirectional ``nn.LSTM(300, 256)``
(batch_first, one cuDNN call over the 32 tokens), (64, 32, 512), and max pooling over time,
(64, 512). Side stream 1: the encoder on sentence A's tokens; side stream 2: on sentence B's.
Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the
branch outputs outside capture). After the join, on the current stream: the features
[u, v, |u - v|, u * v], (64, 2048), ``Linear(2048, 512)`` + ReLU, ``Linear(512, 3)``, and the
softmax over the 3 classes in fp32. On a CPU the branches run in order. Inputs: sentence A and
sentence B tokens, (64, 32) int64 each. Returns the class probabilities (64, 3), fp32.

    traceinspect profile siamese_bilstm_sentence_sim_2streams_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES = 3


class SentenceEncoder(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, 1, batch_first=True, bidirectional=True)

    def forward(self, tokens: Tensor) -> Tensor:
        out, _ = self.rnn(self.embed(tokens))
        return out.amax(dim=1)  # max pooling over time, (b, 2 hidden)


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, vocab, emb, hidden, mlp = (
        (2, 6, 50, 16, 16, 32) if smoke else (64, 32, 20000, 300, 256, 512)
    )
    dtype = low_precision(device)
    encoder = SentenceEncoder(vocab, emb, hidden)
    classifier = nn.Sequential(nn.Linear(8 * hidden, mlp), nn.ReLU(), nn.Linear(mlp, CLASSES))
    model = nn.ModuleList([encoder, classifier]).to(device, dtype).eval()
    encoder.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(sent_a: Tensor, sent_b: Tensor) -> Tensor:
        u, v = fork_join(device, streams, [lambda: encoder(sent_a), lambda: encoder(sent_b)])
        feats = torch.cat([u, v, (u - v).abs(), u * v], dim=1)
        return classifier(feats).float().softmax(dim=-1)

    inputs = [
        tuple(torch.randint(0, vocab, (batch, tokens), device=device) for _ in range(2))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"siamese BiLSTM-max sentence encoder (emb {emb}, hidden {hidden}, {tokens} tokens) on "
        f"2 side streams, shared weights + InferSent features and MLP over {CLASSES} classes, "
        f"b{batch} pairs",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
