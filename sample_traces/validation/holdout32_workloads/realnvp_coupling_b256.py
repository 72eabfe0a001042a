"""A RealNVP normalizing flow scoring a batch, the log-likelihood of each sample (thirty-second
hold-out): 256 samples of 64 dimensions, fp32, no gradients. Eight affine coupling layers
with alternating fixed binary masks (even then odd coordinates kept, made once in ``build``),
each with a scale and a translation MLP (64 -> 256 -> 256 -> 64, ReLU; the scale through
``tanh``) fed the kept coordinates: z = x * mask + (1 - mask) * (x * exp(s) + t), the
log-determinant accumulated as the sum of s over the changed coordinates. The step ends with
the standard-normal log-density of z plus the log-determinant and returns the per-sample
log-likelihood (256,).

    traceinspect profile realnvp_coupling_b256.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

COUPLINGS = 8


def mlp(dim: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, dim),
    )  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    batch, dim, hidden = (8, 8, 16) if smoke else (256, 64, 256)
    even = (torch.arange(dim, device=device) % 2 == 0).float()
    masks = [even if i % 2 == 0 else 1.0 - even for i in range(COUPLINGS)]
    scales = nn.ModuleList(mlp(dim, hidden) for _ in range(COUPLINGS))
    shifts = nn.ModuleList(mlp(dim, hidden) for _ in range(COUPLINGS))
    model = nn.ModuleList([scales, shifts]).to(device).eval()
    log_norm = 0.5 * dim * math.log(2 * math.pi)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        log_det = x.new_zeros(x.shape[0])
        for mask, scale, shift in zip(masks, scales, shifts, strict=True):
            kept = x * mask
            s = torch.tanh(scale(kept)) * (1.0 - mask)
            t = shift(kept) * (1.0 - mask)
            x = kept + (1.0 - mask) * (x * torch.exp(s) + t)
            log_det = log_det + s.sum(dim=-1)
        return -0.5 * x.pow(2).sum(dim=-1) - log_norm + log_det

    inputs = [(torch.randn(batch, dim, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"RealNVP, {COUPLINGS} affine couplings on {dim} dims, MLPs of {hidden}, b{batch}",
        [model, masks],
    )


if __name__ == "__main__":
    main(build, __doc__)
