"""One Muon optimizer step (Jordan et al., 2024) over 12 weight matrices (twenty-eighth
hold-out): each gradient, bf16 on a GPU, is folded into its momentum (``lerp_``, beta 0.95,
Nesterov), normalized by its Frobenius norm and orthogonalized by five Newton-Schulz
iterations of the quintic (a, b, c) = (3.4445, -4.7750, 2.0315): per iteration ``A = X Xᵀ``,
``B = b A + c A A`` (``addmm``) and ``X = a X + B X`` (``addmm``), transposed first where a
matrix is tall. The update is scaled by sqrt(max(1, rows / cols)) and applied with lr 0.02:
about 25 kernels per weight, 300 in all, most of them GEMMs of 256-1,024 on a side, one
stream. The step restores weights and momenta from a snapshot first (two foreach copies),
so a step depends only on its gradients, which are passed as 12 inputs.

    traceinspect profile muon_newton_schulz_12params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor

A, B, C = 3.4445, -4.7750, 2.0315
LR, BETA, STEPS = 0.02, 0.95, 5


def newton_schulz(g: Tensor) -> Tensor:
    tall = g.shape[0] > g.shape[1]
    x = g.T if tall else g
    x = x / (x.norm() + 1e-7)
    for _ in range(STEPS):
        a = x @ x.T
        b = torch.addmm(a, a, a, beta=B, alpha=C)
        x = torch.addmm(x, b, x, beta=A)
    return x.T if tall else x


def build(device: torch.device, smoke: bool) -> Built:
    dims = (8, 16, 24) if smoke else (256, 512, 1024)
    dtype = low_precision(device)
    shapes = [(dims[i % 3], dims[(i // 3) % 3]) for i in range(12)]
    weights = [torch.randn(s, device=device, dtype=dtype) * s[1] ** -0.5 for s in shapes]
    momenta = [torch.zeros_like(w) for w in weights]
    start = [w.clone() for w in weights]
    momenta0 = [torch.randn_like(w) * 1e-3 for w in weights]

    @torch.no_grad()
    def step(*grads: Tensor) -> Tensor:
        torch._foreach_copy_(weights, start)
        torch._foreach_copy_(momenta, momenta0)
        for w, m, g in zip(weights, momenta, grads, strict=True):
            m.lerp_(g, 1 - BETA)
            update = newton_schulz(g.lerp(m, BETA))
            w.add_(update, alpha=-LR * max(1.0, w.shape[0] / w.shape[1]) ** 0.5)
        return torch.stack([w.float().norm() for w in weights])

    inputs = [tuple(torch.randn_like(w) for w in weights) for _ in range(2)]
    return Built(
        step, inputs, f"Muon step, 12 weights {dims[0]}-{dims[-1]}, 5 Newton-Schulz", [weights]
    )


if __name__ == "__main__":
    main(build, __doc__)
