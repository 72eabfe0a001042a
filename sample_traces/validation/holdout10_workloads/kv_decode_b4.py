"""One greedy decode step of a small GPT-2-style transformer with a preallocated KV cache,
batch 4, bf16 (tenth hold-out): 4 layers of d 768 (12 heads of 64), a vocabulary of 16384
with the output head tied to the token embedding, learned position embeddings, and per
layer a KV cache of 4 x 12 x 1024 x 64 for keys and one for values, allocated at build and
filled with random values standing for a 512-token prompt. Each layer: LayerNorm, fused
qkv Linear 768->2304, the new key and value written into the caches with ``index_copy_`` at
the position, attention written out (q k^T scaled, plus a 0 / -inf bias for the slots past
the position, softmax in fp32, times v) over all 1024 slots, output Linear, residual; then
LayerNorm, GELU MLP 768->3072->768 (tanh approximation), residual. A final LayerNorm, the
logits (4 x 16384) and their argmax on the device, no readback. Inputs: the last tokens
(4 x 1, int64) and the position (a 1-element int64 tensor). The position is 512 in every
input set, so every step writes the same cache slot and reads the cache as built otherwise
(a step depends only on its input), and every shape is fixed. Returns the next tokens
(4 x 1, int64).

    traceinspect profile kv_decode_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class CachedLayer(nn.Module):
    def __init__(self, d: int, heads: int, batch: int, cache_len: int) -> None:
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        shape = (batch, heads, cache_len, self.dh)
        self.register_buffer("k_cache", torch.randn(shape) * 0.5)
        self.register_buffer("v_cache", torch.randn(shape) * 0.5)

    def forward(self, x: Tensor, pos: Tensor, bias: Tensor) -> Tensor:  # x: (B, 1, d)
        b = x.shape[0]
        q, k, v = self.qkv(self.ln1(x)).view(b, 1, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, heads, 1, dh)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        scores = (q * self.dh**-0.5) @ self.k_cache.transpose(-2, -1)  # (B, heads, 1, L)
        att = torch.softmax(scores.float() + bias, dim=-1).to(x.dtype) @ self.v_cache
        x = x + self.proj(att.transpose(1, 2).reshape(b, 1, -1))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class CachedDecoder(nn.Module):
    def __init__(
        self, layers: int, d: int, heads: int, batch: int, cache_len: int, vocab: int
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(cache_len, d)
        self.blocks = nn.ModuleList(CachedLayer(d, heads, batch, cache_len) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.register_buffer("slots", torch.arange(cache_len))

    def forward(self, tokens: Tensor, pos: Tensor) -> Tensor:
        """tokens (B, 1) int64, pos (1,) int64 -> next tokens (B, 1), greedy."""
        bias = torch.zeros(self.slots.shape, device=pos.device).masked_fill_(
            self.slots > pos, float("-inf")
        )
        x = self.tokens(tokens) + self.positions(pos)
        for block in self.blocks:
            x = block(x, pos, bias)
        return F.linear(self.ln(x), self.tokens.weight).argmax(-1)


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, cache, vocab, batch = (
        (2, 32, 4, 16, 64, 4) if smoke else (4, 768, 12, 1024, 16384, 4)
    )
    position = cache // 2  # 512
    dtype = low_precision(device)
    model = CachedDecoder(layers, d, heads, batch, cache, vocab).to(device=device, dtype=dtype)
    model = model.eval()

    @torch.no_grad()
    def step(tokens: Tensor, pos: Tensor) -> Tensor:
        return model(tokens, pos)

    inputs = [
        (
            torch.randint(0, vocab, (batch, 1), device=device),
            torch.tensor([position], device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"KV-cache decode step, {layers} layers x d{d}, cache {cache} at position {position}, "
        f"batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
