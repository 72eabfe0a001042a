"""Shallow-fusion ASR scoring: a bidirectional GRU acoustic encoder with a CTC projection on one
side stream beside an LSTM language model over the hypotheses on the other, the fused
per-sequence score after the join (forty-second hold-out): 8 utterances of 200 frames of 80 mel
features and 8 hypotheses of 40 tokens, bf16 on a GPU (the GRU and LSTM too: cuDNN takes bf16
RNNs on sm80 and later; the log-softmaxes and scores in fp32), eval mode, no gradients. Acoustic
encoder, on side stream 1: a 2-layer bidirectional ``nn.GRU(80, 256)`` (batch_first) run as one
cuDNN call over the 200 frames, (8, 200, 512), and the CTC projection ``Linear(512, 500)`` to
500 tokens (the blank included), (8, 200, 500) logits. Language model, on side stream 2:
``Embedding(500, 256)`` of the hypothesis tokens, a 2-layer ``nn.LSTM(256, 512)`` (batch_first,
one cuDNN call over the 40 tokens) and ``Linear(512, 500)``, (8, 40, 500) logits. Fork and join
are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs
outside capture). After the join, on the current stream, in fp32: the CTC log-softmax over the
500 tokens, pooled (mean) over the 200 frames, (8, 500), and each hypothesis's acoustic score,
the mean of the pooled log-probabilities of its 40 tokens (``gather``); the LM's log-softmax,
each next token's log-probability (``gather`` of tokens 1..39 from positions 0..38), their mean
per sequence; the fused score, acoustic + 0.3 x LM. On a CPU the branches run in order. Inputs:
mel features (8, 200, 80), hypothesis tokens (8, 40) int64. Returns the fused scores (8,), the
acoustic scores (8,) and the LM scores (8,), fp32.

    traceinspect profile bigru_asr_encoder_beside_lm_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LM_WEIGHT = 0.3


class AcousticEncoder(nn.Module):
    def __init__(self, mels: int, hidden: int, vocab: int) -> None:
        super().__init__()
        self.rnn = nn.GRU(mels, hidden, 2, batch_first=True, bidirectional=True)
        self.ctc = nn.Linear(2 * hidden, vocab)

    def forward(self, feats: Tensor) -> Tensor:
        out, _ = self.rnn(feats)
        return self.ctc(out)  # (b, frames, vocab)


class LanguageModel(nn.Module):
    def __init__(self, vocab: int, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, 2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens: Tensor) -> Tensor:
        out, _ = self.rnn(self.embed(tokens))
        return self.out(out)  # (b, tokens, vocab)


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, mels, hidden, vocab, emb, lm_hidden, tokens = (
        (2, 12, 8, 16, 20, 16, 32, 6) if smoke else (8, 200, 80, 256, 500, 256, 512, 40)
    )
    dtype = low_precision(device)
    encoder, lm = AcousticEncoder(mels, hidden, vocab), LanguageModel(vocab, emb, lm_hidden)
    model = nn.ModuleList([encoder, lm]).to(device, dtype).eval()
    encoder.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it
    lm.rnn.flatten_parameters()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(feats: Tensor, hyp: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        ctc_logits, lm_logits = fork_join(
            device, streams, [lambda: encoder(feats), lambda: lm(hyp)]
        )
        pooled = ctc_logits.float().log_softmax(dim=-1).mean(dim=1)  # (b, vocab)
        am_score = pooled.gather(1, hyp).mean(dim=1)
        lm_logp = lm_logits[:, :-1].float().log_softmax(dim=-1)
        lm_score = lm_logp.gather(2, hyp[:, 1:, None]).squeeze(2).mean(dim=1)
        return am_score + LM_WEIGHT * lm_score, am_score, lm_score

    inputs = [
        (
            torch.randn(batch, frames, mels, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, tokens), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"shallow-fusion ASR: 2-layer BiGRU {hidden} encoder ({frames} frames x {mels} mels) + "
        f"CTC {vocab} and 2-layer LSTM {lm_hidden} LM ({tokens} tokens) on 2 side streams + "
        f"pooled CTC / LM scores, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
