"""Hand-written RMSprop update over 80 parameter tensors (20 of 1024x1024, 30 of 1024, 30 of
4096), one Python loop iteration and a short kernel chain per tensor (no foreach), the
gradients given as inputs, fp32 (fourth hold-out).

    traceinspect profile rmsprop_loop.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LR, ALPHA, EPS = 1e-5, 0.99, 1e-8


def build(device: torch.device, smoke: bool) -> Built:
    n, m = (16, 32) if smoke else (1024, 4096)
    shapes = [(n, n)] * 20 + [(n,)] * 30 + [(m,)] * 30
    params = [torch.randn(s, device=device) * 0.02 for s in shapes]
    squares = [torch.zeros(s, device=device) for s in shapes]

    @torch.no_grad()
    def step(*grads: Tensor) -> None:
        for p, sq, g in zip(params, squares, grads, strict=True):
            sq.mul_(ALPHA).addcmul_(g, g, value=1 - ALPHA)
            p.addcdiv_(g, sq.sqrt().add_(EPS), value=-LR)

    inputs = [tuple(torch.randn(s, device=device) * 1e-3 for s in shapes) for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = f"RMSprop loop over {len(params)} tensors ({total} values)"
    return Built(step, inputs, description, params + squares)


if __name__ == "__main__":
    main(build, __doc__)
