"""One decode step of a Llama-style model with a static KV cache, as Hugging Face's
``StaticCache`` lays it out for CUDA graphs (thirtieth hold-out): batch 1, 4 layers of 2,048
channels, 32 query heads and 8 key-value heads of 64 (grouped-query attention), bf16 on a
GPU. Per layer: RMSNorm, Q, K and V projections, rotary embedding at the input position
(cos/sin rows gathered from tables built once), the new key and value written into the
2,048-slot cache at that position (``index_copy_``), the keys and values repeated for the
query groups (``repeat_interleave``), scaled-dot-product attention of the one query over
the cache with a mask of the positions filled so far (built from the input position), the
output projection and a SwiGLU MLP 2,048 -> 5,632 -> 2,048. Then a final RMSNorm and the
32,000-word head on the last hidden state. One stream; GEMV-shaped GEMMs.

    traceinspect profile llama_decode_static_cache_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS = 4


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-b, a], dim=-1) * sin


class Layer(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int, hidden: int) -> None:
        super().__init__()
        hd = d // heads
        self.heads, self.kv_heads, self.hd = heads, kv_heads, hd
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, kv_heads * hd, bias=False)
        self.v = nn.Linear(d, kv_heads * hd, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(
        self, x: Tensor, pos: Tensor, cos: Tensor, sin: Tensor, kc: Tensor, vc: Tensor, mask: Tensor
    ) -> Tensor:
        y = rms_norm(x, self.norm1)
        q = rotate(self.q(y).view(1, self.heads, 1, self.hd), cos, sin)
        k = rotate(self.k(y).view(1, self.kv_heads, 1, self.hd), cos, sin)
        v = self.v(y).view(1, self.kv_heads, 1, self.hd)
        kc.index_copy_(2, pos, k)
        vc.index_copy_(2, pos, v)
        group = self.heads // self.kv_heads
        keys = kc.repeat_interleave(group, dim=1)
        values = vc.repeat_interleave(group, dim=1)
        a = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        x = x + self.o(a.reshape(1, 1, -1))
        y = rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, kv_heads, hidden, slots, vocab = (
        (32, 4, 2, 64, 16, 50) if smoke else (2048, 32, 8, 5632, 2048, 32000)
    )
    dtype = low_precision(device)
    layers = nn.ModuleList([Layer(d, heads, kv_heads, hidden) for _ in range(LAYERS)])
    norm = nn.Parameter(torch.ones(d))
    head = nn.Linear(d, vocab, bias=False)
    model = nn.ModuleList([layers, head]).to(device, dtype).eval()
    norm.data = norm.data.to(device, dtype)
    hd = d // heads
    caches = [
        (
            torch.randn(1, kv_heads, slots, hd, device=device, dtype=dtype),
            torch.randn(1, kv_heads, slots, hd, device=device, dtype=dtype),
        )
        for _ in range(LAYERS)
    ]
    inv = 10000 ** (-torch.arange(0, hd, 2, device=device).float() / hd)
    angles = torch.arange(slots, device=device).float()[:, None] * inv[None]
    cos_table = torch.cat([angles.cos(), angles.cos()], dim=-1).to(dtype)
    sin_table = torch.cat([angles.sin(), angles.sin()], dim=-1).to(dtype)
    slot_ids = torch.arange(slots, device=device)

    @torch.no_grad()
    def step(x: Tensor, pos: Tensor) -> Tensor:
        cos, sin = cos_table[pos].view(1, 1, 1, hd), sin_table[pos].view(1, 1, 1, hd)
        mask = (slot_ids <= pos).view(1, 1, 1, slots)
        for layer, (kc, vc) in zip(layers, caches, strict=True):
            x = layer(x, pos, cos, sin, kc, vc, mask)
        return head(rms_norm(x, norm)[:, -1])

    inputs = [
        (
            torch.randn(1, 1, d, device=device, dtype=dtype),
            torch.tensor([slots // 2 + i], device=device),
        )
        for i in range(2)
    ]
    return Built(
        step,
        inputs,
        f"Llama decode, {LAYERS} layers d{d}, GQA {heads}/{kv_heads}, static cache",
        [model, norm, caches, cos_table, sin_table, slot_ids],
    )


if __name__ == "__main__":
    main(build, __doc__)
