"""ESIM (Chen et al., 2017, "Enhanced LSTM for Natural Language Inference") classifying 32
premise-hypothesis pairs into entailment, neutral and contradiction: the premises and the hypotheses
encoded by a 2-layer BiLSTM on two side streams, the soft alignment on the current stream, then the
inference composition BiLSTM on the two side streams again, then the pooling and the classifier
(sixtieth hold-out: fp16, two fork / join rounds of two: in the first, ``nn.LSTM(300, 300,
num_layers 2, bidirectional)`` over the 48 premise tokens on side stream 1 and over the 24
hypothesis tokens on side stream 2, one module and one set of weights, each a cuDNN call whose two
directions go to streams of its own, layer after layer, some 400 and 200 small GEMM and cell
kernels; after the join the (48 x 24) similarity bmm, two masked softmaxes in fp32, the aligned
bmms, the [a; a~; a - a~; a * a~] enhancement (2400 wide) and the ``Linear(2400, 300)`` + ReLU
projection of both; in the second round ``nn.LSTM(300, 300, bidirectional)`` over each side's
projection on its stream, some 200 and 100 kernels; then masked average and max pooling and the
``Linear(2400, 300)``, tanh, ``Linear(300, 3)`` classifier; some 0.8 to 2 ms of GPU time in all,
most of it the recurrences). Laid out as coetaur0/ESIM's ``esim/model.py`` and ``esim/layers.py``
(``Embedding(vocab, 300, padding_idx 0)``, ``Seq2SeqEncoder(nn.LSTM, 300, 300, bidirectional)`` for
the encoding and the composition, ``SoftmaxAttention`` with its ``masked_softmax`` (softmax of the
masked scores, re-masked and renormalised) and ``weighted_sum`` (re-masked), the projection
``Linear(4 x 2 x 300, 300)`` + ReLU, ``replace_masked`` by -1e7 (-1e4 in fp16) before the max
pooling, the classification ``Linear(4 x 2 x 300, 300)``, tanh, ``Linear(300, 3)``, dropout off in
eval), with the input encoding made a 2-layer BiLSTM (the reference's is 1 layer) and every sequence
run at its padded length (the reference packs by length, ``pack_padded_sequence``, which needs the
lengths on the host; the masks keep the padding out of the attention and the pooling). The encoder
and the composition are each one module shared by the premise and the hypothesis, as in the
reference. Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on
the branch outputs outside capture). fp16 weights and activations on a GPU (fp32 on a CPU), the
softmaxes in fp32, eval, no gradients, random weights (torch's defaults). Inputs (two input sets),
batch first: the premise token ids (32, 48) int64 and the hypothesis token ids (32, 24) int64,
uniform in [1, 40000) up to each sentence's length (uniform in [16, 48] and [8, 24]) and 0 (padding)
after it. Returns the class probabilities (32, 3), fp32.

    traceinspect profile esim_bilstm_encoders_2streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

VOCAB, EMBED, HIDDEN, N_CLASSES, PREMISE_LEN, HYPOTHESIS_LEN = 40000, 300, 300, 3, 48, 24


def masked_softmax(scores: Tensor, mask: Tensor) -> Tensor:
    """esim.utils.masked_softmax over the last dimension; mask (b, n) of the attended side."""
    mask = mask.unsqueeze(1).float()
    result = torch.softmax(scores.float() * mask, dim=-1) * mask
    return result / (result.sum(dim=-1, keepdim=True) + 1e-13)


def weighted_sum(values: Tensor, weights: Tensor, mask: Tensor) -> Tensor:
    """esim.utils.weighted_sum: weights (b, m, n) over values (b, n, d), re-masked by (b, m)."""
    return weights.to(values.dtype).bmm(values) * mask.unsqueeze(-1).to(values.dtype)


class ESIM(nn.Module):
    def __init__(self, vocab: int, embed: int, hidden: int) -> None:
        super().__init__()
        self.word_embedding = nn.Embedding(vocab, embed, padding_idx=0)
        self.encoding = nn.LSTM(embed, hidden, 2, batch_first=True, bidirectional=True)
        self.projection = nn.Sequential(nn.Linear(8 * hidden, hidden), nn.ReLU())
        self.composition = nn.LSTM(hidden, hidden, 1, batch_first=True, bidirectional=True)
        self.classification = nn.Sequential(
            nn.Linear(8 * hidden, hidden), nn.Tanh(), nn.Linear(hidden, N_CLASSES)
        )

    def encode(self, ids: Tensor) -> Tensor:
        return self.encoding(self.word_embedding(ids))[0]

    def compose(self, encoded: Tensor, attended: Tensor) -> Tensor:
        enhanced = torch.cat((encoded, attended, encoded - attended, encoded * attended), dim=-1)
        return self.composition(self.projection(enhanced))[0]

    @staticmethod
    def pool(v: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        m = mask.unsqueeze(-1).to(v.dtype)
        avg = (v * m).sum(dim=1) / m.sum(dim=1)
        big = torch.full_like(v, -1e4 if v.dtype == torch.float16 else -1e7)
        return avg, torch.where(m.bool(), v, big).max(dim=1).values  # replace_masked


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, p_len, h_len, vocab, embed, hidden = 2, 7, 5, 50, 8, 8
    else:
        batch, p_len, h_len, vocab = 32, PREMISE_LEN, HYPOTHESIS_LEN, VOCAB
        embed, hidden = EMBED, HIDDEN
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = ESIM(vocab, embed, hidden).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(premises: Tensor, hypotheses: Tensor) -> Tensor:
        p_mask, h_mask = premises.ne(0), hypotheses.ne(0)
        a, b = fork_join(
            device, streams, [lambda: model.encode(premises), lambda: model.encode(hypotheses)]
        )
        similarity = a.bmm(b.transpose(1, 2))  # (batch, p_len, h_len)
        a_tilde = weighted_sum(b, masked_softmax(similarity, h_mask), p_mask)
        b_tilde = weighted_sum(a, masked_softmax(similarity.transpose(1, 2), p_mask), h_mask)
        v_a, v_b = fork_join(
            device, streams, [lambda: model.compose(a, a_tilde), lambda: model.compose(b, b_tilde)]
        )
        v = torch.cat((*model.pool(v_a, p_mask), *model.pool(v_b, h_mask)), dim=1)
        return torch.softmax(model.classification(v).float(), dim=-1)

    def sentences(length: int, low: int) -> Tensor:
        lengths = torch.randint(low, length + 1, (batch, 1), device=device)
        ids = torch.randint(1, vocab, (batch, length), device=device)
        return ids.masked_fill(torch.arange(length, device=device) >= lengths, 0)

    inputs = [
        (sentences(p_len, max(p_len // 3, 1)), sentences(h_len, max(h_len // 3, 1)))
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"ESIM: 2-layer BiLSTM {hidden} encoders of premise ({p_len}) and hypothesis ({h_len}) "
        f"on 2 side streams, soft alignment, composition BiLSTM on 2 side streams, pooling + "
        f"MLP, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
