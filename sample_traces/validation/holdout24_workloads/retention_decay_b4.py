"""A RetNet-style retention layer in its parallel form (Sun et al., 2023) (twenty-fourth
hold-out): 4 sequences of 512 tokens, d 512, 8 heads of 64, fp32 — Q, K and V projections,
the per-head scores Q K^T (scaled by 1/8) multiplied by a decay mask
D[h, n, m] = gamma_h^(n - m) for n >= m and 0 above the diagonal (gamma_h = 1 - 2^(-5 - h),
an 8 x 512 x 512 buffer made at build), the product with V, a group norm over the heads and
the output projection 512 -> 512. Four GEMMs of 2,048 rows, two batched matmuls over 32
heads and elementwise kernels over 8.4 M scores; one stream.

    traceinspect profile retention_decay_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def decay_mask(heads: int, n: int) -> Tensor:
    gamma = 1 - 2.0 ** (-5 - torch.arange(heads, dtype=torch.float32))
    pos = torch.arange(n, dtype=torch.float32)
    diff = pos[:, None] - pos[None, :]
    mask = torch.exp(diff.clamp(min=0) * torch.log(gamma)[:, None, None])
    return mask * (diff >= 0)


class Retention(nn.Module):
    def __init__(self, d: int, heads: int, n: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.out = (nn.Linear(d, d) for _ in range(4))
        self.norm = nn.GroupNorm(heads, d)
        self.register_buffer("decay", decay_mask(heads, n))

    def forward(self, x: Tensor) -> Tensor:
        b, n, d = x.shape
        h, dh = self.heads, d // self.heads

        def split(t: Tensor) -> Tensor:
            return t.view(b, n, h, dh).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) * dh**-0.5 * self.decay
        y = torch.matmul(scores, v).transpose(1, 2).reshape(b * n, d)
        return self.out(self.norm(y).view(b, n, d))


def build(device: torch.device, smoke: bool) -> Built:
    batch, n, d, heads = (2, 8, 16, 2) if smoke else (4, 512, 512, 8)
    model = Retention(d, heads, n).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, n, d, device=device),) for _ in range(2)]
    return Built(step, inputs, f"retention layer d{d} {heads} heads, b{batch}x{n}", [model])


if __name__ == "__main__":
    main(build, __doc__)
