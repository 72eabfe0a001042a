"""Two transformer layers with rotary position embeddings applied by hand and grouped-query
attention, bf16 (eighth hold-out): d 512, 8 query heads and 2 key/value heads (each shared by
4 query heads through ``repeat_interleave``), RMSNorm before attention and MLP, a SwiGLU MLP
of width 1376, sequence 256, batch 4. The rotary cos/sin tables are made on the device at
build; rotate-half is slicing and ``cat``.

    traceinspect profile rope_gqa_attention_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def rotate_half(x: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Layer(nn.Module):
    def __init__(self, d: int, heads: int, kv_heads: int, hidden: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.dh = heads, kv_heads, d // heads
        self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
        self.q = nn.Linear(d, d, bias=False)
        self.kv = nn.Linear(d, 2 * kv_heads * self.dh, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, t, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, self.heads, self.dh).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, self.kv_heads, self.dh).permute(2, 0, 3, 1, 4)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, kv_heads, hidden, seq, batch = (
        (32, 4, 2, 64, 8, 2) if smoke else (512, 8, 2, 1376, 256, 4)
    )
    dtype = low_precision(device)
    layers = nn.ModuleList([Layer(d, heads, kv_heads, hidden) for _ in range(2)])
    layers = layers.to(device=device, dtype=dtype).eval()
    dh = d // heads
    freq = 1.0 / (10000 ** (torch.arange(0, dh, 2, device=device, dtype=torch.float32) / dh))
    angle = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), freq)
    angle = torch.cat((angle, angle), dim=-1)
    cos, sin = angle.cos().to(dtype), angle.sin().to(dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in layers:
            x = layer(x, cos, sin)
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"2 RoPE+GQA layers, d {d}, seq {seq}, batch {batch}", [layers])


if __name__ == "__main__":
    main(build, __doc__)
