"""One Lion optimizer step (Chen et al., 2023, "Symbolic Discovery of Optimization
Algorithms") over 60 fp32 parameter tensors, written with ``torch._foreach_*`` ops
(sixteenth hold-out): 30 weights of every shape from 256 x 256 to 1024 x 1024 (out and in
features each 256, 512, 768 or 1024) and their 30 biases, 11.3M values (45 MB). The update,
with lr 1e-4, betas (0.9, 0.99) and decoupled weight decay 0.1: c = beta1 m + (1 - beta1) g
(``_foreach_lerp``), c <- sign(c) (``_foreach_sign_``), p <- p (1 - lr wd)
(``_foreach_mul_``), p <- p - lr c (``_foreach_add_``), m <- beta2 m + (1 - beta2) g
(``_foreach_lerp_``): multi-tensor kernels, one launch each over the 60 tensors on an H200
(15 kernels in all with the restore and the checksum), every one of them reading or writing
the 45 MB of a state: memory-bound.

The step mutates the parameters and the momentum in place, so every step first restores both
from a snapshot taken at build (two foreach copies, as the fifteenth hold-out's PPO update
restores its Adam state): a step then depends only on its inputs, and replayed results
compare with eager ones. The momentum starts at small random values (as if some steps were
done). Inputs: the 60 gradients, one tensor per parameter (shaped like it), passed as 60
separate arguments, a step with many inputs, on purpose. Returns a checksum on the device:
the L2 norms of the 60 updated parameters and of the 60 updated momenta (one tensor of 120,
two ``_foreach_norm`` and a ``torch.stack``).

    traceinspect profile lion_foreach_update.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

LAYERS, LR, BETA1, BETA2, WEIGHT_DECAY = 30, 1e-4, 0.9, 0.99, 0.1


def shapes(dims: tuple[int, ...]) -> list[tuple[int, ...]]:
    """A weight (out, in) and its bias (out,) per layer, cycling through every (out, in)."""
    out: list[tuple[int, ...]] = []
    for i in range(LAYERS):
        rows, cols = dims[i % len(dims)], dims[(i // len(dims)) % len(dims)]
        out += [(rows, cols), (rows,)]
    return out


def build(device: torch.device, smoke: bool) -> Built:
    dims = (8, 16, 24, 32) if smoke else (256, 512, 768, 1024)
    params = [
        torch.nn.Parameter(torch.randn(s, device=device) * (s[-1] ** -0.5 if len(s) == 2 else 0.01))
        for s in shapes(dims)
    ]
    momenta = [torch.zeros_like(p) for p in params]
    start = [p.detach().clone() for p in params]
    momenta0 = [torch.randn_like(p) * 1e-3 for p in params]

    def step(*grads: Tensor) -> Tensor:
        with torch.no_grad():  # as torch.optim's step() runs
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(momenta, momenta0)
            update = torch._foreach_lerp(momenta, grads, 1 - BETA1)
            torch._foreach_sign_(update)
            torch._foreach_mul_(params, 1 - LR * WEIGHT_DECAY)
            torch._foreach_add_(params, update, alpha=-LR)
            torch._foreach_lerp_(momenta, grads, 1 - BETA2)
            return torch.stack(torch._foreach_norm(params) + torch._foreach_norm(momenta))

    inputs = [tuple(torch.randn_like(p) * 1e-3 for p in params) for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"Lion step (foreach) over {len(params)} tensors ({total} values, weights "
        f"{dims[0]}x{dims[0]}..{dims[-1]}x{dims[-1]} + biases), {len(params)} gradient inputs"
    )
    return Built(step, inputs, description, [params, momenta, start, momenta0])


if __name__ == "__main__":
    main(build, __doc__)
