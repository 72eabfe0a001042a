"""Multi-head latent attention (DeepSeek-V2's MLA) in prefill (twenty-eighth hold-out): 4
sequences of 256 tokens, 1,024 channels, bf16 on a GPU. Each of two blocks: RMSNorm, queries
down to a 384 rank and back up to 16 heads of 64 + 32 (``nope`` + rotary) channels; keys and
values down to a shared 256-wide latent (RMSNorm'd) plus one 32-wide rotary key shared by
all heads, then the latent up to the heads' keys (64) and values (64); rotary embedding
(cos/sin tables built once) on the rotary parts, the parts concatenated, causal
scaled-dot-product attention, an output projection and a GELU MLP 1,024 -> 2,816 -> 1,024.
One stream.

    traceinspect profile mla_latent_attention_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS = 2


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Block(nn.Module):
    def __init__(self, d: int, heads: int, q_rank: int, kv_rank: int, nope: int, rope: int):
        super().__init__()
        self.heads, self.nope, self.rope, self.kv_rank = heads, nope, rope, kv_rank
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.kv_norm = nn.Parameter(torch.ones(kv_rank))
        self.q_down = nn.Linear(d, q_rank, bias=False)
        self.q_up = nn.Linear(q_rank, heads * (nope + rope), bias=False)
        self.kv_down = nn.Linear(d, kv_rank + rope, bias=False)
        self.kv_up = nn.Linear(kv_rank, heads * 2 * nope, bias=False)
        self.out = nn.Linear(heads * nope, d, bias=False)
        self.fc1 = nn.Linear(d, d * 11 // 4, bias=False)
        self.fc2 = nn.Linear(d * 11 // 4, d, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, t, _ = x.shape
        h, nope, rope = self.heads, self.nope, self.rope
        y = rms_norm(x, self.norm1)
        q = self.q_up(self.q_down(y)).view(b, t, h, nope + rope).transpose(1, 2)
        q_nope, q_rope = q.split([nope, rope], dim=-1)
        latent, k_rope = self.kv_down(y).split([self.kv_rank, rope], dim=-1)
        kv = self.kv_up(rms_norm(latent, self.kv_norm)).view(b, t, h, 2 * nope).transpose(1, 2)
        k_nope, v = kv.chunk(2, dim=-1)
        k_rope = rotate(k_rope[:, None], cos, sin).expand(b, h, t, rope)
        q = torch.cat([q_nope, rotate(q_rope, cos, sin)], dim=-1)
        k = torch.cat([k_nope, k_rope], dim=-1)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(o.transpose(1, 2).reshape(b, t, h * nope))
        return x + self.fc2(F.gelu(self.fc1(rms_norm(x, self.norm2)), approximate="tanh"))


def build(device: torch.device, smoke: bool) -> Built:
    batch, t, d, heads = (2, 8, 64, 2) if smoke else (4, 256, 1024, 16)
    q_rank, kv_rank, nope, rope = (16, 16, 8, 4) if smoke else (384, 256, 64, 32)
    dtype = low_precision(device)
    blocks = (
        nn.ModuleList([Block(d, heads, q_rank, kv_rank, nope, rope) for _ in range(BLOCKS)])
        .to(device, dtype)
        .eval()
    )
    angle = torch.arange(t, device=device)[:, None] * (
        10000 ** (-torch.arange(rope // 2, device=device) / (rope // 2))
    )
    cos, sin = angle.cos().to(dtype), angle.sin().to(dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for block in blocks:
            x = block(x, cos, sin)
        return x

    inputs = [(torch.randn(batch, t, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"{BLOCKS} MLA blocks d{d} h{heads}, {t} tokens, b{batch}", [blocks])


if __name__ == "__main__":
    main(build, __doc__)
