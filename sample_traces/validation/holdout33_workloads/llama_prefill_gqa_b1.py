"""A LLaMA-style prefill with grouped-query attention (thirty-third hold-out): one prompt of
512 tokens through 4 decoder layers of width 1024, bf16 on a GPU, eval mode, no gradients.
Per layer: RMSNorm; a fused projection to 16 query heads and 4 key/value heads of 64;
rotary position embeddings on Q and K (cos / sin tables of 512 x 64 built beforehand);
K and V repeated to 16 heads (``expand`` + ``reshape``, as Hugging Face's ``repeat_kv``); causal
``F.scaled_dot_product_attention(is_causal=True)``; the output projection and a residual;
RMSNorm and a SwiGLU MLP 1024 -> 2 x 2816 -> 1024 with a residual. A final RMSNorm. Input:
the (1, 512, 1024) hidden states; returns the output hidden states of the same shape.

    traceinspect profile llama_prefill_gqa_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import RMSNorm
from torch import Tensor, nn

LAYERS, HEADS, KV_HEADS = 4, 16, 4


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-b, a], dim=-1) * sin


def repeat_kv(x: Tensor) -> Tensor:
    """(b, KV_HEADS, s, dh) -> (b, HEADS, s, dh), each key/value head serving its group."""
    b, h, s, dh = x.shape
    return x[:, :, None].expand(b, h, HEADS // h, s, dh).reshape(b, HEADS, s, dh)


class GQALayer(nn.Module):
    def __init__(self, d: int, hidden: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.dh = d // HEADS
        self.norm1 = RMSNorm(d, dtype)
        self.qkv = nn.Linear(d, d + 2 * KV_HEADS * self.dh, bias=False, dtype=dtype)
        self.proj = nn.Linear(d, d, bias=False, dtype=dtype)
        self.norm2 = RMSNorm(d, dtype)
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False, dtype=dtype)
        self.down = nn.Linear(hidden, d, bias=False, dtype=dtype)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, s, d = x.shape
        kv = KV_HEADS * self.dh
        q, k, v = self.qkv(self.norm1(x)).split([d, kv, kv], dim=-1)
        q = rotate(q.view(b, s, HEADS, self.dh).transpose(1, 2), cos, sin)
        k = rotate(k.view(b, s, KV_HEADS, self.dh).transpose(1, 2), cos, sin)
        v = v.view(b, s, KV_HEADS, self.dh).transpose(1, 2)
        k, v = repeat_kv(k), repeat_kv(v)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        gate, up = self.gate_up(self.norm2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def build(device: torch.device, smoke: bool) -> Built:
    seq, d, hidden = (16, 128, 192) if smoke else (512, 1024, 2816)
    dtype = low_precision(device)
    layers = nn.ModuleList(GQALayer(d, hidden, dtype) for _ in range(LAYERS))
    norm = RMSNorm(d, dtype)
    model = nn.ModuleList([layers, norm]).to(device).eval()
    dh = d // HEADS
    inv_freq = 1.0 / 10000 ** (torch.arange(0, dh, 2, device=device).float() / dh)
    angles = torch.outer(torch.arange(seq, device=device).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in layers:
            x = layer(x, cos, sin)
        return norm(x)

    inputs = [(torch.randn(1, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"LLaMA prefill, {LAYERS} layers d{d}, GQA {HEADS}/{KV_HEADS} heads, {seq} tokens, b1",
        [model, cos, sin],
    )


if __name__ == "__main__":
    main(build, __doc__)
