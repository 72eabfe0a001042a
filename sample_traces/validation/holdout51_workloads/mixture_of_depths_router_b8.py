"""A Mixture-of-Depths transformer (Raposo et al., 2024) over 8 sequences of 512 tokens, d 768,
12 heads of 64, its routed layers taking 12.5 % of the tokens (fifty-first hold-out: conditional
compute with a fixed capacity, so the shapes stay static: dense layers of 4,096 token rows
alternating with routed ones of 512 rows behind a top-k, a sort, gathers and a scatter-add), as
the paper lays it out, every other block routed. 6 pre-norm blocks, each LayerNorm + attention
(a Linear 768->2304 to q, k and v, ``F.scaled_dot_product_attention``, a Linear 768->768) and
LayerNorm + MLP (Linear 768->3072, GELU, Linear 3072->768), each sub-block's output added to its
input; the block's update f(x) is the sum of the two. Blocks 0, 2 and 4 are dense: x + f(x),
causal attention (``is_causal=True``) over all 512 tokens. Blocks 1, 3 and 5 are routed: a
``Linear(768, 1, bias=False)`` router scores every token (r, (8, 512)); ``torch.topk`` keeps the
64 best (capacity 12.5 % of 512, fixed), their positions sorted (``torch.sort``) so the sequence
order is kept; ``torch.gather`` of their hidden states (8, 64, 768) and of their scores; the
block over them with a causal mask built from their positions (a selected token attends to the
selected tokens at or before its position: ``pos[:, None, :] <= pos[:, :, None]``, (8, 1, 64,
64) bool, as ``attn_mask``); the update f times the router score r written back into the full
sequence by ``scatter_add_`` along the positions; the 448 other tokens pass through unchanged.
A final LayerNorm. bf16 on a GPU, no gradients, eval mode, one stream. Input: the hidden states
(8, 512, 768). Returns the hidden states (8, 512, 768).

    traceinspect profile mixture_of_depths_router_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, CAPACITY = 6, 0.125


class Block(nn.Module):
    """A pre-norm transformer block; ``forward`` returns its update f(x), not x + f(x)."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        b, s, d = x.shape
        qkv = self.qkv(self.norm1(x)).view(b, s, 3, self.heads, d // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # (b, heads, s, head dim) each
        if mask is None:
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        a = self.proj(att.transpose(1, 2).reshape(b, s, d))
        return a + self.down(F.gelu(self.up(self.norm2(x + a))))


class MixtureOfDepths(nn.Module):
    def __init__(self, d: int, heads: int, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(LAYERS))
        self.routers = nn.ModuleList(nn.Linear(d, 1, bias=False) for _ in range(LAYERS // 2))
        self.norm = nn.LayerNorm(d)

    def routed(self, i: int, x: Tensor) -> Tensor:
        d = x.shape[-1]
        scores = self.routers[i // 2](x).squeeze(-1)  # (b, s)
        _, top = torch.topk(scores, self.capacity, dim=1, sorted=False)
        pos, _ = torch.sort(top, dim=1)  # (b, capacity), in sequence order
        weight = torch.gather(scores, 1, pos)
        index = pos[..., None].expand(-1, -1, d)
        picked = torch.gather(x, 1, index)  # (b, capacity, d)
        mask = pos[:, None, :] <= pos[:, :, None]  # causal over the picked positions
        update = self.blocks[i](picked, mask[:, None])
        return x.scatter_add_(1, index, update * weight[..., None])

    def forward(self, x: Tensor) -> Tensor:
        for i, block in enumerate(self.blocks):
            x = self.routed(i, x) if i % 2 else x + block(x)  # x is fresh before a routed block
        return self.norm(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, heads = (2, 32, 32, 4) if smoke else (8, 512, 768, 12)
    capacity = int(seq * CAPACITY)
    dtype = low_precision(device)
    model = MixtureOfDepths(d, heads, capacity).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Mixture-of-Depths: {LAYERS} layers d{d} ({heads} heads), every other routed "
        f"(top-{capacity} of {seq}), batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
