"""A retrieval-augmented reading step: a BERT-small-sized query encoder and a passage reader of
the same size on two side streams, the retrieval scores and the score-weighted answer-span
logits after the join (forty-first hold-out): 4 queries of 32 tokens, each with 8 retrieved
passages of 128 tokens (32 passages), bf16 on a GPU (the scores, softmax and weighting in fp32),
eval mode (dropout off), no gradients, no padding masks (every query and passage is full
length). Each encoder (BERT-small's size: 4 layers, d 512, 8 heads of 64, MLP 2048, vocabulary
30,522, its own weights): token embedding plus a learned position embedding, LayerNorm(512),
then 4 of the project's pre-norm ``EncoderLayer`` (LayerNorm, fused ``Linear(512, 1536)``,
``F.scaled_dot_product_attention``, ``Linear(512, 512)``, residual add; LayerNorm,
``Linear(512, 2048)``, GELU, ``Linear(2048, 512)``, residual add) and a final LayerNorm. Side
stream 1: the query encoder on the (4, 32) query tokens, their [CLS] (position 0) vectors (4,
512). Side stream 2: the reader encoder on the (4, 8, 128) passage tokens flattened to (32,
128), 4,096 tokens (the bulk of the step), its [CLS] vectors (4, 8, 512) and a span head
``Linear(512, 2)`` to start and end logits, (4, 8, 128) each. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
After the join, on the current stream, in fp32: the dot product of each query's [CLS] with each
of its 8 passages' [CLS] (4, 8), a softmax over the 8 passages, and the sum over the passages of
the start and end logits weighted by those probabilities, (4, 128) each. On a CPU the branches
run in order. Inputs: query tokens (4, 32) and passage tokens (4, 8, 128), int64. Returns the
passage probabilities (4, 8) and the weighted start and end logits (4, 128) each, fp32.

    traceinspect profile rag_retriever_reader_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import encoder
from _streams import fork_join, side_streams
from torch import Tensor, nn

VOCAB, QUERY_LEN, PASSAGES, PASSAGE_LEN = 30522, 32, 8, 128


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, layers: int, max_len: int) -> None:
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
        self.embed_norm = nn.LayerNorm(d)
        self.layers = encoder(layers, d, heads, torch.float32)
        self.norm = nn.LayerNorm(d)

    def forward(self, ids: Tensor) -> Tensor:
        x = self.tokens(ids) + self.positions.weight[: ids.shape[1]]
        return self.norm(self.layers(self.embed_norm(x)))


class Reader(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, layers: int, max_len: int) -> None:
        super().__init__()
        self.encoder = TextEncoder(vocab, d, heads, layers, max_len)
        self.span = nn.Linear(d, 2)

    def forward(self, ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        q, p, s = ids.shape
        h = self.encoder(ids.reshape(q * p, s))  # (q p, s, d)
        start, end = self.span(h).float().view(q, p, s, 2).unbind(-1)
        return h[:, 0].view(q, p, -1), start, end


def build(device: torch.device, smoke: bool) -> Built:
    queries, query_len, passages, passage_len, vocab, d, heads, layers = (
        (2, 6, 3, 10, 100, 32, 4, 2)
        if smoke
        else (4, QUERY_LEN, PASSAGES, PASSAGE_LEN, VOCAB, 512, 8, 4)
    )
    dtype = low_precision(device)
    query_encoder = TextEncoder(vocab, d, heads, layers, query_len)
    reader = Reader(vocab, d, heads, layers, passage_len)
    model = nn.ModuleList([query_encoder, reader]).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(query_ids: Tensor, passage_ids: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        q_cls, (p_cls, start, end) = fork_join(
            device,
            streams,
            [lambda: query_encoder(query_ids)[:, 0], lambda: reader(passage_ids)],
        )
        scores = torch.einsum("qd,qpd->qp", q_cls.float(), p_cls.float())
        probs = scores.softmax(dim=-1)  # (q, passages)
        weights = probs[..., None]
        return probs, (weights * start).sum(dim=1), (weights * end).sum(dim=1)

    inputs = [
        (
            torch.randint(vocab, (queries, query_len), device=device),
            torch.randint(vocab, (queries, passages, passage_len), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"RAG: {layers}-layer d{d} query encoder ({query_len} tokens) and passage reader "
        f"({passages} x {passage_len} tokens per query) on 2 side streams + [CLS] scores, "
        f"softmax over passages, weighted span logits, b{queries}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
