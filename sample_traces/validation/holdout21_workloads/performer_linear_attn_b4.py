"""Performer (FAVOR+) linear attention (Choromanski et al., 2021), two layers, 4 sequences of
1024 tokens, d 512, 8 heads of 64, 128 random features, fp32 (twenty-first hold-out),
inference: per layer LayerNorm, the Q/K/V projections, the positive random features of the
queries and keys (a projection onto a fixed Gaussian matrix, minus half the squared norm,
``exp``, scaled), the keys' features summed over the sequence and multiplied with the
values (``einsum``: 64 x 128 x 64 per head), the queries' features against that and the
normalizer, the output projection and the residual add; then an FFN 512->2048->512 with GELU.
About 50 kernels, none quadratic in the sequence: batched small GEMMs and elementwise kernels
over 2M values. Input: 4 x 1024 x 512. Returns 4 x 1024 x 512.

    traceinspect profile performer_linear_attn_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

FEATURES, LAYERS = 128, 2


class FavorLayer(nn.Module):
    def __init__(self, d: int, heads: int, features: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("omega", torch.randn(d // heads, features))

    def features(self, x: Tensor) -> Tensor:
        dh = x.shape[-1]
        x = x * dh**-0.25
        proj = x @ self.omega
        return torch.exp(proj - x.pow(2).sum(-1, keepdim=True) / 2) / self.omega.shape[1] ** 0.5

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        qf, kf = self.features(q), self.features(k)  # b h n m
        kv = torch.einsum("bhnm,bhnd->bhmd", kf, v)
        normalizer = qf @ kf.sum(2).unsqueeze(-1)  # b h n 1
        att = (qf @ kv) / normalizer.clamp_min(1e-6)
        x = x + self.out(att.transpose(1, 2).reshape(b, n, d))
        return x + self.ff2(F.gelu(self.ff1(self.norm2(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads, features = (2, 32, 32, 2, 16) if smoke else (4, 1024, 512, 8, FEATURES)
    model = nn.Sequential(*[FavorLayer(d, heads, features) for _ in range(LAYERS)])
    model = model.to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, n, d, device=device),) for _ in range(2)]
    description = f"{LAYERS} Performer layers d{d} {heads} heads {features} features, b{batch}x{n}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
