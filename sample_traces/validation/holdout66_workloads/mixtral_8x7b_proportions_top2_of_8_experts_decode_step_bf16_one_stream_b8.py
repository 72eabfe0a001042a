"""One greedy decode step of a Mixtral-style sparse mixture-of-experts decoder (Jiang et al., 2024,
"Mixtral of Experts": Mistral's decoder with each feed-forward block replaced by 8 SwiGLU experts of
which a router picks 2 per token, their outputs summed with the renormalized router weights) for 8
sequences served together over a static KV cache, each sequence at its own position (sixty-sixth
hold-out: one stream, bf16: the embedding lookup; the step's shared work, the rotary cos and sin at
the 8 positions (a (64 x 1) x (1 x 1) fp32 product of the inverse frequencies and the positions, the
concatenation, cos, sin and the casts) and the additive mask over the 1,024 cache slots (slots after
each sequence's position at the dtype's minimum); then 4 layers, each the RMSNorm (fp32 upcast, pow,
mean, rsqrt, the cast back and the weight), the Q, K and V projections (8 query heads and 2
key-value heads of 128), the rotary embedding by ``rotate_half`` (slices, negation, concatenation,
two products and a sum for the queries and again for the keys), the new key and value written into
the static caches (8, 2, 1,024, 128) at each sequence's position (``index_put_`` with the row and
position indices), ``repeat_kv`` of the whole caches to the 8 query heads (expand and reshape: a
copy of 16.8 MB each), the scores as ``matmul`` of the one query with the transposed keys over
sqrt(128), the mask added, the softmax in fp32 and the cast back, the weighted sum of the values,
the output projection and the residual add; the second RMSNorm; the sparse MoE block: the router
``Linear(1024, 8)``, its fp32 softmax, ``topk`` of 2, the two weights renormalized to sum to one and
cast back, scattered into a dense (8 tokens, 8 experts) routing matrix (a zeros and a ``scatter_``),
then the 8 experts one after another, each over all 8 tokens: ``w2(silu(w1(x)) * w3(x))`` (1,024 ->
3,584 -> 1,024), the product with its column of the routing matrix (zero for the tokens that did not
pick it) and the in-place add to the block's output; the residual add; after the layers the final
RMSNorm, the 32,000-word head, the fp32 cast and the argmax; some 450 kernels, the experts' 96 GEMMs
of 8 rows over 352 M expert weights (704 MB, read once each a step) the bulk of the memory traffic,
some 0.3 to 0.8 ms of GPU time, launch-bound eager). Laid out as Hugging Face's
``modeling_mixtral.py`` (``MixtralRMSNorm``, ``MixtralRotaryEmbedding`` with ``rope_theta 1e6`` and
``apply_rotary_pos_emb``, ``repeat_kv``, the eager ``MixtralAttention`` with its
``softmax(dtype=torch.float32)``, a ``StaticCache``, ``MixtralBlockSparseTop2MLP`` and
``MixtralSparseMoeBlock``'s router: ``softmax(router_logits, dtype=torch.float)``, ``topk``,
``routing_weights /= routing_weights.sum(...)``, the cast back) in Mixtral 8x7B's proportions at a
quarter of its width and 4 of its 32 layers (``hidden_size 1024, intermediate_size 3584,
num_attention_heads 8, num_key_value_heads 2, head_dim 128, num_local_experts 8, num_experts_per_tok
2, rms_norm_eps 1e-5, vocab_size 32000``), with two changes. The expert loop has no data-dependent
shapes: where the reference takes each expert's tokens with ``torch.where`` on the one-hot expert
mask (a host sync and a shape known only at run time), here every expert runs over all 8 tokens and
its output is weighted by the dense routing matrix, so the unpicked tokens get weight zero and the
sum equals the reference's ``index_add_`` of the picked ones (at 8 tokens and top 2 of 8 nearly
every expert is picked anyway, so the expert weights are read once either way); and the cache is
written per row at each sequence's own position (``StaticCache.update``'s ``index_copy_`` at one
shared ``cache_position`` becomes an ``index_put_`` at (row, position)), the mask likewise per row.
bf16 weights, activations and caches on a GPU (fp32 on a CPU), eval, no gradients, random weights
(torch's defaults) and random caches (as if prefilled). Inputs (two input sets, consecutive steps):
the last tokens (8,) int64, uniform below 32,000, and the positions (8,) int64, uniform in [16,
1,022), the second set's one past the first's. Returns the next tokens (8,) int64.

    traceinspect profile mixtral_8x7b_proportions_top2_of_8_experts_decode_step_bf16_one_stream_b8.py
"""  # noqa: E501 - the profile line: the file name is long

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN = 32_000, 1024, 4, 8, 2, 128, 3584
EXPERTS, TOP_K, CACHE_LEN, ROPE_THETA, EPS, BATCH = 8, 2, 1024, 1e6, 1e-5, 8


class MixtralRMSNorm(nn.Module):
    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, hidden_states: Tensor) -> Tensor:
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + EPS)
        return self.weight * hidden_states.to(input_dtype)


class MixtralRotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int) -> None:
        super().__init__()
        inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x: Tensor, position_ids: Tensor) -> tuple[Tensor, Tensor]:
        inv_freq = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv_freq @ position_ids[:, None, :].float()).transpose(1, 2)  # (b, 1, d / 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x: Tensor) -> Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def repeat_kv(hidden_states: Tensor, n_rep: int) -> Tensor:
    batch, kv_heads, slen, head_dim = hidden_states.shape
    hidden_states = hidden_states[:, :, None].expand(batch, kv_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, kv_heads * n_rep, slen, head_dim)


class MixtralAttention(nn.Module):
    def __init__(self, hidden: int, batch: int, cache_len: int) -> None:
        super().__init__()
        self.groups, self.scaling = HEADS // KV_HEADS, 1.0 / math.sqrt(HEAD_DIM)
        self.q_proj = nn.Linear(hidden, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(hidden, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(hidden, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, hidden, bias=False)
        shape = (batch, KV_HEADS, cache_len, HEAD_DIM)  # StaticCache's layout
        self.register_buffer("key_cache", torch.randn(shape))
        self.register_buffer("value_cache", torch.randn(shape))

    def forward(
        self,
        hidden_states: Tensor,
        cos: Tensor,
        sin: Tensor,
        rows: Tensor,
        positions: Tensor,
        causal_mask: Tensor,
    ) -> Tensor:
        bsz, q_len, _ = hidden_states.shape
        query = self.q_proj(hidden_states).view(bsz, q_len, HEADS, HEAD_DIM).transpose(1, 2)
        key = self.k_proj(hidden_states).view(bsz, q_len, KV_HEADS, HEAD_DIM).transpose(1, 2)
        value = self.v_proj(hidden_states).view(bsz, q_len, KV_HEADS, HEAD_DIM).transpose(1, 2)
        query, key = apply_rotary_pos_emb(query, key, cos, sin)
        # the cache update, per row at its own position: (b, kv_heads, head_dim) at [row, :, pos]
        self.key_cache[rows, :, positions] = key[:, :, 0]
        self.value_cache[rows, :, positions] = value[:, :, 0]
        key = repeat_kv(self.key_cache, self.groups)
        value = repeat_kv(self.value_cache, self.groups)
        attn_weights = torch.matmul(query, key.transpose(2, 3)) * self.scaling
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
        attn_output = torch.matmul(attn_weights, value)  # (b, heads, 1, head_dim)
        attn_output = attn_output.transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.o_proj(attn_output)


class MixtralBlockSparseTop2MLP(nn.Module):
    def __init__(self, hidden: int, ffn: int) -> None:
        super().__init__()
        self.w1 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)
        self.w3 = nn.Linear(hidden, ffn, bias=False)

    def forward(self, hidden_states: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(hidden_states)) * self.w3(hidden_states))


class MixtralSparseMoeBlock(nn.Module):
    def __init__(self, hidden: int, ffn: int) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, EXPERTS, bias=False)
        self.experts = nn.ModuleList(MixtralBlockSparseTop2MLP(hidden, ffn) for _ in range(EXPERTS))

    def forward(self, hidden_states: Tensor) -> Tensor:
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)  # (tokens, experts)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, TOP_K, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        # the top-2 weights scattered to a dense (tokens, experts) matrix: zero where not picked
        dense_weights = torch.zeros_like(router_logits).scatter_(
            1, selected_experts, routing_weights
        )
        final_hidden_states = torch.zeros_like(hidden_states)
        for expert_idx, expert_layer in enumerate(self.experts):
            current = expert_layer(hidden_states) * dense_weights[:, expert_idx, None]
            final_hidden_states += current
        return final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)


class MixtralDecoderLayer(nn.Module):
    def __init__(self, hidden: int, ffn: int, batch: int, cache_len: int) -> None:
        super().__init__()
        self.self_attn = MixtralAttention(hidden, batch, cache_len)
        self.block_sparse_moe = MixtralSparseMoeBlock(hidden, ffn)
        self.input_layernorm = MixtralRMSNorm(hidden)
        self.post_attention_layernorm = MixtralRMSNorm(hidden)

    def forward(
        self,
        hidden_states: Tensor,
        cos: Tensor,
        sin: Tensor,
        rows: Tensor,
        positions: Tensor,
        causal_mask: Tensor,
    ) -> Tensor:
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, cos, sin, rows, positions, causal_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        return residual + self.block_sparse_moe(hidden_states)


class MixtralForCausalLM(nn.Module):
    def __init__(self, vocab: int, hidden: int, layers: int, ffn: int, batch: int, cache_len: int):
        super().__init__()
        self.cache_len = cache_len
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(
            MixtralDecoderLayer(hidden, ffn, batch, cache_len) for _ in range(layers)
        )
        self.norm = MixtralRMSNorm(hidden)
        self.rotary_emb = MixtralRotaryEmbedding(HEAD_DIM)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.register_buffer("rows", torch.arange(batch))
        self.register_buffer("slots", torch.arange(cache_len))

    def forward(self, input_ids: Tensor, positions: Tensor) -> Tensor:
        hidden_states = self.embed_tokens(input_ids[:, None])  # (b, 1, hidden)
        cos, sin = self.rotary_emb(hidden_states, positions[:, None])
        min_value = torch.finfo(hidden_states.dtype).min
        visible = self.slots[None, :] <= positions[:, None]  # (b, cache_len)
        causal_mask = torch.where(visible, 0.0, min_value).to(hidden_states.dtype)
        causal_mask = causal_mask[:, None, None, :]  # (b, 1, 1, cache_len)
        for layer in self.layers:
            hidden_states = layer(hidden_states, cos, sin, self.rows, positions, causal_mask)
        logits = self.lm_head(self.norm(hidden_states)).float()
        return logits[:, -1]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        vocab, hidden, layers, ffn, batch, cache_len = 100, 32, 2, 48, 3, 24
    else:
        vocab, hidden, layers, ffn, batch, cache_len = VOCAB, HIDDEN, LAYERS, FFN, BATCH, CACHE_LEN
    dtype = low_precision(device)
    model = MixtralForCausalLM(vocab, hidden, layers, ffn, batch, cache_len)
    model = model.to(device, dtype).eval()
    model.rotary_emb.inv_freq = model.rotary_emb.inv_freq.float()  # kept fp32, as HF does

    @torch.no_grad()
    def step(input_ids: Tensor, positions: Tensor) -> Tensor:
        return model(input_ids, positions).argmax(dim=-1)

    first = torch.randint(min(16, cache_len // 2), cache_len - 2, (batch,), device=device)
    inputs = [(torch.randint(0, vocab, (batch,), device=device), first + i) for i in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Mixtral-style decode: {layers} layers d{hidden}, GQA {HEADS}/{KV_HEADS}, top-{TOP_K} of "
        f"{EXPERTS} SwiGLU experts {ffn} (dense routing matrix, every expert over all tokens), "
        f"static cache {cache_len}, per-sequence positions, {precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
