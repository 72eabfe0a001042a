"""One decode step of one pre-norm transformer decoder layer for batch 4 with a fixed-length
KV cache passed in as inputs, bf16 (seventeenth hold-out), inference, d 512, 8 heads of 64,
the cache 256 positions long, MLP 512->2048->512 with GELU. The step: LayerNorm, the QKV
projection (Linear 512->1536) of the new token, its K and V written into the caches at the
position with ``index_copy_`` along the positions (in place, into the input caches), the
scores of Q against the whole cache (4 x 8 x 1 x 256, scaled by 1/8), the positions after
the current one masked out (``masked_fill`` with -inf, the mask a comparison of an
``arange`` of the 256 positions, made at build, with the position tensor), softmax, times
the V cache, the output projection (Linear 512->512) and the residual; then LayerNorm, the
MLP and the residual. The write is idempotent (an input set always writes the same K and V
at the same position), so a step's outputs depend only on its inputs, and replayed results
compare with eager ones. About 20 kernels (two LayerNorms, four GEMMs, the two
``index_copy_``, the copies a strided Q needs, two batched matmuls, the scaling, the mask,
the softmax, the GELU, the two residual adds), the largest reading the 1 MB caches:
launch-bound; the two cache inputs make 2 MB of input copies. Inputs: the new token's hidden
state (4 x 1 x 512), the position (int64, shape (1,): 100 in the first input set, 180 in the
second), the K cache and the V cache (4 x 8 x 256 x 64 each). Returns the layer's output (4 x
1 x 512, bf16).

    traceinspect profile kv_append_decode_4in.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class DecodeLayer(nn.Module):
    def __init__(self, d: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.scale = 1 / math.sqrt(self.head_dim)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d))

    def forward(
        self, x: Tensor, pos: Tensor, k_cache: Tensor, v_cache: Tensor, positions: Tensor
    ) -> Tensor:
        b, t, d = x.shape  # t == 1
        qkv = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (b, heads, 1, head_dim)
        k_cache.index_copy_(2, pos, k)
        v_cache.index_copy_(2, pos, v)
        scores = torch.matmul(q, k_cache.transpose(-1, -2)) * self.scale  # (b, heads, 1, L)
        scores = scores.masked_fill(positions > pos, float("-inf"))
        attended = torch.matmul(torch.softmax(scores, dim=-1), v_cache)  # (b, heads, 1, hd)
        x = x + self.out(attended.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, heads, ffn, length = (2, 32, 4, 64, 16) if smoke else (4, 512, 8, 2048, 256)
    dtype = low_precision(device)
    layer = DecodeLayer(d, heads, ffn).to(device=device, dtype=dtype).eval()
    positions = torch.arange(length, device=device)

    @torch.no_grad()
    def step(x: Tensor, pos: Tensor, k_cache: Tensor, v_cache: Tensor) -> Tensor:
        return layer(x, pos, k_cache, v_cache, positions)

    def make(position: int) -> tuple[Tensor, ...]:
        cache_shape = (batch, heads, length, d // heads)
        return (
            torch.randn(batch, 1, d, device=device, dtype=dtype),
            torch.tensor([position], device=device, dtype=torch.int64),
            torch.randn(cache_shape, device=device, dtype=dtype),
            torch.randn(cache_shape, device=device, dtype=dtype),
        )

    inputs = [make(length * 100 // 256), make(length * 180 // 256)]
    description = (
        f"decoder layer decode step d{d} {heads} heads, KV cache {length} (index_copy_ append, "
        f"arange mask), MLP {d}-{ffn}-{d}, 4 inputs, batch {batch}"
    )
    return Built(step, inputs, description, [layer, positions])


if __name__ == "__main__":
    main(build, __doc__)
