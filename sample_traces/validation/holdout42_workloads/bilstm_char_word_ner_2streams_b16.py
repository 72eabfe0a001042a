"""NER emissions in the Lample et al. (2016) layout: a character-level BiLSTM over every word's
characters on one side stream beside a word-embedding lookup and a 1-D convolution feature
extractor on the other, then a word-level BiLSTM and per-tag log-probabilities after the join
(forty-second hold-out; the CRF's decoding is left out): 16 sentences of 40 words, 16
characters per word, bf16 on a GPU (the LSTMs too: cuDNN takes bf16 RNNs on sm80 and later; the
log-softmax in fp32), eval mode, no gradients. Character branch, on side stream 1:
``Embedding(100, 50)`` of the (16, 40, 16) characters, reshaped to the 640 words of the batch,
(640, 16, 50); a 1-layer bidirectional ``nn.LSTM(50, 50)`` (batch_first, one cuDNN call over
the 16 characters) whose last states, forward and backward (``h_n``), are concatenated into a
(640, 100) word vector, (16, 40, 100). Word branch, on side stream 2: ``Embedding(20000, 100)``
of the (16, 40) words, then ``Conv1d(100, 100, 3, padding 1)`` + ReLU over the 40 words, (16,
40, 100). Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream``
on the branch outputs outside capture). After the join, on the current stream: the two
concatenated, (16, 40, 200); a 2-layer bidirectional ``nn.LSTM(200, 200)`` (batch_first, one
cuDNN call over the 40 words), (16, 40, 400); ``Linear(400, 17)`` to the 17 tags (BIOES over 4
entity types and O) and the log-softmax over tags in fp32. On a CPU the branches run in order.
Inputs: characters (16, 40, 16) int64, words (16, 40) int64. Returns the emission
log-probabilities (16, 40, 17), fp32.

    traceinspect profile bilstm_char_word_ner_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

TAGS, CHARS = 17, 100


class CharEncoder(nn.Module):
    def __init__(self, emb: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(CHARS, emb)
        self.rnn = nn.LSTM(emb, hidden, 1, batch_first=True, bidirectional=True)

    def forward(self, chars: Tensor) -> Tensor:  # (b, words, chars)
        b, words, length = chars.shape
        x = self.embed(chars.view(b * words, length))
        _, (h_n, _) = self.rnn(x)  # h_n (2, b words, hidden): forward and backward last states
        return torch.cat([h_n[0], h_n[1]], dim=-1).view(b, words, -1)


class WordFeatures(nn.Module):
    def __init__(self, vocab: int, emb: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.conv = nn.Conv1d(emb, emb, 3, padding=1)

    def forward(self, words: Tensor) -> Tensor:  # (b, words)
        x = self.embed(words).transpose(1, 2)
        return torch.relu(self.conv(x)).transpose(1, 2)  # (b, words, emb)


class Tagger(nn.Module):
    def __init__(self, cin: int, hidden: int) -> None:
        super().__init__()
        self.rnn = nn.LSTM(cin, hidden, 2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, TAGS)

    def forward(self, x: Tensor) -> Tensor:
        out, _ = self.rnn(x)
        return self.out(out)


def build(device: torch.device, smoke: bool) -> Built:
    batch, words, length, vocab, char_emb, char_hidden, word_emb, hidden = (
        (2, 5, 4, 50, 8, 8, 16, 16) if smoke else (16, 40, 16, 20000, 50, 50, 100, 200)
    )
    dtype = low_precision(device)
    chars, word_feats = CharEncoder(char_emb, char_hidden), WordFeatures(vocab, word_emb)
    tagger = Tagger(2 * char_hidden + word_emb, hidden)
    model = nn.ModuleList([chars, word_feats, tagger]).to(device, dtype).eval()
    chars.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it
    tagger.rnn.flatten_parameters()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(char_ids: Tensor, word_ids: Tensor) -> Tensor:
        c, w = fork_join(device, streams, [lambda: chars(char_ids), lambda: word_feats(word_ids)])
        return tagger(torch.cat([c, w], dim=-1)).float().log_softmax(dim=-1)

    inputs = [
        (
            torch.randint(0, CHARS, (batch, words, length), device=device),
            torch.randint(0, vocab, (batch, words), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"NER: char BiLSTM {char_hidden} ({length} chars x {batch * words} words) and word "
        f"embedding + conv1d on 2 side streams + 2-layer BiLSTM {hidden} tagger, {TAGS} tags, "
        f"b{batch} x {words} words",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
