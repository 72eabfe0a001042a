"""A Poly-encoder (Humeau, Shuster, Lachaux and Weston, ICLR 2020, "Poly-encoders: Architectures and
Pre-training Strategies for Fast and Accurate Multi-sentence Scoring": a BERT context encoder whose
token states are summarized by 64 learned codes, a BERT candidate encoder, and each candidate
attending over the codes before the dot product) scoring 32 ConvAI2 dialogue contexts against the 32
responses of the batch, as its in-batch validation does, the two BERT towers on two side streams
(sixty-fifth hold-out: fp16, one program fork / join a step: on side stream 1 the context tower over
(32, 128) tokens, on side stream 2 the candidate tower over (32, 32) tokens, each BERT-base (the
word, position and token-type embedding lookups, their sum and LayerNorm; 12 post-norm layers, each
the query, key and value projections, ``scaled_dot_product_attention`` of 12 heads of 64 with the
boolean key-padding mask, the output projection, the residual add and LayerNorm, ``Linear(768,
3072)``, GELU, ``Linear(3072, 768)``, the residual add and LayerNorm), then on side stream 1 the 64
codes' attention over the context's token states (``bmm``, the padding masked to -inf, softmax,
``bmm``) and on side stream 2 the candidates' first-token states; joined by ``wait_stream``; on the
current stream each candidate's attention over each context's 64 code vectors, the dot products to
the (32, 32) scores, the cross-entropy against the diagonal and the accuracy; some 380 kernels, each
side stream some 180 (the context tower's GEMMs of 4,096 rows, the candidate tower's of 1,024, 0.9
TFLOP in all), some 1.5 to 3 ms of GPU time). Laid out as ParlAI's ``PolyEncoderModule`` with
``polyencoder_type codes, poly_n_codes 64, poly_attention_type basic, codes_attention_type basic``
(``BasicAttention``'s ``bmm``, ``masked_fill_`` of the repeated padding mask and softmax; the code
embeddings normal with std 768^-0.5; ``encode`` and ``score`` with the candidates' attention over
the codes and ``torch.sum(ctxt_final_rep * cand_embed, 2)``) over two BERT-base encoders laid out as
Hugging Face's ``BertModel`` (``vocab_size 30522, hidden_size 768, num_hidden_layers 12,
num_attention_heads 12, intermediate_size 3072, hidden_act gelu, max_position_embeddings 512,
type_vocab_size 2, layer_norm_eps 1e-12``, SDPA attention), the candidate reduced to its first
([CLS]) output as the paper's BERT-based models do, and the contexts truncated to 128 tokens and the
candidates to 32 (the ConvAI2 setting's 360 and 72). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). fp16 weights and
activations on a GPU (fp32 on a CPU), the scores and loss in fp32, eval, no gradients, random
weights (torch's defaults). Inputs (two input sets): the context tokens (32, 128) int64, uniform
below 30,522, 0 ([PAD]) past each context's length, uniform in [16, 128]; the candidate tokens (32,
32) int64, likewise with lengths in [4, 32]. Returns the scores (32, 32) fp32, the loss and the
accuracy (0-d fp32 tensors).

    traceinspect profile polyencoder_bert_context_beside_candidate_64codes_fp16_2streams_b32.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

VOCAB, HIDDEN, LAYERS, HEADS, FFN, POSITIONS, CODES = 30_522, 768, 12, 12, 3072, 512, 64
CONTEXT_LEN, CANDIDATE_LEN, EPS = 128, 32, 1e-12


class BertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attention_output = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=EPS)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=EPS)

    def split(self, x: Tensor) -> Tensor:
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        context = context.transpose(1, 2).reshape(b, s, d)
        x = self.attention_norm(x + self.attention_output(context))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, ffn: int) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(POSITIONS, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=EPS)
        self.layers = nn.ModuleList(BertLayer(hidden, HEADS, ffn) for _ in range(layers))
        self.register_buffer("position_ids", torch.arange(POSITIONS)[None])

    def forward(self, ids: Tensor, keep: Tensor) -> Tensor:
        positions = self.position_ids[:, : ids.shape[1]]
        x = self.word_embeddings(ids) + self.token_type_embeddings(torch.zeros_like(ids))
        x = self.embedding_norm(x + self.position_embeddings(positions))
        mask = keep[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask)
        return x


def basic_attention(xs: Tensor, ys: Tensor, mask_ys: Tensor | None = None) -> Tensor:
    """ParlAI's ``BasicAttention(dim=2, attn="basic")``: softmax(xs ys^T) ys."""
    l1 = torch.bmm(xs, ys.transpose(1, 2))
    if mask_ys is not None:
        attn_mask = (mask_ys == 0).view(xs.shape[0], 1, ys.shape[1]).repeat(1, xs.shape[1], 1)
        l1.masked_fill_(attn_mask, float("-inf"))
    return torch.bmm(torch.softmax(l1, dim=2), ys)


class PolyEncoder(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, ffn: int, codes: int) -> None:
        super().__init__()
        self.encoder_ctxt = BertEncoder(vocab, hidden, layers, ffn)
        self.encoder_cand = BertEncoder(vocab, hidden, layers, ffn)
        self.codes = nn.Embedding(codes, hidden)
        nn.init.normal_(self.codes.weight, 0.0, hidden**-0.5)

    def encode_context(self, ids: Tensor) -> Tensor:
        keep = ids != 0
        states = self.encoder_ctxt(ids, keep)
        codes = self.codes.weight.unsqueeze(0).expand(ids.shape[0], -1, -1)
        return basic_attention(codes, states, keep)  # (b, codes, hidden)

    def encode_candidates(self, ids: Tensor) -> Tensor:
        return self.encoder_cand(ids, ids != 0)[:, 0]  # (n, hidden), the [CLS] outputs

    def forward(
        self,
        context: Tensor,
        candidates: Tensor,
        device: torch.device,
        streams: Sequence[torch.cuda.Stream],
    ) -> Tensor:
        ctxt_rep, cand_embs = fork_join(
            device,
            streams,
            [lambda: self.encode_context(context), lambda: self.encode_candidates(candidates)],
        )
        cand_embed = cand_embs.unsqueeze(0).expand(context.shape[0], -1, -1)  # (b, n, hidden)
        ctxt_final_rep = basic_attention(cand_embed, ctxt_rep)
        return torch.sum(ctxt_final_rep * cand_embed, 2).float()  # (b, n)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, ctx_len, cand_len, vocab, hidden, layers, ffn, codes = 4, 16, 8, 100, 24, 2, 48, 4
    else:
        batch, ctx_len, cand_len = 32, CONTEXT_LEN, CANDIDATE_LEN
        vocab, hidden, layers, ffn, codes = VOCAB, HIDDEN, LAYERS, FFN, CODES
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = PolyEncoder(vocab, hidden, layers, ffn, codes).to(device, dtype).eval()
    streams = side_streams(device, 2)
    targets = torch.arange(batch, device=device)

    @torch.no_grad()
    def step(context: Tensor, candidates: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        scores = model(context, candidates, device, streams)
        loss = F.cross_entropy(scores, targets)
        accuracy = (scores.argmax(dim=1) == targets).float().mean()
        return scores, loss, accuracy

    def tokens(length: int, shortest: int) -> Tensor:
        lengths = torch.randint(min(shortest, length), length + 1, (batch, 1), device=device)
        keep = torch.arange(length, device=device)[None] < lengths
        return torch.randint(1, vocab, (batch, length), device=device) * keep

    inputs = [(tokens(ctx_len, 16), tokens(cand_len, 4)) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Poly-encoder: BERT {layers} x {hidden} context tower ({ctx_len} tokens) beside candidate "
        f"tower ({cand_len} tokens) on 2 side streams, {codes} codes, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model, targets])


if __name__ == "__main__":
    main(build, __doc__)
