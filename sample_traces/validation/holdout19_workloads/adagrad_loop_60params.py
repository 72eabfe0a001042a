"""Adagrad written as a Python loop over 60 small parameter tensors (no foreach), fp32
(nineteenth hold-out): per tensor, weight decay into the gradient (``add``), the squared
gradient accumulated (``addcmul_``), the scaled gradient (``g * -lr``), the accumulator's
square root plus eps (``sqrt``, ``add_``) and the update (``addcdiv_``): six tiny kernels
per tensor, 360 in all, none over 64K values, with
the step's two foreach restores (parameters and accumulators from a snapshot taken at
build, so every step computes the same update and replays compare with eager) and a
checksum: launch-bound, a long chain of tiny kernels on one stream. The gradients are fixed
tensors made at build. Input: a learning-rate tensor (1 element, on the device: the update
reads it, so a schedule can change it without recapture). Returns the sums of six of the
updated parameters (every tenth), stacked.

    traceinspect profile adagrad_loop_60params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

PARAMS, WEIGHT_DECAY, EPS, CHECKED_EVERY = 60, 1e-4, 1e-10, 10
SHAPES: list[tuple[int, ...]] = [
    (256, 256), (256,), (64, 3, 3, 3), (64,), (512, 128), (128,), (1000,), (32, 32, 3, 3),
]  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    shapes = [SHAPES[i % len(SHAPES)] for i in range(PARAMS)]
    if smoke:
        shapes = [tuple(max(1, n // 8) for n in s) for s in shapes]
    params = [nn.Parameter(0.02 * torch.randn(s, device=device)) for s in shapes]
    grads = [1e-2 * torch.randn_like(p) for p in params]
    sums = [torch.full_like(p, 0.1) for p in params]
    start = [p.detach().clone() for p in params]
    sums0 = [s.clone() for s in sums]
    checked = params[::CHECKED_EVERY]

    @torch.no_grad()
    def step(lr: Tensor) -> Tensor:
        torch._foreach_copy_(params, start)
        torch._foreach_copy_(sums, sums0)
        for p, g, acc in zip(params, grads, sums, strict=True):
            g = g.add(p, alpha=WEIGHT_DECAY)
            acc.addcmul_(g, g)
            p.addcdiv_(g * -lr, acc.sqrt().add_(EPS))
        return torch.stack([p.sum() for p in checked])

    inputs = [(torch.full((1,), lr, device=device),) for lr in (0.01, 0.005)]
    total = sum(p.numel() for p in params)
    description = f"Adagrad as a Python loop over {PARAMS} tensors ({total} values), lr tensor"
    return Built(step, inputs, description, [params, grads, sums, start, sums0])


if __name__ == "__main__":
    main(build, __doc__)
