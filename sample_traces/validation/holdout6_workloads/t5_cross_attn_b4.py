"""Encoder-decoder transformer, decoder side: 2 T5-style decoder layers (d 512, 8 heads,
pre-RMSNorm, Linears without bias) over 4 x 32 decoder tokens, each a causal self-attention
(one fused qkv Linear, SDPA with is_causal=True), a cross-attention to fixed encoder states
(4 x 128 x 512, given as the second input; q from the decoder, one fused kv Linear on the
encoder states, SDPA) and a ReLU FFN 512->2048->512, each with a residual; a final RMSNorm,
bf16 (sixth hold-out). No relative position bias: SDPA's default 1/sqrt(64) scaling.

    traceinspect profile t5_cross_attn_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import Tensor, nn


class T5DecoderLayer(nn.Module):
    def __init__(self, d: int, heads: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2, self.norm3 = (RMSNorm(d, dtype) for _ in range(3))
        self.qkv = nn.Linear(d, 3 * d, bias=False, dtype=dtype)
        self.self_out = nn.Linear(d, d, bias=False, dtype=dtype)
        self.q = nn.Linear(d, d, bias=False, dtype=dtype)
        self.kv = nn.Linear(d, 2 * d, bias=False, dtype=dtype)
        self.cross_out = nn.Linear(d, d, bias=False, dtype=dtype)
        self.wi = nn.Linear(d, hidden, bias=False, dtype=dtype)
        self.wo = nn.Linear(hidden, d, bias=False, dtype=dtype)

    def heads_first(self, x: Tensor, parts: int) -> tuple[Tensor, ...]:
        b, t, _ = x.shape  # (B, T, parts * d) -> parts x (B, heads, T, dh)
        return x.view(b, t, parts, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)

    def merge(self, att: Tensor) -> Tensor:
        b, _, t, _ = att.shape
        return att.transpose(1, 2).reshape(b, t, -1)

    def forward(self, x: Tensor, memory: Tensor) -> Tensor:
        q, k, v = self.heads_first(self.qkv(self.norm1(x)), 3)
        x = x + self.self_out(self.merge(F.scaled_dot_product_attention(q, k, v, is_causal=True)))
        (q,) = self.heads_first(self.q(self.norm2(x)), 1)
        k, v = self.heads_first(self.kv(memory), 2)
        x = x + self.cross_out(self.merge(F.scaled_dot_product_attention(q, k, v)))
        return x + self.wo(torch.relu(self.wi(self.norm3(x))))


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, hidden, batch, tokens, source = (
        (2, 32, 2, 64, 2, 8, 16) if smoke else (2, 512, 8, 2048, 4, 32, 128)
    )
    dtype = low_precision(device)
    blocks = nn.ModuleList(T5DecoderLayer(d, heads, hidden, dtype) for _ in range(layers))
    final = RMSNorm(d, dtype)
    model = nn.ModuleList([blocks, final]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor, memory: Tensor) -> Tensor:
        for block in blocks:
            x = block(x, memory)
        return final(x)

    inputs = [
        (
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
            torch.randn(batch, source, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = f"T5 decoder, {layers} x d{d}, {tokens} tokens x {source} encoder states"
    return Built(step, inputs, f"{description}, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
