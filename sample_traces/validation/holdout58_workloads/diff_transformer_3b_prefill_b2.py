"""The Differential Transformer (DIFF Transformer, Ye et al., ICLR 2025) prefilling 2 prompts of
1024 tokens through the first 4 of its decoder layers, each attention head the difference of two
softmax attention maps (fifty-eighth hold-out: one stream of some 290 kernels under bf16 autocast,
per layer the q / k / v / out projections and the SwiGLU's three 3072 x 8192 GEMMs over 2048 token
rows, 39 to 103 GFLOP each (some 465 GFLOP a layer), four causal flash attentions of 12 heads of 128
over 1024 tokens, the interleaved rotary embeddings, the differential combination, the per-head
RMSNorm and the residual RMSNorms over fp32 activations of 25 MB, and autocast's casts of the fp32
weights to bf16 at each step (some 680 MB read and written a layer): GEMM-bound, with memory-bound
elementwise stretches). Laid out as microsoft/unilm's ``Diff-Transformer``
(``multihead_flashdiff_2.py``, the variant for flash attention without distinct q / k and v head
sizes) at a size chosen here near the paper's 3B models: d 3072, 12 differential heads (half a
Transformer's 24), head_dim 3072 / 12 / 2 = 128, no grouped KV, SwiGLU FFN 8192 (8/3 d), RMSNorm eps
1e-5, rotary base 10000, a 32000-token vocabulary. Per layer (pre-norm: x + DiffAttn(RMSNorm(x)),
then x + SwiGLU(RMSNorm(x))), ``MultiheadFlashDiff2``: ``q_proj``, ``k_proj``, ``v_proj``,
``out_proj`` ``Linear(3072, 3072, bias=False)``; q and k viewed as 24 half-heads of 128, v as 12
heads of 2 x 128; ``apply_rotary_emb(..., interleaved=True)`` on q and k; q1, q2, k1, k2, v1, v2 the
halves; the four ``flash_attn_func(..., causal=True)`` calls, (q1, k1) with v1 and with v2, (q2, k2)
with v1 and with v2, here ``F.scaled_dot_product_attention(is_causal=True)`` on the transposed
views; the two outputs concatenated each; lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 .
lambda_k2) + lambda_init (0.8 - 0.6 exp(-0.3 depth), depth the layer index); attn1 - lambda attn2;
``subln`` RMSNorm over the 256 channels of a head; times (1 - lambda_init); ``out_proj``. The
SwiGLU: ``Linear(3072, 8192)`` twice (gate and up, no biases), SiLU of the gate times up,
``Linear(8192, 3072)``. Then the final RMSNorm and the output projection on each prompt's last
position. fp32 weights under ``torch.autocast(dtype=torch.bfloat16)`` on a GPU (fp32 on a CPU), the
residual stream in fp32 as autocast leaves it, eval, no gradients, random weights (torch's defaults;
the lambda vectors N(0, 0.1) as the reference initializes them). Input (two input sets): the prompts
(2, 1024) int64, uniform token ids. Returns the next-token logits (2, 32000), fp32.

    traceinspect profile diff_transformer_3b_prefill_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

ROPE_BASE, EPS = 10000.0, 1e-5


class RMSNorm(nn.Module):
    """Diff-Transformer's rms_norm.RMSNorm: the norm in fp32, cast back, times the weight."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x: Tensor) -> Tensor:
        xf = x.float()
        out = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).type_as(x)
        return out * self.weight


def rotary_interleaved(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """flash-attn's apply_rotary_emb(x, cos, sin, interleaved=True) on (b, t, heads, d)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None].to(x.dtype), sin[None, :, None].to(x.dtype)
    return torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)


class MultiheadFlashDiff2(nn.Module):
    def __init__(self, d: int, depth: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, d // heads // 2
        self.q_proj, self.k_proj = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.v_proj, self.out_proj = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * depth)
        self.lambda_q1, self.lambda_k1, self.lambda_q2, self.lambda_k2 = (
            nn.Parameter(torch.zeros(self.head_dim).normal_(mean=0, std=0.1)) for _ in range(4)
        )
        self.subln = RMSNorm(2 * self.head_dim)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, t, d = x.shape
        h, hd = self.heads, self.head_dim
        q = self.q_proj(x).view(b, t, 2 * h, hd)
        k = self.k_proj(x).view(b, t, 2 * h, hd)
        v = self.v_proj(x).view(b, t, h, 2, hd)
        q = rotary_interleaved(q, cos, sin).reshape(b, t, h, 2, hd)
        k = rotary_interleaved(k, cos, sin).reshape(b, t, h, 2, hd)
        q1, q2, k1, k2 = q[:, :, :, 0], q[:, :, :, 1], k[:, :, :, 0], k[:, :, :, 1]
        v1, v2 = v[:, :, :, 0], v[:, :, :, 1]

        def attn(qq: Tensor, kk: Tensor, vv: Tensor) -> Tensor:
            out = F.scaled_dot_product_attention(
                qq.transpose(1, 2), kk.transpose(1, 2), vv.transpose(1, 2), is_causal=True
            )
            return out.transpose(1, 2)

        attn1 = torch.cat([attn(q1, k1, v1), attn(q1, k1, v2)], dim=-1)
        attn2 = torch.cat([attn(q2, k2, v1), attn(q2, k2, v2)], dim=-1)
        lambda_1 = torch.exp(torch.sum(self.lambda_q1 * self.lambda_k1, dim=-1).float())
        lambda_2 = torch.exp(torch.sum(self.lambda_q2 * self.lambda_k2, dim=-1).float())
        lambda_full = (lambda_1.type_as(q) - lambda_2.type_as(q)) + self.lambda_init
        out = self.subln(attn1 - lambda_full * attn2) * (1 - self.lambda_init)
        return self.out_proj(out.reshape(b, t, d))


class DiffLayer(nn.Module):
    def __init__(self, d: int, depth: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.attn_norm, self.ffn_norm = RMSNorm(d), RMSNorm(d)
        self.attn = MultiheadFlashDiff2(d, depth, heads)
        self.gate, self.up = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class DiffTransformer(nn.Module):
    def __init__(self, vocab: int, d: int, heads: int, ffn: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DiffLayer(d, i, heads, ffn) for i in range(layers))
        self.norm = RMSNorm(d)
        self.output = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x[:, -1])).float()


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, length, vocab, d, heads, ffn, layers = 2, 16, 100, 64, 2, 160, 2
    else:
        batch, length, vocab, d, heads, ffn, layers = 2, 1024, 32000, 3072, 12, 8192, 4
    model = DiffTransformer(vocab, d, heads, ffn, layers).to(device).eval()
    head_dim = d // heads // 2
    inv_freq = ROPE_BASE ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    angles = torch.arange(length, dtype=torch.float32)[:, None] * inv_freq[None]
    cos, sin = angles.cos().to(device), angles.sin().to(device)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")

    @torch.no_grad()
    def step(tokens: Tensor) -> Tensor:
        with autocast:
            return model(tokens, cos, sin)

    inputs = [(torch.randint(0, vocab, (batch, length), device=device),) for _ in range(2)]
    precision = "bf16 autocast" if device.type == "cuda" else "fp32"
    description = (
        f"DIFF Transformer prefill: {layers} layers d{d}, {heads} differential heads "
        f"(4 causal SDPA each), SwiGLU {ffn}, {batch} x {length} tokens, {precision}"
    )
    return Built(step, inputs, description, [model, cos, sin])


if __name__ == "__main__":
    main(build, __doc__)
