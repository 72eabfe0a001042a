"""A GPT-NeoX-style decoder forward with the parallel residual (thirty-sixth hold-out): 2
sequences of 256 tokens through 4 decoder layers of width 1024, bf16 on a GPU, eval mode,
no gradients. Per layer, as Hugging Face's ``GPTNeoXLayer`` with ``use_parallel_residual``:
x + attn(ln1(x)) + mlp(ln2(x)), both branches reading the same layer input. Attention: a
LayerNorm; a fused ``Linear(1024, 3 x 1024)`` laid out per head (viewed as (b, s, 16 heads,
3 x 64) and split into Q, K, V, as GPT-NeoX does); rotary position embeddings on the first
half of each head's 64 dims (rotary_pct 0.5, 32 dims rotated in the rotate-half form, the
other 32 passed through and concatenated back), from cos / sin tables of 256 x 32 built at
build; causal ``F.scaled_dot_product_attention(is_causal=True)``; the output projection
``Linear(1024, 1024)``. MLP: a second LayerNorm, ``Linear(1024, 4096)``, exact GELU,
``Linear(4096, 1024)``. All linears with biases. Input: the (2, 256, 1024) hidden states;
returns the output hidden states of the same shape (no final LayerNorm).

    traceinspect profile gpt_neox_parallel_block_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, HEADS, ROTARY_PCT, BATCH = 4, 16, 0.5, 2


def rotate_half(x: Tensor) -> Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


def apply_partial_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """x (b, h, s, dh): rotary on the first cos.shape[-1] dims of each head, the rest as is."""
    rot = cos.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat([x_rot * cos + rotate_half(x_rot) * sin, x_pass], dim=-1)


class ParallelLayer(nn.Module):
    def __init__(self, d: int, hidden: int) -> None:
        super().__init__()
        self.dh = d // HEADS
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.dense = nn.Linear(d, d)
        self.fc_in = nn.Linear(d, hidden)
        self.fc_out = nn.Linear(hidden, d)

    def attn(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, s, d = x.shape
        qkv = self.qkv(x).view(b, s, HEADS, 3 * self.dh).transpose(1, 2)  # (b, h, s, 3 dh)
        q, k, v = qkv.split(self.dh, dim=-1)
        q, k = apply_partial_rotary(q, cos, sin), apply_partial_rotary(k, cos, sin)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.dense(att.transpose(1, 2).reshape(b, s, d))

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        mlp = self.fc_out(F.gelu(self.fc_in(self.ln2(x))))
        return x + self.attn(self.ln1(x), cos, sin) + mlp


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, hidden = (2, 16, 128, 512) if smoke else (BATCH, 256, 1024, 4096)
    dtype = low_precision(device)
    model = nn.ModuleList(ParallelLayer(d, hidden) for _ in range(LAYERS))
    model = model.to(device, dtype).eval()
    rot = int((d // HEADS) * ROTARY_PCT)
    inv_freq = 1.0 / 10000 ** (torch.arange(0, rot, 2, device=device).float() / rot)
    angles = torch.outer(torch.arange(seq, device=device).float(), inv_freq)
    angles = torch.cat([angles, angles], dim=-1)  # (seq, rot)
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in model:
            x = layer(x, cos, sin)
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"GPT-NeoX parallel-residual decoder, {LAYERS} layers d{d}, {HEADS} heads, "
        f"rotary {rot}/{d // HEADS} dims, {seq} tokens, b{batch}",
        [model, cos, sin],
    )


if __name__ == "__main__":
    main(build, __doc__)
