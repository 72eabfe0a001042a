"""GPT-2-style causal prefill: 4 blocks (d 768, 12 heads, pre-LayerNorm, one fused qkv
Linear, SDPA with is_causal=True, GELU MLP 3072) over 1 x 512 tokens, bf16 (fifth hold-out).

    traceinspect profile gpt2_prefill_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, hidden, tokens = (2, 32, 2, 64, 16) if smoke else (4, 768, 12, 3072, 512)
    dtype = low_precision(device)
    model = nn.Sequential(*(Block(d, heads, hidden) for _ in range(layers)), nn.LayerNorm(d))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(1, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"GPT-2 prefill, {layers} x d{d}, {tokens} tokens", [model])


if __name__ == "__main__":
    main(build, __doc__)
