"""SASRec (Kang and McAuley, 2018), a self-attentive sequential recommender, ranking a 100000-item
catalogue for 256 users from their last 200 interactions and returning each user's top 10 unseen
items, as a full-ranking evaluation (RecBole's full sort) scores every item (fifty-sixth hold-out:
one stream of some 75 kernels, autocast's weight casts among them, two narrow transformer blocks
over 51200 token rows of 64 whose GEMMs are tiny, bf16 attention scores and their fp32 softmax over
200 x 200 per head of 40 and 80 MB, the attention weights averaged over the heads, 1 x 1
convolutions, LayerNorms and masks, then one larger GEMM, 256 x 64 against the 100001 item
embeddings, the history masked by a ``scatter_`` and a ``topk`` over 100001 scores a row: mostly
memory-bound and launch-bound, with one GEMM of 3.3 GFLOP). Laid out as pmixer/SASRec.pytorch's
``SASRec`` (the original layout: the attention's queries normed, its keys and values not): the item
embedding (``Embedding(100001, 64, padding_idx=0)``) of the history times sqrt(64), plus the
position embedding (``Embedding(201, 64, padding_idx=0)``) of positions 1 to 200 zeroed at padding
(made on the device here, where the reference builds them with NumPy on the host), the padded steps
zeroed (the timeline mask); 2 blocks, each: the sequence transposed to (200, 256, 64), Q =
LayerNorm(x) (eps 1e-8), ``nn.MultiheadAttention(64, 2)`` of Q against x with the causal boolean
mask (``need_weights`` left on, as the reference calls it: PyTorch's explicit path, ``baddbmm``,
softmax, ``bmm`` and the head-averaged weights), x = Q + attention, transposed back, LayerNorm, the
point-wise feed-forward (``Conv1d(64, 64, 1)``, ReLU, ``Conv1d(64, 64, 1)`` on the transposed
sequence, plus its input), the timeline mask again; the last LayerNorm and the final step's features
(256, 64). The full ranking: the features times every item embedding (256, 100001), the padding item
set to -inf and each user's history too (``scatter_`` with the history as the index), ``topk(10)``.
fp32 weights under ``torch.autocast(dtype=torch.bfloat16)`` on a GPU (the GEMMs, batched matmuls and
convolutions in bf16, the softmaxes and LayerNorms in fp32; plain fp32 on a CPU), eval (dropout
off), no gradients, random weights (torch's defaults). Input (two input sets): the histories (256,
200) int64, each user's 20 to 200 most recent items (uniform over the catalogue) right-aligned,
zeros (padding) before them. Returns the top 10 scores (256, 10) and item ids (256, 10).

    traceinspect profile sasrec_full_ranking_topk_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

ITEMS, MAXLEN, HIDDEN, HEADS, BLOCKS, TOPK, MIN_HISTORY = 100000, 200, 64, 2, 2, 10, 20


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(hidden, hidden, kernel_size=1)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv1d(hidden, hidden, kernel_size=1)

    def forward(self, inputs: Tensor) -> Tensor:
        outputs = self.conv2(self.relu(self.conv1(inputs.transpose(-1, -2))))
        return outputs.transpose(-1, -2) + inputs


class SASRec(nn.Module):
    def __init__(self, items: int, maxlen: int, hidden: int, heads: int, blocks: int) -> None:
        super().__init__()
        self.item_emb = nn.Embedding(items + 1, hidden, padding_idx=0)
        self.pos_emb = nn.Embedding(maxlen + 1, hidden, padding_idx=0)
        self.attention_layernorms = nn.ModuleList(
            nn.LayerNorm(hidden, eps=1e-8) for _ in range(blocks)
        )
        self.attention_layers = nn.ModuleList(
            nn.MultiheadAttention(hidden, heads) for _ in range(blocks)
        )
        self.forward_layernorms = nn.ModuleList(
            nn.LayerNorm(hidden, eps=1e-8) for _ in range(blocks)
        )
        self.forward_layers = nn.ModuleList(PointWiseFeedForward(hidden) for _ in range(blocks))
        self.last_layernorm = nn.LayerNorm(hidden, eps=1e-8)
        causal = ~torch.tril(torch.ones((maxlen, maxlen), dtype=torch.bool))
        self.register_buffer("attention_mask", causal)
        self.register_buffer("positions", torch.arange(1, maxlen + 1))

    def log2feats(self, log_seqs: Tensor) -> Tensor:
        seqs = self.item_emb(log_seqs) * self.item_emb.embedding_dim**0.5
        seqs = seqs + self.pos_emb(self.positions[None] * (log_seqs != 0))
        keep = (log_seqs != 0).unsqueeze(-1)  # ~timeline_mask
        seqs = seqs * keep
        for ln_a, attn, ln_f, ffn in zip(
            self.attention_layernorms,
            self.attention_layers,
            self.forward_layernorms,
            self.forward_layers,
            strict=True,
        ):
            seqs = torch.transpose(seqs, 0, 1)
            q = ln_a(seqs)
            mha_outputs, _ = attn(q, seqs, seqs, attn_mask=self.attention_mask)
            seqs = torch.transpose(q + mha_outputs, 0, 1)
            seqs = ffn(ln_f(seqs)) * keep
        return self.last_layernorm(seqs)

    def full_ranking(self, log_seqs: Tensor, k: int) -> tuple[Tensor, Tensor]:
        final_feat = self.log2feats(log_seqs)[:, -1, :]
        scores = final_feat @ self.item_emb.weight.T
        scores[:, 0] = float("-inf")  # the padding item
        scores.scatter_(1, log_seqs, float("-inf"))  # the history
        return torch.topk(scores, k, dim=-1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, items, maxlen, hidden, heads, min_history = 8, 500, 16, 16, 2, 4
    else:
        batch, items, maxlen, hidden, heads, min_history = 256, ITEMS, MAXLEN, HIDDEN, HEADS, 20
    model = SASRec(items, maxlen, hidden, heads, BLOCKS).to(device).eval()
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    @torch.no_grad()
    def step(log_seqs: Tensor) -> tuple[Tensor, Tensor]:
        with autocast:
            values, indices = model.full_ranking(log_seqs, TOPK)
        return values.float(), indices

    def make() -> tuple[Tensor]:
        lengths = torch.randint(min_history, maxlen + 1, (batch, 1), device=device)
        history = torch.randint(1, items + 1, (batch, maxlen), device=device)
        padded = torch.arange(maxlen, device=device)[None] < maxlen - lengths
        return (history.masked_fill(padded, 0),)

    inputs = [make() for _ in range(2)]
    precision = "bf16 autocast" if device.type == "cuda" else "fp32"
    description = (
        f"SASRec ({BLOCKS} blocks d{hidden}, {heads} heads, MHA need_weights, Conv1d FFN) over "
        f"{maxlen} items of history, full ranking of {items} items + history mask + top-{TOPK}, "
        f"{precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
