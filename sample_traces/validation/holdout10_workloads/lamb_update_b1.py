"""LAMB optimizer update written out tensor by tensor (no torch.optim, no foreach) over 60
fp32 parameter tensors of a 10-layer transformer of d 512 (tenth hold-out): per layer a qkv
weight 1536 x 512 and bias 1536, an output weight 512 x 512, MLP weights 2048 x 512 and
512 x 2048 and a norm gain 512; 31,477,760 values. The gradients are set once at build
(fixed random tensors) and the moments (m, v) and the step count (a 0-d device tensor)
are made at build, so the step allocates no state. Per step: the count advances on the
device and the bias corrections 1 - b1^t and 1 - b2^t are computed from it as tensors (no
readback, so a replayed graph sees the count advance). Then per tensor, in order: m
(``lerp_``) and v (``mul_``, ``addcmul_``) updated in place with b1 0.9 and b2 0.999; the
Adam direction (m / bc1) / (sqrt(v / bc2) + 1e-6), plus weight decay 0.01 x p for the 2-D
weights; the norms of p and of the direction (``torch.linalg.vector_norm``); the trust
ratio ||p|| / ||u||, or 1 where ||p|| is 0 (``torch.where``: the zero biases at the start);
and p -= 1e-3 x trust x u (``addcmul_`` with the 0-d trust). About 15 small kernels a
tensor, some 900 in all: launch-bound. The parameters change every step; the step takes a
1-element marker tensor (the harness needs an input) and returns it unchanged.

    traceinspect profile lamb_update_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LR, BETA1, BETA2, EPS, WEIGHT_DECAY = 1e-3, 0.9, 0.999, 1e-6, 0.01


def build(device: torch.device, smoke: bool) -> Built:
    layers, d = (10, 8) if smoke else (10, 512)
    shapes = [(3 * d, d), (3 * d,), (d, d), (4 * d, d), (d, 4 * d), (d,)] * layers
    params = []
    for i, shape in enumerate(shapes):
        if len(shape) == 2:
            params.append(torch.randn(shape, device=device) * 0.02)
        else:  # the qkv biases start at 0, the norm gains at 1
            params.append(torch.full(shape, float(i % 6 == 5), device=device))
    grads = [torch.randn_like(p) * 1e-3 for p in params]
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_avg_sq = [torch.zeros_like(p) for p in params]
    count = torch.zeros((), device=device)
    one = torch.ones((), device=device)

    @torch.no_grad()
    def step(marker: Tensor) -> Tensor:
        count.add_(1)
        bc1 = 1 - torch.pow(BETA1, count)
        bc2 = 1 - torch.pow(BETA2, count)
        for p, g, m, v in zip(params, grads, exp_avg, exp_avg_sq, strict=True):
            m.lerp_(g, 1 - BETA1)
            v.mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
            u = (m / bc1) / (v / bc2).sqrt_().add_(EPS)
            if p.dim() > 1:
                u.add_(p, alpha=WEIGHT_DECAY)
            w_norm = torch.linalg.vector_norm(p)
            u_norm = torch.linalg.vector_norm(u)
            trust = torch.where(w_norm > 0, w_norm / u_norm, one)
            p.addcmul_(u, trust, value=-LR)
        return marker

    inputs = [(torch.full((1,), float(i), device=device),) for i in range(2)]
    total = sum(p.numel() for p in params)
    description = f"LAMB written out over {len(params)} tensors ({total} values)"
    return Built(step, inputs, description, [*params, *grads, *exp_avg, *exp_avg_sq, count])


if __name__ == "__main__":
    main(build, __doc__)
