"""Perceiver encoder over 4 x 1024 inputs of d 256, bf16 (seventh hold-out): 64 learned
latents of d 512 (expanded over the batch) cross-attend to the inputs (pre-LayerNorm on both
sides; q Linear 512->512 from the latents, one fused kv Linear 256->1024 projecting the
inputs to d 512; 8 heads, SDPA; output Linear 512->512; residual), then a GELU MLP
512->2048->512 with pre-LayerNorm and a residual, then 2 latent self-attention blocks
(``_models.EncoderLayer``: pre-LayerNorm, fused qkv, 8 heads, SDPA, GELU MLP 512->2048->512).
Returns the latents, 4 x 64 x 512. No decoder queries.

    traceinspect profile perceiver_io_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import encoder
from torch import Tensor, nn


class CrossAttention(nn.Module):
    def __init__(self, d: int, d_in: int, heads: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.heads = heads
        self.norm_q = nn.LayerNorm(d, dtype=dtype)
        self.norm_kv = nn.LayerNorm(d_in, dtype=dtype)
        self.q = nn.Linear(d, d, dtype=dtype)
        self.kv = nn.Linear(d_in, 2 * d, dtype=dtype)
        self.out = nn.Linear(d, d, dtype=dtype)
        self.norm_mlp = nn.LayerNorm(d, dtype=dtype)
        self.up = nn.Linear(d, 4 * d, dtype=dtype)
        self.down = nn.Linear(4 * d, d, dtype=dtype)

    def forward(self, latents: Tensor, inputs: Tensor) -> Tensor:
        b, n, d = latents.shape
        s = inputs.shape[1]
        q = self.q(self.norm_q(latents)).view(b, n, self.heads, -1).transpose(1, 2)
        kv = self.kv(self.norm_kv(inputs)).view(b, s, 2, self.heads, -1)
        k, v = kv.permute(2, 0, 3, 1, 4).unbind(0)
        att = F.scaled_dot_product_attention(q, k, v)
        x = latents + self.out(att.transpose(1, 2).reshape(b, n, d))
        return x + self.down(F.gelu(self.up(self.norm_mlp(x))))


def build(device: torch.device, smoke: bool) -> Built:
    latents, d, d_in, tokens, heads, layers, batch = (
        (8, 32, 16, 64, 2, 2, 2) if smoke else (64, 512, 256, 1024, 8, 2, 4)
    )
    dtype = low_precision(device)
    cross = CrossAttention(d, d_in, heads, dtype)
    blocks = encoder(layers, d, heads, dtype)
    model = nn.ModuleList([cross, blocks]).to(device).eval()
    latent_array = torch.randn(latents, d, device=device, dtype=dtype) * 0.02  # learned

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        z = cross(latent_array.expand(x.shape[0], -1, -1), x)
        return blocks(z)

    inputs = [(torch.randn(batch, tokens, d_in, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Perceiver, {latents} latents x d{d} over {tokens} inputs x d{d_in}, "
        f"{layers} latent blocks, batch {batch}"
    )
    return Built(step, inputs, description, [model, latent_array])


if __name__ == "__main__":
    main(build, __doc__)
