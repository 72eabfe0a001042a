"""Causal (streaming) encoder over 2 sequences of 1024 frames of 80 features, as for audio
or sensor streams, d 384, bf16 (tenth hold-out): an input Linear 80->384 plus a learned
position embedding (1024 x 384, added as a parameter slice), then 4 post-LayerNorm layers
(BERT-style: the norm after each residual add), each with separate q, k and v Linears
384->384, 6 heads of 64, ``F.scaled_dot_product_attention(is_causal=True)`` so a frame sees
only the frames before it, an output Linear, residual and LayerNorm; a GELU MLP
384->1536->384, residual and LayerNorm. Returns 2 x 1024 x 384.

    traceinspect profile causal_sdpa_encoder_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class PostNormCausalLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def split(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        return x.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x: Tensor) -> Tensor:
        b, s, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = self.norm1(x + self.proj(att.transpose(1, 2).reshape(b, s, d)))
        return self.norm2(x + self.down(F.gelu(self.up(x))))


class CausalEncoder(nn.Module):
    def __init__(self, features: int, d: int, heads: int, layers: int, frames: int) -> None:
        super().__init__()
        self.inp = nn.Linear(features, d)
        self.pos = nn.Parameter(torch.randn(frames, d) * 0.02)
        self.layers = nn.ModuleList(PostNormCausalLayer(d, heads) for _ in range(layers))

    def forward(self, x: Tensor) -> Tensor:
        x = self.inp(x) + self.pos[: x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return x


def build(device: torch.device, smoke: bool) -> Built:
    features, d, heads, layers, frames, batch = (
        (8, 32, 4, 4, 16, 2) if smoke else (80, 384, 6, 4, 1024, 2)
    )
    dtype = low_precision(device)
    model = CausalEncoder(features, d, heads, layers, frames).to(device=device, dtype=dtype)
    model = model.eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, frames, features, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"causal post-LN encoder, {layers} layers x d{d} ({heads} heads), batch {batch} x {frames}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
