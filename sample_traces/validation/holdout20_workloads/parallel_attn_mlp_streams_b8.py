"""Two GPT-J-style parallel blocks (Wang & Komatsuzaki, 2021) with the attention and the MLP
of each block forked onto two side streams, 8 sequences of 128 tokens, d 1024, 16 heads,
bf16 (twentieth hold-out), inference: ``x + attn(ln(x)) + mlp(ln(x))`` where one LayerNorm
feeds both branches; the attention branch (QKV Linear 1024->3072, causal SDPA, output
Linear) and the MLP branch (Linear 1024->4096, GELU, Linear 4096->1024) run side by side and
join on the current stream for the two residual adds. About 30 kernels, eight GEMMs over
1024 tokens: the MLP's two 1024 x 1024 x 4096 GEMMs beside the attention's. Input: 8 x 128
x 1024. Returns 8 x 128 x 1024.

    traceinspect profile parallel_attn_mlp_streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


class ParallelBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def attention(self, h: Tensor) -> Tensor:
        b, s, d = h.shape
        q, k, v = self.qkv(h).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        att = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        return self.proj(att.transpose(1, 2).reshape(b, s, d))

    def mlp(self, h: Tensor) -> Tensor:
        return self.down(F.gelu(self.up(h)))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, heads = (2, 8, 32, 2) if smoke else (8, 128, 1024, 16)
    dtype = low_precision(device)
    blocks = nn.ModuleList(ParallelBlock(d, heads) for _ in range(2))
    blocks = blocks.to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for block in blocks:
            h = block.norm(x)
            attn, mlp = fork_join(
                device,
                streams,
                [lambda b=block, h=h: b.attention(h), lambda b=block, h=h: b.mlp(h)],
            )
            x = x + attn + mlp
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = f"2 parallel attention+MLP blocks on 2 streams, d{d}, batch {batch} x {seq}"
    return Built(step, inputs, description, [blocks])


if __name__ == "__main__":
    main(build, __doc__)
