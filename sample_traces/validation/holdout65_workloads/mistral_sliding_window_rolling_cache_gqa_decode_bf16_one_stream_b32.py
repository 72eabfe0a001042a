"""One greedy decode step of a Mistral-style decoder (Jiang et al., 2023, "Mistral 7B":
grouped-query attention, rotary positions and a sliding attention window over a rolling-buffer KV
cache) for 32 sequences served together, each at its own position, as a continuous-batching server
steps them (sixty-fifth hold-out: one stream, bf16: the embedding lookup; the step's shared work,
each sequence's cache slot (its position modulo the 2,048-slot window), the slot-position table
written there (``index_put_``) and the additive fp32 mask of the slots inside each sequence's window
(positions at most its own and more than 2,048 back, never-written slots out); the complex rotary
factors gathered at the 32 positions; then 6 layers, each the RMSNorm (fp32 upcast, pow, mean,
rsqrt, the cast back and the weight), the Q, K and V projections (8 query heads and 2 key-value
heads of 128), the rotary product as complex multiplication (``view_as_complex`` of the fp32 casts),
the new key and value written into the rolling caches (32, 2,048, 2, 128) at each sequence's slot
(``index_put_`` with the row and slot indices), ``repeat_kv`` of the whole caches to the 8 query
heads (``repeat_interleave``, 134 MB each) and their contiguous copies for the two ``matmul``s, the
scores as ``matmul`` of the one query with the transposed keys times 1/sqrt(128), the mask added in
fp32, the softmax and the cast back, the weighted sum of the values, the output projection and the
residual add, a second RMSNorm and the SwiGLU MLP 1,024 -> 3,584 -> 1,024 and its residual add; the
final RMSNorm, the 32,000-word output head in fp32 and the argmax; some 300 kernels, GEMMs of 32
rows over 115 M weights (229 MB), the cache reads and their repeated copies the bulk of the memory
traffic (some 7 GB), some 1.5 to 3 ms of GPU time). Laid out as mistralai/mistral-src's
``one_file_ref.py`` (``RMSNorm``, ``precompute_freqs_cis`` with theta 10,000 and
``apply_rotary_emb``, ``repeat_kv``, the ``Attention`` with its ``(batch, sliding_window,
n_kv_heads, head_dim)`` rolling caches written at ``positions % sliding_window``, the scores'
``.float()`` softmax and ``type_as``, the ``FeedForward`` ``w2(silu(w1(x)) * w3(x))``, the
``TransformerBlock`` and the ``Transformer``'s ``output(norm(h)).float()``) in Mistral 7B's
proportions at a quarter of its width and 6 of its 32 layers (``dim 1024, n_layers 6, head_dim 128,
hidden_dim 3584, n_heads 8, n_kv_heads 2, norm_eps 1e-5, vocab_size 32000``) and half its window
(``sliding_window 2048``), with the change a batch of sequences at different positions needs: the
reference's single position list becomes one position per sequence, the cache written per row and a
slot-position table kept beside the caches for the mask (the reference's mask assumes one shared
position). bf16 weights, activations and caches on a GPU (fp32 on a CPU), eval, no gradients, random
weights (torch's defaults) and random caches, the slot-position table filled at build as if each
sequence had been decoded up to the position before the first input set's. Inputs (two input sets,
consecutive steps): the last tokens (32,) int64, uniform below 32,000, and the positions (32,)
int64, uniform in [16, 8,192) (some sequences still inside their first window), the second set's one
past the first's. Returns the next tokens (32,) int64.

    traceinspect profile mistral_sliding_window_rolling_cache_gqa_decode_bf16_one_stream_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, DIM, LAYERS, HEAD_DIM, HIDDEN, HEADS, KV_HEADS = 32_000, 1024, 6, 128, 3584, 8, 2
WINDOW, THETA, EPS, BATCH = 2048, 10_000.0, 1e-5, 32


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: Tensor) -> Tensor:
        out = x.float()
        out = out * torch.rsqrt(out.pow(2).mean(-1, keepdim=True) + EPS)
        return out.type_as(x) * self.weight


def precompute_freqs_cis(dim: int, end: int) -> Tensor:
    freqs = 1.0 / (THETA ** (torch.arange(0, dim, 2)[: dim // 2].float() / dim))
    freqs = torch.outer(torch.arange(end).float(), freqs)
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def apply_rotary_emb(xq: Tensor, xk: Tensor, freqs_cis: Tensor) -> tuple[Tensor, Tensor]:
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(-2)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(-2)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(keys: Tensor, values: Tensor, repeats: int) -> tuple[Tensor, Tensor]:
    keys = torch.repeat_interleave(keys, repeats=repeats, dim=2)
    values = torch.repeat_interleave(values, repeats=repeats, dim=2)
    return keys, values


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, head_dim: int, batch: int, window: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.repeats, self.scale = heads // kv_heads, head_dim**-0.5
        self.wq = nn.Linear(dim, heads * head_dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * head_dim, bias=False)
        self.wo = nn.Linear(heads * head_dim, dim, bias=False)
        shape = (batch, window, kv_heads, head_dim)
        self.register_buffer("cache_k", torch.randn(shape))
        self.register_buffer("cache_v", torch.randn(shape))

    def forward(self, x: Tensor, freqs_cis: Tensor, rows: Tensor, slot: Tensor, mask: Tensor):
        b = x.shape[0]
        xq = self.wq(x).view(b, self.heads, self.head_dim)
        xk = self.wk(x).view(b, self.kv_heads, self.head_dim)
        xv = self.wv(x).view(b, self.kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
        self.cache_k.index_put_((rows, slot), xk)
        self.cache_v.index_put_((rows, slot), xv)
        key, value = repeat_kv(self.cache_k, self.cache_v, self.repeats)
        xq, key, value = xq.unsqueeze(2), key.transpose(1, 2), value.transpose(1, 2)
        scores = torch.matmul(xq, key.transpose(2, 3)) * self.scale  # (b, heads, 1, window)
        scores = F.softmax(scores.float() + mask, dim=-1).type_as(xq)
        out = torch.matmul(scores, value)  # (b, heads, 1, head_dim)
        return self.wo(out.reshape(b, -1))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int, hidden: int, batch: int, window: int, head_dim: int) -> None:
        super().__init__()
        self.attention = Attention(dim, HEADS, KV_HEADS, head_dim, batch, window)
        self.attention_norm, self.ffn_norm = RMSNorm(dim), RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: Tensor, freqs_cis: Tensor, rows: Tensor, slot: Tensor, mask: Tensor):
        h = x + self.attention(self.attention_norm(x), freqs_cis, rows, slot, mask)
        y = self.ffn_norm(h)
        return h + self.w2(F.silu(self.w1(y)) * self.w3(y))


class Transformer(nn.Module):
    def __init__(self, vocab: int, dim: int, layers: int, hidden: int, batch: int, window: int):
        super().__init__()
        self.window = window
        head_dim = dim // HEADS
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            TransformerBlock(dim, hidden, batch, window, head_dim) for _ in range(layers)
        )
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("rows", torch.arange(batch))
        self.register_buffer("slot_positions", torch.full((batch, window), -1))

    def fill_slot_positions(self, last: Tensor) -> None:
        """Each slot's position as if every sequence had been decoded up to ``last``: the latest
        position congruent to the slot modulo the window, -1 where none has been written."""
        slots = torch.arange(self.window, device=last.device)
        latest = last[:, None] - (last[:, None] - slots[None]) % self.window
        self.slot_positions.copy_(torch.where(latest >= 0, latest, -1))

    def forward(self, tokens: Tensor, positions: Tensor, freqs_cis_table: Tensor) -> Tensor:
        slot = positions % self.window
        self.slot_positions.index_put_((self.rows, slot), positions)
        pos, seen = positions[:, None], self.slot_positions
        valid = (seen >= 0) & (seen <= pos) & (seen > pos - self.window)
        mask = torch.where(valid, 0.0, float("-inf"))[:, None, None, :]
        freqs_cis = freqs_cis_table[positions].unsqueeze(1)  # (b, 1, head_dim / 2)
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, freqs_cis, self.rows, slot, mask)
        return self.output(self.norm(h)).float()


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        vocab, dim, layers, hidden, batch, window = 100, 32, 2, 64, 4, 16
    else:
        vocab, dim, layers, hidden, batch, window = VOCAB, DIM, LAYERS, HIDDEN, BATCH, WINDOW
    dtype = low_precision(device)
    model = Transformer(vocab, dim, layers, hidden, batch, window).to(device, dtype).eval()
    freqs_cis_table = precompute_freqs_cis(dim // HEADS, 4 * window).to(device)
    positions = torch.randint(16, 4 * window, (batch,), device=device)
    model.fill_slot_positions(positions - 1)

    @torch.no_grad()
    def step(tokens: Tensor, positions: Tensor) -> Tensor:
        return model(tokens, positions, freqs_cis_table).argmax(dim=-1)

    inputs = [(torch.randint(0, vocab, (batch,), device=device), positions + i) for i in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Mistral-style decode: {layers} layers d{dim}, GQA {HEADS}/{KV_HEADS}, rolling cache "
        f"window {window}, per-sequence positions, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model, freqs_cis_table])


if __name__ == "__main__":
    main(build, __doc__)
