"""One decode step over a paged KV cache, as vLLM-style servers lay it out (twenty-eighth
hold-out): 8 sequences of 1,000-1,020 cached tokens, 4 layers of 1,024 channels in 8 heads
of 128, bf16 on a GPU. The cache of each layer is a pool of 600 pages of 16 tokens; a block
table (8 x 64 page ids, an input) says which pages hold each sequence. Per layer: RMSNorm,
a fused QKV projection of the new token, its key and value written into their page slots
(``index_copy_`` into the flattened pool at the input slot ids), the sequence's pages
gathered through the block table (``pool[table]``, 17 MB each for keys and values), the
positions past each sequence's length masked (from the input lengths), scaled-dot-product
attention of one query over 1,024 slots, the output projection and a SiLU MLP
1,024 -> 2,816 -> 1,024. One stream; gathers and GEMV-shaped GEMMs.

    traceinspect profile paged_kv_decode_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS = 4


def rms_norm(x: Tensor, weight: Tensor) -> Tensor:
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * weight


class Layer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, d * 11 // 4, bias=False)
        self.down = nn.Linear(d * 11 // 4, d, bias=False)


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, heads, page, pages, per_seq = (
        (2, 32, 2, 4, 12, 4) if smoke else (8, 1024, 8, 16, 600, 64)
    )
    spare = (1, 4) if smoke else (4, 24)  # free slots left in each sequence's last pages
    hd = d // heads
    dtype = low_precision(device)
    layers = nn.ModuleList([Layer(d) for _ in range(LAYERS)]).to(device, dtype).eval()
    k_pool = [torch.randn(pages * page, heads, hd, device=device, dtype=dtype) for _ in layers]
    v_pool = [torch.randn(pages * page, heads, hd, device=device, dtype=dtype) for _ in layers]
    slots = per_seq * page

    @torch.no_grad()
    def step(x: Tensor, table: Tensor, lengths: Tensor, slot: Tensor) -> Tensor:
        # lengths include the new token; slot is where its key and value go
        valid = torch.arange(slots, device=x.device)[None, :] < lengths[:, None]
        mask = valid[:, None, None, :]  # b x 1 x 1 x slots
        for layer, kp, vp in zip(layers, k_pool, v_pool, strict=True):
            q, k, v = layer.qkv(rms_norm(x, layer.norm1)).view(batch, 3, heads, hd).unbind(1)
            kp.index_copy_(0, slot, k)
            vp.index_copy_(0, slot, v)
            keys = kp.view(pages, page, heads, hd)[table].view(batch, slots, heads, hd)
            values = vp.view(pages, page, heads, hd)[table].view(batch, slots, heads, hd)
            o = F.scaled_dot_product_attention(
                q[:, :, None], keys.transpose(1, 2), values.transpose(1, 2), attn_mask=mask
            )
            x = x + layer.out(o.reshape(batch, d))
            x = x + layer.down(F.silu(layer.up(rms_norm(x, layer.norm2))))
        return x

    def request(seed: int) -> tuple[Tensor, ...]:
        g = torch.Generator().manual_seed(seed)
        table = torch.randperm(pages, generator=g)[: batch * per_seq].view(batch, per_seq)
        lengths = slots - torch.randint(*spare, (batch,), generator=g)
        last = lengths - 1
        slot = table.gather(1, (last // page)[:, None]).squeeze(1) * page + last % page
        return (
            torch.randn(batch, d, dtype=dtype).to(device),
            table.to(device),
            lengths.to(device),
            slot.to(device),
        )

    inputs = [request(i) for i in range(2)]
    return Built(
        step,
        inputs,
        f"paged KV decode, {LAYERS} layers d{d}, {slots} slots, b{batch}",
        [layers, k_pool, v_pool],
    )


if __name__ == "__main__":
    main(build, __doc__)
