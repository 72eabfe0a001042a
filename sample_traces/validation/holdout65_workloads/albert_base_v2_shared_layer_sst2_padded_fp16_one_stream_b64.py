"""ALBERT-base-v2 (Lan et al., ICLR 2020, "ALBERT: A Lite BERT for Self-supervised Learning of
Language Representations": a factorized 128-wide embedding projected to the hidden width and one
transformer layer's weights shared by all 12 layers) classifying 64 SST-2 sentences padded to 128
tokens, as a GLUE evaluation loop batches them (sixty-fifth hold-out: one stream, fp16: the word,
position and token-type embedding lookups, their sum and ``LayerNorm(128)``; the key-padding mask
from the attention mask; ``Linear(128, 768)``; then the shared layer 12 times, each its separate
query, key and value projections (three 8,192 x 768 x 768 GEMMs), ``scaled_dot_product_attention``
of 12 heads of 64 with the boolean padding mask, the head merge, the dense projection, the residual
add and LayerNorm, ``Linear(768, 3072)``, the tanh GELU, ``Linear(3072, 768)``, the residual add and
LayerNorm; the pooler's ``Linear(768, 768)`` and tanh on the [CLS] states, the classifier's
``Linear(768, 2)``, the cross-entropy against the labels and the accuracy; some 200 kernels, GEMMs
of 8,192 rows the bulk of the 1.4 TFLOP, the same 7 M shared weights read by every layer, some 2 to
4 ms of GPU time). Laid out as Hugging Face's ``AlbertForSequenceClassification`` with the
``albert-base-v2`` config (``vocab_size 30000, embedding_size 128, hidden_size 768,
num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072, hidden_act gelu_new,
max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12, num_hidden_groups 1,
inner_group_num 1``: ``AlbertEmbeddings``, ``AlbertTransformer``'s ``embedding_hidden_mapping_in``
and its one ``AlbertLayerGroup`` of one ``AlbertLayer`` applied 12 times, ``AlbertSdpaAttention``'s
query, key, value, ``dense`` and ``LayerNorm(hidden + projected)``, ``ffn``, ``ffn_output`` and
``full_layer_layer_norm``; the pooler on the first token and the classifier, 2 labels), dropout off
in eval. fp16 weights and activations on a GPU (fp32 on a CPU), the loss in fp32, eval, no
gradients, random weights (torch's defaults). Inputs (two input sets): the token ids (64, 128)
int64, uniform below 30,000 with 0 ([PAD]) past each sentence's length, the lengths uniform in [8,
128]; the attention mask (64, 128) int64, 1 up to the length; the token types (64, 128) int64, all 0
(single sentences); the labels (64,) int64 of 0s and 1s. Returns the logits (64, 2), the loss and
the accuracy (0-d fp32 tensors).

    traceinspect profile albert_base_v2_shared_layer_sst2_padded_fp16_one_stream_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

VOCAB, EMBED, HIDDEN, LAYERS, HEADS, FFN, POSITIONS, TYPES = 30_000, 128, 768, 12, 12, 3072, 512, 2
SEQ, LABELS, EPS = 128, 2, 1e-12


class AlbertEmbeddings(nn.Module):
    def __init__(self, vocab: int, embed: int) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, embed, padding_idx=0)
        self.position_embeddings = nn.Embedding(POSITIONS, embed)
        self.token_type_embeddings = nn.Embedding(TYPES, embed)
        self.LayerNorm = nn.LayerNorm(embed, eps=EPS)  # noqa: N815 - Hugging Face's name
        self.register_buffer("position_ids", torch.arange(POSITIONS)[None])

    def forward(self, ids: Tensor, token_types: Tensor) -> Tensor:
        positions = self.position_ids[:, : ids.shape[1]]
        x = self.word_embeddings(ids) + self.token_type_embeddings(token_types)
        return self.LayerNorm(x + self.position_embeddings(positions))


class AlbertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=EPS)
        self.ffn = nn.Linear(hidden, ffn)
        self.ffn_output = nn.Linear(ffn, hidden)
        self.full_layer_layer_norm = nn.LayerNorm(hidden, eps=EPS)

    def split(self, x: Tensor) -> Tensor:
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        context = context.transpose(1, 2).reshape(b, s, d)
        attention_output = self.attention_norm(x + self.dense(context))
        ffn = self.ffn_output(F.gelu(self.ffn(attention_output), approximate="tanh"))
        return self.full_layer_layer_norm(ffn + attention_output)


class AlbertForSequenceClassification(nn.Module):
    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, ffn: int) -> None:
        super().__init__()
        self.layers = layers
        self.embeddings = AlbertEmbeddings(vocab, embed)
        self.embedding_hidden_mapping_in = nn.Linear(embed, hidden)
        self.shared_layer = AlbertLayer(hidden, HEADS, ffn)  # one group, one layer, 12 uses
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, LABELS)

    def forward(self, ids: Tensor, attention_mask: Tensor, token_types: Tensor) -> Tensor:
        mask = attention_mask.bool()[:, None, None, :]  # keys to attend to
        x = self.embedding_hidden_mapping_in(self.embeddings(ids, token_types))
        for _ in range(self.layers):
            x = self.shared_layer(x, mask)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, seq, vocab, embed, hidden, layers, ffn = 4, 16, 100, 16, 24, 2, 48
    else:
        batch, seq, vocab, embed, hidden, layers, ffn = 64, SEQ, VOCAB, EMBED, HIDDEN, LAYERS, FFN
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = AlbertForSequenceClassification(vocab, embed, hidden, layers, ffn)
    model = model.to(device, dtype).eval()

    @torch.no_grad()
    def step(ids: Tensor, attention_mask: Tensor, token_types: Tensor, labels: Tensor):
        logits = model(ids, attention_mask, token_types).float()
        loss = F.cross_entropy(logits, labels)
        accuracy = (logits.argmax(dim=-1) == labels).float().mean()
        return logits, loss, accuracy

    def batch_set() -> tuple[Tensor, ...]:
        lengths = torch.randint(min(8, seq), seq + 1, (batch, 1), device=device)
        attention_mask = (torch.arange(seq, device=device)[None] < lengths).long()
        ids = torch.randint(1, vocab, (batch, seq), device=device) * attention_mask
        token_types = torch.zeros(batch, seq, dtype=torch.long, device=device)
        labels = torch.randint(0, LABELS, (batch,), device=device)
        return ids, attention_mask, token_types, labels

    inputs = [batch_set() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"ALBERT-base-v2 SST-2: embed {embed} -> {hidden}, one shared layer x {layers}, "
        f"{HEADS} heads, padded to {seq}, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
