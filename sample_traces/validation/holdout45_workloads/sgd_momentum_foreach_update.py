"""One SGD step with Nesterov momentum and weight decay over 96 fp32 parameter tensors,
written with ``torch._foreach_*`` ops (forty-fifth hold-out: a memory-bound multi-tensor
update, the family whose replay ran slower than predicted): 48 weights cycling through the
shapes 384 x 384 to 1536 x 1536 (out and in features each 384, 768, 1152 or 1536) and their
48 biases. The update, lr 0.01, momentum 0.9, weight decay 5e-4: g <- g + wd p
(``_foreach_add``), b <- momentum b + g (``_foreach_mul_`` and ``_foreach_add_``),
g <- g + momentum b (Nesterov, ``_foreach_add``), p <- p - lr g (``_foreach_add_``).

Every step first restores the parameters and momentum buffers from a snapshot taken at build
(two foreach copies), so a step depends only on its inputs and replayed results compare with
eager ones. Inputs: the 96 gradients, one per parameter, as separate arguments. Returns the
L2 norms of the updated parameters and momenta (``_foreach_norm``, stacked: 192 values).

    traceinspect profile sgd_momentum_foreach_update.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LAYERS, LR, MOMENTUM, WEIGHT_DECAY = 48, 0.01, 0.9, 5e-4


def shapes(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A weight (out, in) and its bias (out,) per layer, cycling through every (out, in)."""
    out: list[tuple[int, ...]] = []
    for i in range(LAYERS):
        rows, cols = dims[i % len(dims)], dims[(i // len(dims)) % len(dims)]
        out += [(rows, cols), (rows,)]
    return out


def build(device: torch.device, smoke: bool) -> Built:
    dims = (8, 16, 24, 32) if smoke else (384, 768, 1152, 1536)
    params = [torch.randn(s, device=device) * 0.02 for s in shapes(dims)]
    buffers = [torch.zeros_like(p) for p in params]
    start = [p.clone() for p in params]
    buffers0 = [torch.randn_like(p) * 1e-3 for p in params]

    def step(*grads: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(buffers, buffers0)
            g = torch._foreach_add(list(grads), params, alpha=WEIGHT_DECAY)
            torch._foreach_mul_(buffers, MOMENTUM)
            torch._foreach_add_(buffers, g)
            g = torch._foreach_add(g, buffers, alpha=MOMENTUM)
            torch._foreach_add_(params, g, alpha=-LR)
            return torch.stack(torch._foreach_norm(params) + torch._foreach_norm(buffers))

    inputs = [tuple(torch.randn_like(p) * 1e-3 for p in params) for _ in range(2)]
    total = sum(p.numel() for p in params)
    return Built(
        step,
        inputs,
        f"SGD Nesterov step (foreach) over {len(params)} tensors ({total} values), "
        f"{len(params)} gradient inputs",
        [params, buffers, start, buffers0],
    )


if __name__ == "__main__":
    main(build, __doc__)
