"""One decode step for 8 sequences through 4 Llama-style decoder layers (d 1024, 16 heads of
64, SwiGLU MLP 2688, no bias, the layers of ``_models.DecoderLayer``) whose static KV caches of
512 positions per layer are ring buffers, bf16 (fifteenth hold-out), inference. The position of
the new token is a device tensor (1 element, int64), never a Python int, so the step is
graph-safe: its cache slot is ``position % 512`` (``remainder`` on the device) and the number
of valid cache entries ``min(position + 1, 512)``, both computed once per step; per layer the
new token's K and V (8 x 16 x 1 x 64) are written into the slot with ``index_copy_`` on the two
caches (8 x 16 x 512 x 64 each), and ``F.scaled_dot_product_attention`` of the one query over
the whole cache takes a boolean mask of the valid slots (slot < valid count: once the ring has
wrapped every slot is valid; without rotary embeddings the order of the keys in the ring does
not matter). The caches start filled with random values (earlier tokens). The position is 704
in both input sets, past the wrap (slot 192), so every step writes the same slot and reads the
cache as built otherwise (a step depends only on its inputs); the mask is then all true, but it
is still computed on the device, as it must be for positions before the wrap. About 35 kernels
per layer (two RMSNorms of 7 elementwise kernels each, 4 GEMMs, the two cache writes, the
mask's conversion and the attention, SiLU, the gating product, the residual adds), some 140 in
all, small: launch-bound. Inputs: the new tokens' hidden states (8 x 1 x 1024) and the position
(a 1-element int64 tensor). Returns the hidden states after the 4 layers (8 x 1 x 1024).

    traceinspect profile kv_ring_buffer_decode_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import DecoderLayer
from torch import Tensor, nn

LAYERS = 4


class RingDecoderLayer(DecoderLayer):
    """``DecoderLayer`` with its KV cache used as a ring buffer: the write slot and the mask of
    valid slots come in as device tensors."""

    def forward(self, x: Tensor, slot: Tensor, valid: Tensor) -> Tensor:
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 1, 3, self.heads, self.dh).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        self.k_cache.index_copy_(2, slot, k)
        self.v_cache.index_copy_(2, slot, v)
        att = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=valid)
        x = x + self.proj(att.transpose(1, 2).reshape(b, 1, -1))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, heads, cache_len = (2, 32, 2, 16) if smoke else (8, 1024, 16, 512)
    dtype = low_precision(device)
    layers = nn.ModuleList(
        RingDecoderLayer(d, heads, batch, cache_len, dtype) for _ in range(LAYERS)
    )
    layers = layers.to(device).eval()
    slots = torch.arange(cache_len, device=device)

    @torch.no_grad()
    def step(x: Tensor, pos: Tensor) -> Tensor:
        slot = torch.remainder(pos, cache_len)
        valid = (slots < (pos + 1).clamp(max=cache_len)).view(1, 1, 1, -1)
        for layer in layers:
            x = layer(x, slot, valid)
        return x

    position = cache_len + cache_len * 3 // 8  # past the wrap: 704, slot 192 at full size
    inputs = [
        (
            torch.randn(batch, 1, d, device=device, dtype=dtype),
            torch.tensor([position], device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"decode step, {LAYERS} decoder layers d{d} ({heads} heads), ring-buffer KV cache "
        f"{cache_len} (slot = position % {cache_len}, index_copy_, masked SDPA), batch {batch}"
    )
    return Built(step, inputs, description, [layers, slots])


if __name__ == "__main__":
    main(build, __doc__)
