"""Decoder blocks with ALiBi position biases (Press et al., 2022) (twenty-sixth hold-out):
4 sequences of 256 tokens, 512 channels in 8 heads, bf16 on a GPU. Each of three blocks: an
RMSNorm written out (pow, mean, rsqrt, mul), a fused QKV projection, a per-head linear bias
``-slope * distance`` (built once) added to the causal mask and passed to
scaled-dot-product attention as a float mask, an output projection and a SwiGLU MLP
512 -> 1,360 -> 512. One stream.

    traceinspect profile alibi_decoder_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, HEADS = 3, 8


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.Parameter(torch.ones(d))
        self.norm2 = nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        hidden = int(d * 8 / 3) // 16 * 16
        self.gate_up = nn.Linear(d, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor, bias: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(rms_norm(x, self.norm1)).view(b, t, 3, self.heads, -1).unbind(2)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=bias
        )
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        gate, up = self.gate_up(rms_norm(x, self.norm2)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def alibi(heads: int, t: int, device: torch.device, dtype: torch.dtype) -> Tensor:
    slopes = torch.tensor([2 ** (-8 * (h + 1) / heads) for h in range(heads)], device=device)
    pos = torch.arange(t, device=device)
    distance = (pos[None, :] - pos[:, None]).clamp(max=0).float()  # -(i - j) below the diagonal
    bias = slopes[:, None, None] * distance
    causal = torch.ones(t, t, dtype=torch.bool, device=device).tril()
    return bias.masked_fill(~causal, -math.inf).to(dtype)


def build(device: torch.device, smoke: bool) -> Built:
    batch, t, d = (2, 8, 32) if smoke else (4, 256, 512)
    heads = 2 if smoke else HEADS
    dtype = low_precision(device)
    blocks = nn.ModuleList([Block(d, heads) for _ in range(BLOCKS)]).to(device, dtype).eval()

    bias = alibi(heads, t, device, dtype)  # fixed per length: built once, outside the step

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for block in blocks:
            x = block(x, bias)
        return x

    inputs = [(torch.randn(batch, t, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step, inputs, f"{BLOCKS} ALiBi decoder blocks d{d} h{heads}, {t} tokens, b{batch}", [blocks]
    )


if __name__ == "__main__":
    main(build, __doc__)
