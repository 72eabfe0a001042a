"""Optimizer step: ``torch.optim.Adam(amsgrad=True, foreach=False, capturable=True)`` over 60
fp32 parameter tensors of mixed shapes (seventh hold-out): 12 blocks of a 1024 x 256 weight,
a 1024 bias, a 256 x 1024 weight, a 256 bias and a 256 norm gain, 6,311,424 values in all.
The gradients are set once at build (fixed random tensors, never zeroed) and Adam runs one
step at build so its state (exp_avg, exp_avg_sq, max_exp_avg_sq and a step count per
tensor) exists before the measured steps. The step is only ``optimizer.step()``: one chain
of small kernels per tensor (single-tensor path). capturable=True keeps each step count a
device tensor, and torch's single-tensor capturable path computes the bias corrections and
the AMSGrad maximum with tensor ops (no ``.item()``), so the step is graph-safe; torch allows
capturable=True only for GPU parameters, so a CPU (smoke) run uses capturable=False. The
parameters change every step (the moments and step counts advance); the step returns its
input unchanged.

    traceinspect profile adam_amsgrad_loop.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    blocks, d, hidden = (12, 8, 32) if smoke else (12, 256, 1024)
    shapes = [(hidden, d), (hidden,), (d, hidden), (d,), (d,)] * blocks
    params = [torch.randn(s, device=device).mul_(0.02).requires_grad_() for s in shapes]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    opt = torch.optim.Adam(
        params, lr=1e-4, amsgrad=True, foreach=False, capturable=device.type == "cuda"
    )
    opt.step()  # optimizer state allocated before the measured steps

    def step(marker: Tensor) -> Tensor:
        opt.step()
        return marker

    inputs = [(torch.full((1,), float(i), device=device),) for i in range(2)]
    total = sum(p.numel() for p in params)
    description = f"Adam (AMSGrad) over {len(params)} tensors ({total} values)"
    return Built(step, inputs, description, [opt, *params])


if __name__ == "__main__":
    main(build, __doc__)
