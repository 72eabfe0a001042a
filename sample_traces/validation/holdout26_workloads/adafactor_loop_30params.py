"""One Adafactor step (Shazeer & Stern, 2018) over 30 fp32 weight matrices, written as a
per-parameter Python loop (twenty-sixth hold-out): weights from 256 x 256 to 1024 x 768
(rows 256, 512, 768 or 1024; columns 256, 512 or 768), 10.6 M values. Per weight the factored
second moment: the squared gradient (+ eps), its row and column means folded into the row
and column accumulators with ``lerp_`` (decay 0.8), their outer product over the row mean
as the estimate, the update g / sqrt(v), clipped by its RMS (threshold 1, a ``clamp_min``
and a division on the device, no ``.item()``), scaled by the parameter's RMS and lr 1e-2
and subtracted. About 20 kernels per weight, 600 in all, one stream.

The step restores the weights and accumulators from a snapshot first (two foreach copies),
so each step depends only on its inputs (the 30 gradients). Returns the stacked norms of
the updated weights.

    traceinspect profile adafactor_loop_30params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

COUNT, LR, DECAY, EPS1, EPS2, CLIP = 30, 1e-2, 0.8, 1e-30, 1e-3, 1.0


def build(device: torch.device, smoke: bool) -> Built:
    rows, cols = (
        ((8, 16, 24, 32), (8, 16, 24)) if smoke else ((256, 512, 768, 1024), (256, 512, 768))
    )
    shapes = [(rows[i % len(rows)], cols[(i // len(rows)) % len(cols)]) for i in range(COUNT)]
    params = [torch.randn(s, device=device) * s[1] ** -0.5 for s in shapes]
    row_acc = [torch.full((s[0],), 1e-3, device=device) for s in shapes]
    col_acc = [torch.full((s[1],), 1e-3, device=device) for s in shapes]
    start = [p.clone() for p in params]
    row0 = [r.clone() for r in row_acc]
    col0 = [c.clone() for c in col_acc]

    def step(*grads: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(row_acc + col_acc, row0 + col0)
            for p, g, r, c in zip(params, grads, row_acc, col_acc, strict=True):
                sq = g * g + EPS1
                r.lerp_(sq.mean(dim=1), 1 - DECAY)
                c.lerp_(sq.mean(dim=0), 1 - DECAY)
                v = torch.outer(r / r.mean(), c)
                u = g * v.rsqrt()
                u = u / (u.pow(2).mean().sqrt() / CLIP).clamp_min(1.0)
                scale = p.pow(2).mean().sqrt().clamp_min(EPS2) * LR
                p.sub_(u * scale)
            return torch.stack([p.norm() for p in params])

    inputs = [tuple(torch.randn_like(p) * 1e-3 for p in params) for _ in range(2)]
    total = sum(p.numel() for p in params)
    return Built(
        step,
        inputs,
        f"Adafactor loop over {COUNT} weights ({total} values), {COUNT} gradient inputs",
        [params, row_acc, col_acc, start, row0, col0],
    )


if __name__ == "__main__":
    main(build, __doc__)
