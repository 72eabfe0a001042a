"""A training step of word2vec's skip-gram with negative sampling (Mikolov, Sutskever, Chen, Corrado
and Dean, NeurIPS 2013, "Distributed Representations of Words and Phrases and their
Compositionality": each (center, context) pair scored by the dot product of the center word's input
vector and the context word's output vector, against 5 negative words drawn from the unigram
distribution raised to 3/4, with the log-sigmoid loss) over the text8 vocabulary (71,290 words seen
at least 5 times) in 300 dimensions, on a batch of 4,096 pairs, with dense embedding gradients and
plain SGD (sixty-sixth hold-out: one stream, fp32: the restore of the two embedding tables from a
snapshot (``_foreach_copy_``, 171 MB) and the in-place zeroing of their gradients; the forward, the
three ``Embedding`` lookups (the 4,096 centers' input vectors, the 4,096 contexts' and the 20,480
negatives' output vectors), the positive scores as a product and a row sum, clamped to [-10, 10],
``-logsigmoid``; the negative scores as a ``bmm`` of (4,096, 5, 300) by (4,096, 300, 1), clamped,
``logsigmoid`` of their negation, summed and negated; the mean of the two; the backward, the
elementwise chain back, the ``bmm`` backward, and three dense embedding backwards
(``embedding_dense_backward``: the indices sorted, the rows summed per word into a zeroed (71,290,
300) gradient, 85.5 MB each) accumulated into the tables' gradients; ``torch.optim.SGD`` (lr 0.025,
no momentum, ``foreach=True``) over the two tables, 42.8 M values, in a few multi-tensor kernels;
some 80 to 120 kernels, the table-sized restores, zeroings, gradient fills and accumulations and the
update some 2 GB of memory traffic, some 0.4 to 1 ms of GPU time). Laid out as
Andras7/word2vec-pytorch's ``SkipGramModel`` (``u_embeddings`` for the centers and ``v_embeddings``
for the contexts and negatives, initrange 1 / dim; its ``forward`` verbatim: the ``torch.mul`` and
``sum``, the ``clamp``s, ``F.logsigmoid``, the ``bmm`` and ``squeeze``, the ``mean``) with the
changes this set asks for: ``sparse=False`` (dense gradients, where the reference's sparse ones go
to ``SparseAdam``), plain SGD at word2vec's starting learning rate 0.025 for the reference's
SparseAdam, the negatives drawn from the unigram distribution to the 3/4 power (the paper's; the
reference uses 1/2), and the output vectors drawn uniform like the input ones rather than zero (with
zero output vectors, which every step would restore, the input vectors' gradients would stay zero);
the parameters restored from a snapshot at the start of every step and the gradients zeroed in place
(``zero_grad(set_to_none=False)``), so a step depends only on its inputs and replayed losses compare
with eager ones. Random word frequencies following Zipf's law over the 71,290 ranks stand in for
text8's counts. fp32 (the tables and the loss) on a GPU and on a CPU, where SGD runs its for-loop.
Inputs (two input sets): the centers (4,096,) int64 and contexts (4,096,) int64, drawn from the word
frequencies after word2vec's subsampling of frequent words (t = 1e-4), and the negatives (4,096, 5)
int64, drawn from the frequencies to the 3/4 power, all drawn beforehand. Returns the loss (a 0-d
fp32 tensor, detached).

    traceinspect profile word2vec_skipgram_negative_sampling_text8_sgd_train_fp32_one_stream_b4096.py
"""  # noqa: E501 - the profile line: the file name is long

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn
from torch.nn import init

VOCAB, DIM, BATCH, NEGATIVES, LR, SUBSAMPLE, NEG_POWER = 71_290, 300, 4096, 5, 0.025, 1e-4, 0.75


class SkipGramModel(nn.Module):
    def __init__(self, emb_size: int, emb_dimension: int) -> None:
        super().__init__()
        self.u_embeddings = nn.Embedding(emb_size, emb_dimension, sparse=False)
        self.v_embeddings = nn.Embedding(emb_size, emb_dimension, sparse=False)
        initrange = 1.0 / emb_dimension
        init.uniform_(self.u_embeddings.weight.data, -initrange, initrange)
        init.uniform_(self.v_embeddings.weight.data, -initrange, initrange)  # reference: zero

    def forward(self, pos_u: Tensor, pos_v: Tensor, neg_v: Tensor) -> Tensor:
        emb_u = self.u_embeddings(pos_u)
        emb_v = self.v_embeddings(pos_v)
        emb_neg_v = self.v_embeddings(neg_v)

        score = torch.sum(torch.mul(emb_u, emb_v), dim=1)
        score = torch.clamp(score, max=10, min=-10)
        score = -F.logsigmoid(score)

        neg_score = torch.bmm(emb_neg_v, emb_u.unsqueeze(2)).squeeze()
        neg_score = torch.clamp(neg_score, max=10, min=-10)
        neg_score = -torch.sum(F.logsigmoid(-neg_score), dim=1)

        return torch.mean(score + neg_score)


def build(device: torch.device, smoke: bool) -> Built:
    vocab, dim, batch = (500, 16, 64) if smoke else (VOCAB, DIM, BATCH)
    cuda = device.type == "cuda"
    model = SkipGramModel(vocab, dim).to(device).train()
    params = list(model.parameters())
    optimizer = torch.optim.SGD(params, lr=LR, foreach=cuda)
    for p in params:
        p.grad = torch.zeros_like(p)
    snapshot = [p.detach().clone() for p in params]

    def step(pos_u: Tensor, pos_v: Tensor, neg_v: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, snapshot)
        optimizer.zero_grad(set_to_none=False)
        loss = model(pos_u, pos_v, neg_v)
        loss.backward()
        optimizer.step()
        return loss.detach()

    # Zipf's law over the ranks stands in for text8's counts; word2vec's subsampling keeps a word
    # with probability sqrt(t / f) + t / f, so the pairs follow f times that.
    freq = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
    freq /= freq.sum()
    kept = freq * ((SUBSAMPLE / freq).sqrt() + SUBSAMPLE / freq).clamp(max=1.0)
    negative = freq**NEG_POWER

    def pairs() -> tuple[Tensor, Tensor, Tensor]:
        pos_u = torch.multinomial(kept, batch, replacement=True)
        pos_v = torch.multinomial(kept, batch, replacement=True)
        neg_v = torch.multinomial(negative, batch * NEGATIVES, replacement=True)
        return pos_u.to(device), pos_v.to(device), neg_v.view(batch, NEGATIVES).to(device)

    inputs = [pairs() for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"word2vec skip-gram + {NEGATIVES} negatives: vocab {vocab} x {dim}, dense embedding "
        f"gradients, SGD lr {LR} ({'foreach' if cuda else 'for-loop'}) over {total} values, "
        f"params restored each step, fp32, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
