"""One ``torch.optim.AdamW`` step (``foreach=True, capturable=True``) over 60 small fp32
parameters of mixed shapes (seventeenth hold-out): ten shapes, (64,), (256,), 64 x 64, 128 x
32, (32,), 256 x 64, (128,), 96 x 96, (512,) and 32 x 16 x 3 x 3, six parameters of each,
236K values (0.9 MB) in all, lr 1e-3, weight decay 0.01. The gradients are set once at build
and one step is taken there, so the optimizer's state (exp_avg, exp_avg_sq and the step
counts, all on the GPU as ``capturable`` keeps them) exists before the first timed step.

The step mutates the parameters, the gradients and the state in place, so every step first
restores the parameters and the three state lists from a snapshot taken at build (four
foreach copies, as the sixteenth hold-out's Lion step restores its state), then sets each
gradient to its build-time value plus its entry of the input's grad-noise vector (a 0-d
addend broadcast over the gradient, ``torch.add(..., out=grad)``: 60 small kernels), then
calls ``step()``: a step then depends only on its input, and replayed results compare with
eager ones. AdamW's capturable foreach path computes the bias corrections on the device from
the step counts (multi-tensor kernels, each one launch or two over the 60 tensors: some 21).
Some 88 kernels in all with the restores, the 60 gradient adds and the checksum, none over
more than 0.9 MB: launch-bound. On a CPU ``capturable`` is off (CPU tensors do not support
it). Input: the grad-noise vector (60, fp32, one scale per parameter). Returns a checksum on
the device: the L2 norms of the 60 updated parameters (``_foreach_norm`` and a
``torch.stack``: one tensor of 60).

    traceinspect profile adamw_many_small_params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

PARAMS, LR, WEIGHT_DECAY = 60, 1e-3, 0.01
SHAPES: list[tuple[int, ...]] = [
    (64,), (256,), (64, 64), (128, 32), (32,), (256, 64), (128,), (96, 96), (512,), (32, 16, 3, 3),
]  # fmt: skip


def build(device: torch.device, smoke: bool) -> Built:
    shapes = [SHAPES[i % len(SHAPES)] for i in range(PARAMS)]
    if smoke:
        shapes = [tuple(max(1, n // 8) for n in s) for s in shapes]
    params = [nn.Parameter(0.02 * torch.randn(s, device=device)) for s in shapes]
    base_grads = [1e-2 * torch.randn_like(p) for p in params]
    for p, g in zip(params, base_grads, strict=True):
        p.grad = g.clone()
    optimizer = torch.optim.AdamW(
        params, lr=LR, weight_decay=WEIGHT_DECAY, foreach=True, capturable=device.type == "cuda"
    )
    optimizer.step()  # creates the state (exp_avg, exp_avg_sq, step) before the timed steps
    grads = [p.grad for p in params]
    states = [[optimizer.state[p][k] for p in params] for k in ("exp_avg", "exp_avg_sq", "step")]
    start = [p.detach().clone() for p in params]
    states0 = [[t.clone() for t in state] for state in states]

    def step(noise: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            for state, state0 in zip(states, states0, strict=True):
                torch._foreach_copy_(state, state0)
            for g, g0, s in zip(grads, base_grads, noise.unbind(0), strict=True):
                torch.add(g0, s, out=g)
        optimizer.step()
        with torch.no_grad():
            return torch.stack(torch._foreach_norm(params))

    inputs = [(1e-3 * torch.randn(PARAMS, device=device),) for _ in range(2)]
    total = sum(p.numel() for p in params)
    description = (
        f"AdamW step (foreach, capturable) over {PARAMS} small tensors ({total} values, "
        f"{len(SHAPES)} mixed shapes), per-parameter grad noise from a ({PARAMS},) input"
    )
    return Built(step, inputs, description, [optimizer, params, base_grads, start, states0])


if __name__ == "__main__":
    main(build, __doc__)
