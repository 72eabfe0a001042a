"""An SGD-with-momentum update written by hand as a Python loop over 40 small fp32 parameters
(eighteenth hold-out), no foreach: eight shapes, (128,), 64 x 64, 256 x 32, (32,), 128 x
128, 16 x 8 x 3 x 3, (512,) and 64 x 128, five parameters of each, 193K values (0.8 MB) in
all, lr 0.01, momentum 0.9 (no dampening, no weight decay, no Nesterov). The gradients are
set at build and the momentum buffers start as the build-time gradients (as
``torch.optim.SGD``'s first step leaves them).

The step mutates the parameters, the gradients and the buffers in place, so every step first
restores the parameters and the buffers from a snapshot taken at build (two foreach copies,
as the seventeenth hold-out's AdamW step restores its state), then sets each gradient to its
build-time value times its entry of the input's scale vector (a 0-d factor broadcast over
the gradient, ``torch.mul(..., out=grad)``: 40 small kernels), then per parameter, one after
the other, ``buf.mul_(momentum).add_(grad)`` and ``p.add_(buf, alpha=-lr)`` (three small
kernels each: 120): a step then depends only on its input, and replayed results compare
with eager ones. Some 167 kernels in all with the restores and the checksum, none over more
than 16K values: launch-bound, a long chain of tiny kernels. Input: the grad-scale vector
(40, fp32, one factor per parameter, about 1). Returns a checksum on the device: the sums of
four of the updated parameters (every tenth: four ``sum`` kernels and a ``torch.stack``: one
tensor of 4).

    traceinspect profile sgd_momentum_loop_40params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

PARAMS, LR, MOMENTUM, CHECKED_EVERY = 40, 0.01, 0.9, 10
SHAPES: list[tuple[int, ...]] = [
    (128,), (64, 64), (256, 32), (32,), (128, 128), (16, 8, 3, 3), (512,), (64, 128),
]  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    shapes = [SHAPES[i % len(SHAPES)] for i in range(PARAMS)]
    if smoke:
        shapes = [tuple(max(1, n // 8) for n in s) for s in shapes]
    params = [nn.Parameter(0.02 * torch.randn(s, device=device)) for s in shapes]
    base_grads = [1e-2 * torch.randn_like(p) for p in params]
    for p, g in zip(params, base_grads, strict=True):
        p.grad = g.clone()
    grads = [p.grad for p in params]
    bufs = [g.clone() for g in base_grads]  # as SGD's first step leaves its momentum buffers
    start = [p.detach().clone() for p in params]
    bufs0 = [b.clone() for b in bufs]
    checked = params[::CHECKED_EVERY]

    @torch.no_grad()
    def step(scale: Tensor) -> Tensor:
        torch._foreach_copy_(params, start)
        torch._foreach_copy_(bufs, bufs0)
        for g, g0, s in zip(grads, base_grads, scale.unbind(0), strict=True):
            torch.mul(g0, s, out=g)
        for p, g, buf in zip(params, grads, bufs, strict=True):
            buf.mul_(MOMENTUM).add_(g)
            p.add_(buf, alpha=-LR)
        return torch.stack([p.sum() for p in checked])

    inputs = [(1 + 0.1 * torch.randn(PARAMS, device=device),) for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"SGD momentum {MOMENTUM} as a Python loop (no foreach) over {PARAMS} small tensors "
        f"({total} values, {len(SHAPES)} shapes), per-parameter grad scale from a ({PARAMS},) "
        f"input"
    )
    return Built(step, inputs, description, [params, base_grads, bufs, start, bufs0])


if __name__ == "__main__":
    main(build, __doc__)
