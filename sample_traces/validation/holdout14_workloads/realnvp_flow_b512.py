"""A RealNVP normalizing flow (Dinh et al., 2017) taking 512 samples of dimension 64 to the
latent space and scoring them, fp32 (fourteenth hold-out), inference. Eight affine coupling
layers with alternating binary masks (the even dimensions kept in layers 0, 2, 4, 6, the odd
ones in 1, 3, 5, 7; masks made at build). Per layer: the conditioner, an MLP on the masked
input x m, Linear 64->256, ReLU, Linear 256->256, ReLU, Linear 256->128, split into the scale
s and the shift t (64 each); s = tanh(s) (1 - m) and t = t (1 - m), so the kept half passes
through; y = x m + (1 - m) (x exp(s) + t); and the log-determinant accumulates the sum of s
over the 64 dimensions. At the end the log-probability under the flow, log N(z; 0, I) +
log-det = -0.5 sum z^2 - 32 log(2 pi) + log-det. About 20 small kernels per layer, 160 in
all, none bigger than a 512 x 256 x 256 GEMM: launch-bound. Input: the samples (512 x 64).
Returns z (512 x 64) and the log-probability per sample (512).

    traceinspect profile realnvp_flow_b512.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

LAYERS = 8


class AffineCoupling(nn.Module):
    def __init__(self, dim: int, hidden: int, mask: Tensor) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2 * dim),
        )  # fmt: skip
        self.register_buffer("mask", mask)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        m = self.mask
        s, t = self.net(x * m).chunk(2, dim=-1)
        s = torch.tanh(s) * (1 - m)
        t = t * (1 - m)
        y = x * m + (1 - m) * (x * torch.exp(s) + t)
        return y, s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, dim: int, hidden: int, layers: int) -> None:
        super().__init__()
        even = (torch.arange(dim) % 2 == 0).float()
        self.layers = nn.ModuleList(
            AffineCoupling(dim, hidden, even if i % 2 == 0 else 1 - even) for i in range(layers)
        )
        self.log_norm = 0.5 * dim * math.log(2 * math.pi)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        log_det = torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        log_prob = -0.5 * (x * x).sum(-1) - self.log_norm + log_det
        return x, log_prob


def build(device: torch.device, smoke: bool) -> Built:
    batch, dim, hidden = (4, 8, 16) if smoke else (512, 64, 256)
    model = RealNVP(dim, hidden, LAYERS).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        return model(x)

    inputs = [(torch.randn(batch, dim, device=device),) for _ in range(2)]
    description = (
        f"RealNVP, {LAYERS} affine couplings, MLP {dim}-{hidden}-{hidden}-{2 * dim}, "
        f"batch {batch} x {dim}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
