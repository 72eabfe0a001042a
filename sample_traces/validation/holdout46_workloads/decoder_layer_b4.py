"""One pre-LayerNorm transformer decoder layer over 4 sequences of 256 tokens (forty-sixth
hold-out: a plain single-stream transformer layer): d_model 1024, 16 heads, causal
``scaled_dot_product_attention``, a 4096-wide GELU MLP, residuals. bf16 on a GPU, eval mode, no
gradients. Input: (4, 256, 1024). Returns (4, 256, 1024).

    traceinspect profile decoder_layer_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F
from _common import Built, low_precision, main
from torch import Tensor, nn


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d, heads = (2, 8, 16, 2) if smoke else (4, 256, 1024, 16)
    dtype = low_precision(device)
    layer = Layer(d, heads).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return layer(x)

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"decoder layer d{d} h{heads}, {tokens} tokens, b{batch}", [layer])


if __name__ == "__main__":
    main(build, __doc__)
