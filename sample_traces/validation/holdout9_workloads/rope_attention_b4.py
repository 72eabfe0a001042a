"""Two decoder-style transformer layers with rotary position embeddings applied by hand and
grouped-query attention, over 4 sequences of 256 tokens of d 512, bf16 (ninth hold-out).
Each layer: RMSNorm, one fused projection Linear 512->768 without bias (8 query heads and 2
key/value heads of 64), rotary embeddings on the queries and keys (cos and sin tables of 256
x 64, made on the device at build, base 10000; rotate-half written with slicing, negation
and ``cat``: x cos + rotate_half(x) sin), the keys and values repeated to 8 heads with
``repeat_interleave(4, dim=1)``, causal SDPA, an output Linear 512->512 and a residual;
then RMSNorm, a SwiGLU MLP (fused gate/up Linear 512->2688, SiLU, Linear 1344->512) and a
residual. A final RMSNorm. Returns 4 x 256 x 512.

    traceinspect profile rope_attention_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import Tensor, nn


def rope_tables(
    seq: int, dh: int, device: torch.device, dtype: torch.dtype
) -> tuple[Tensor, Tensor]:
    inv_freq = 1.0 / 10000 ** (torch.arange(0, dh, 2, device=device, dtype=torch.float32) / dh)
    angles = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # (seq, dh)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rotate_half(x: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class RopeLayer(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.dh = heads, kv_heads, d // heads
        self.norm1 = RMSNorm(d, dtype)
        self.qkv = nn.Linear(d, d + 2 * kv_heads * self.dh, bias=False, dtype=dtype)
        self.proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.norm2 = RMSNorm(d, dtype)
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False, dtype=dtype)
        self.down = nn.Linear(hidden, d, bias=False, dtype=dtype)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, s, d = x.shape
        kv = self.kv_heads * self.dh
        q, k, v = self.qkv(self.norm1(x)).split([d, kv, kv], dim=-1)
        q = q.view(b, s, self.heads, self.dh).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.dh).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.dh).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, kv_heads, seq, batch = (
        (2, 32, 4, 2, 16, 2) if smoke else (2, 512, 8, 2, 256, 4)
    )
    hidden = int(8 * d / 3) // 64 * 64 if not smoke else 64
    dtype = low_precision(device)
    blocks = nn.ModuleList(RopeLayer(d, heads, kv_heads, hidden, dtype) for _ in range(layers))
    final = RMSNorm(d, dtype)
    model = nn.ModuleList([blocks, final]).to(device).eval()
    cos, sin = rope_tables(seq, d // heads, device, dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for block in blocks:
            x = block(x, cos, sin)
        return final(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"RoPE + GQA ({heads} q / {kv_heads} kv heads), {layers} layers x d{d}, "
        f"batch {batch} x {seq}"
    )
    return Built(step, inputs, description, [model, cos, sin])


if __name__ == "__main__":
    main(build, __doc__)
