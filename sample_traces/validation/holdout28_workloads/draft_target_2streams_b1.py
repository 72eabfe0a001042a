"""Speculative decoding with the draft and the target model side by side on two streams
(twenty-eighth hold-out): batch 1, bf16 on a GPU. On one stream the target model (4 decoder
layers of 2,048 channels, 16 heads) verifies the 4 tokens drafted last step plus one, against
a fixed 512-token cache; on the other the draft model (2 layers of 512, 8 heads) decodes
its next token against its own 512-token cache. Each layer: RMSNorm, a fused QKV
projection, the new keys and values concatenated after the cache (``cat``),
scaled-dot-product attention, an output projection and a SiLU MLP (x 2.75). Forked with
``wait_stream`` and joined back, then the target's 5 and the draft's 1 logits over a
shared 8,192-word head and their argmaxes. GEMV-shaped GEMMs of 2-3 µs beside each other.

    traceinspect profile draft_target_2streams_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


class Layer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, d * 11 // 4, bias=False)
        self.down = nn.Linear(d * 11 // 4, d, bias=False)

    def forward(self, x: Tensor, k_cache: Tensor, v_cache: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(rms_norm(x, self.norm1)).view(b, t, 3, self.heads, -1).unbind(2)
        keys = torch.cat([k_cache, k.transpose(1, 2)], dim=2)
        values = torch.cat([v_cache, v.transpose(1, 2)], dim=2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), keys, values)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(rms_norm(x, self.norm2))))


def model(layers: int, d: int, heads: int, ctx: int, device: torch.device, dtype: torch.dtype):
    stack = nn.ModuleList([Layer(d, heads) for _ in range(layers)]).to(device, dtype).eval()
    caches = [
        (
            torch.randn(1, heads, ctx, d // heads, device=device, dtype=dtype),
            torch.randn(1, heads, ctx, d // heads, device=device, dtype=dtype),
        )
        for _ in range(layers)
    ]

    def run(x: Tensor) -> Tensor:
        for layer, (kc, vc) in zip(stack, caches, strict=True):
            x = layer(x, kc, vc)
        return x

    return stack, caches, run


def build(device: torch.device, smoke: bool) -> Built:
    dt, ht, dd, hd, ctx, vocab = (32, 2, 16, 2, 8, 50) if smoke else (2048, 16, 512, 8, 512, 8192)
    dtype = low_precision(device)
    target, target_caches, run_target = model(4, dt, ht, ctx, device, dtype)
    draft, draft_caches, run_draft = model(2, dd, hd, ctx, device, dtype)
    head_t = nn.Linear(dt, vocab, bias=False).to(device, dtype)
    head_d = nn.Linear(dd, vocab, bias=False).to(device, dtype)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(verify: Tensor, next_in: Tensor) -> tuple[Tensor, Tensor]:
        t, dr = fork_join(
            device,
            streams,
            [lambda: head_t(run_target(verify)), lambda: head_d(run_draft(next_in))],
        )
        return t.argmax(-1), dr.argmax(-1)

    inputs = [
        (
            torch.randn(1, 5, dt, device=device, dtype=dtype),
            torch.randn(1, 1, dd, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"target 4x{dt} verifying 5 beside draft 2x{dd} on 2 streams, b1",
        [target, draft, target_caches, draft_caches, head_t, head_d],
    )


if __name__ == "__main__":
    main(build, __doc__)
