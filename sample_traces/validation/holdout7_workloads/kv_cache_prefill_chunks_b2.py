"""Chunked prefill into a static KV cache: 2 sequences of 256 prompt tokens prefilled as 4
chunks of 64 through 2 Llama-style decoder layers (d 768, 12 heads, RMSNorm, fused qkv
without bias, SwiGLU MLP 2048, no rotary embedding), bf16 (seventh hold-out). Each layer owns
a static KV cache of 512 positions (2 x 12 x 512 x 64 for keys and for values); the first
192 positions hold an earlier prefix (random, set at build) and the chunks fill positions
192-447: chunk i writes its keys and values with slice assignment at the Python-int offset
192 + 64 i (``cache[:, :, o:o + 64] = k``), then its queries attend with SDPA over the cache
up to o + 64 with a boolean causal mask sliced from one 512 x 512 mask made at build. The
chunk loop is unrolled in Python, so every shape is fixed. Input: the token ids (2 x 256,
vocabulary 32000, embedded in the step); output: the last chunk's hidden states after a
final RMSNorm (2 x 64 x 768).

Each step overwrites the same cache slots it reads, so a step depends only on its input.

    traceinspect profile kv_cache_prefill_chunks_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import Tensor, nn


class PrefillLayer(nn.Module):
    def __init__(
        self, d: int, heads: int, hidden: int, batch: int, cache_len: int, dtype: torch.dtype
    ) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(d, dtype)
        self.qkv = nn.Linear(d, 3 * d, bias=False, dtype=dtype)
        self.proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.norm2 = RMSNorm(d, dtype)
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False, dtype=dtype)
        self.down = nn.Linear(hidden, d, bias=False, dtype=dtype)
        shape = (batch, heads, cache_len, d // heads)
        self.register_buffer("k_cache", torch.randn(shape, dtype=dtype) * 0.1)
        self.register_buffer("v_cache", torch.randn(shape, dtype=dtype) * 0.1)

    def forward(self, x: Tensor, offset: int, mask: Tensor) -> Tensor:
        b, t, d = x.shape
        end = offset + t
        q, k, v = (
            self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        )
        self.k_cache[:, :, offset:end] = k
        self.v_cache[:, :, offset:end] = v
        att = F.scaled_dot_product_attention(
            q, self.k_cache[:, :, :end], self.v_cache[:, :, :end], attn_mask=mask[offset:end, :end]
        )
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, hidden, vocab, cache, prefix, chunk, chunks, batch = (
        (2, 32, 2, 64, 100, 32, 8, 4, 4, 2)
        if smoke
        else (2, 768, 12, 2048, 32000, 512, 192, 64, 4, 2)
    )
    dtype = low_precision(device)
    embed = nn.Embedding(vocab, d, dtype=dtype)
    blocks = nn.ModuleList(
        PrefillLayer(d, heads, hidden, batch, cache, dtype) for _ in range(layers)
    )
    final = RMSNorm(d, dtype)
    model = nn.ModuleList([embed, blocks, final]).to(device).eval()
    mask = torch.ones(cache, cache, dtype=torch.bool, device=device).tril()

    @torch.no_grad()
    def step(tokens: Tensor) -> Tensor:
        x = embed(tokens)
        for i in range(chunks):
            h = x[:, i * chunk : (i + 1) * chunk]
            for block in blocks:
                h = block(h, prefix + i * chunk, mask)
        return final(h)

    inputs = [(torch.randint(0, vocab, (batch, chunks * chunk), device=device),) for _ in range(2)]
    description = (
        f"chunked prefill, {chunks} x {chunk} tokens through {layers} x d{d}, "
        f"cache {cache}, batch {batch}"
    )
    return Built(step, inputs, description, [model, mask])


if __name__ == "__main__":
    main(build, __doc__)
