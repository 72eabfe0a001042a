"""A serving step that runs a prefill chunk and a decode batch side by side on two streams,
as a server that splits long prompts into chunks does (twenty-ninth hold-out): one model of
3 layers, 1,024 channels in 16 heads, bf16 on a GPU. On one stream a 256-token chunk of one
prompt (causal attention over the chunk and 768 tokens already cached); on the other, one
token for each of 8 other sequences against their 512-token caches. Each layer: RMSNorm, a
fused QKV projection, keys and values concatenated after the (fixed) caches,
scaled-dot-product attention, the output projection and a SiLU MLP (x 2.75). The two share
the weights; joined back, both hidden states are returned.

    traceinspect profile prefill_decode_2streams.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 3


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

    def forward(self, x: Tensor, k_cache: Tensor, v_cache: Tensor, mask: Tensor | None) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(rms_norm(x, self.norm1)).view(b, t, 3, self.heads, -1).unbind(2)
        keys = torch.cat([k_cache, k.transpose(1, 2)], dim=2)
        values = torch.cat([v_cache, v.transpose(1, 2)], dim=2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), keys, values, attn_mask=mask)
        x = x + self.out(y.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.silu(self.up(rms_norm(x, self.norm2))))


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, chunk, past, decode, ctx = (
        (32, 2, 8, 8, 2, 8) if smoke else (1024, 16, 256, 768, 8, 512)
    )
    dtype = low_precision(device)
    layers = nn.ModuleList([Layer(d, heads) for _ in range(LAYERS)]).to(device, dtype).eval()
    hd = d // heads

    def cache(b: int, t: int) -> list[tuple[Tensor, Tensor]]:
        shape = (b, heads, t, hd)
        return [
            (
                torch.randn(shape, device=device, dtype=dtype),
                torch.randn(shape, device=device, dtype=dtype),
            )
            for _ in range(LAYERS)
        ]

    prefill_cache, decode_cache = cache(1, past), cache(decode, ctx)
    # the chunk's causal mask over the cached tokens and itself
    i = torch.arange(chunk, device=device)[:, None]
    j = torch.arange(past + chunk, device=device)[None, :]
    chunk_mask = j <= i + past
    streams = side_streams(device, 2)

    def run(x: Tensor, caches: list[tuple[Tensor, Tensor]], mask: Tensor | None) -> Tensor:
        for layer, (kc, vc) in zip(layers, caches, strict=True):
            x = layer(x, kc, vc, mask)
        return x

    @torch.no_grad()
    def step(prompt: Tensor, tokens: Tensor) -> tuple[Tensor, Tensor]:
        a, b = fork_join(
            device,
            streams,
            [
                lambda: run(prompt, prefill_cache, chunk_mask),
                lambda: run(tokens, decode_cache, None),
            ],
        )
        return a, b

    inputs = [
        (
            torch.randn(1, chunk, d, device=device, dtype=dtype),
            torch.randn(decode, 1, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"prefill chunk {chunk} beside decode b{decode} on 2 streams, {LAYERS}x{d}",
        [layers, prefill_cache, decode_cache, chunk_mask],
    )


if __name__ == "__main__":
    main(build, __doc__)
