"""Block-sparse attention given as an explicit boolean mask: 2 sequences of 1024 tokens of d
512, bf16 (eleventh hold-out), through 4 pre-LayerNorm encoder layers (8 heads of 64). The
mask (1024 x 1024, made once at build) is BigBird-like over 16 x 16 blocks of 64 tokens: a
block attends to its own block and its two neighbours (a sliding window), the first block
is global (it attends to every block and every block attends to it), and each block row
also keeps 2 random blocks (fixed at build from a seeded generator); about 37% of the
entries are True. It is passed to ``F.scaled_dot_product_attention(attn_mask=mask)``, whose
boolean-mask path reads the full mask (no block skipping). Each layer: LayerNorm, fused qkv
Linear 512->1536, the masked attention, output Linear, residual; LayerNorm, GELU MLP
512->2048->512, residual. Returns 2 x 1024 x 512.

    traceinspect profile sparse_attention_mask_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


def block_sparse_mask(seq: int, block: int, random_blocks: int, seed: int) -> Tensor:
    n = seq // block
    i = torch.arange(n)
    keep = (i[:, None] - i[None, :]).abs() <= 1  # sliding window of blocks
    keep[0, :] = True  # the global block attends everywhere ...
    keep[:, 0] = True  # ... and is attended to by every block
    gen = torch.Generator().manual_seed(seed)
    for row in range(n):
        keep[row, torch.randperm(n, generator=gen)[:random_blocks]] = True
    return keep.repeat_interleave(block, 0).repeat_interleave(block, 1)  # (seq, seq)


class MaskedLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, heads, S, dh)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(att.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


def build(device: torch.device, smoke: bool) -> Built:
    d, heads, layers, seq, block, batch = (
        (32, 4, 4, 64, 8, 2) if smoke else (512, 8, 4, 1024, 64, 2)
    )
    dtype = low_precision(device)
    model = nn.ModuleList(MaskedLayer(d, heads) for _ in range(layers))
    model = model.to(device=device, dtype=dtype).eval()
    mask = block_sparse_mask(seq, block, 2, seed=11).to(device)
    density = mask.float().mean().item()  # at build, not in the step

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for layer in model:
            x = layer(x, mask)
        return x

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"block-sparse masked attention ({block}-token blocks, {density:.0%} dense), "
        f"{layers} layers x d{d}, batch {batch} x {seq}"
    )
    return Built(step, inputs, description, [model, mask])


if __name__ == "__main__":
    main(build, __doc__)
