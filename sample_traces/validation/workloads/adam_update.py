"""Optimizer update: torch.optim.Adam (foreach=False) over 100 parameter tensors.

50 weights of 512x512 and 50 biases of 512, fp32. The step copies a new flat gradient into
the buffer the parameters' .grad tensors are views of, then runs optimizer.step() — one
small kernel chain per tensor. capturable=True keeps Adam's step counters on the GPU (a
graph cannot capture the host-side counters of capturable=False).

    traceinspect profile adam_update.py
"""

from __future__ import annotations

import torch
from _common import Built, main


def build(device: torch.device, smoke: bool) -> Built:
    pairs, n = (4, 8) if smoke else (50, 512)
    params = []
    for _ in range(pairs):
        params += [
            torch.nn.Parameter(torch.randn(n, n, device=device) * 0.02),
            torch.nn.Parameter(torch.zeros(n, device=device)),
        ]
    total = sum(p.numel() for p in params)
    grads = torch.zeros(total, device=device)
    offset = 0
    for p in params:
        p.grad = grads[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    opt = torch.optim.Adam(params, lr=1e-4, foreach=False, capturable=device.type == "cuda")

    def step(new_grads: torch.Tensor) -> None:
        grads.copy_(new_grads)
        opt.step()

    inputs = [(torch.randn(total, device=device) * 1e-3,) for _ in range(2)]
    return Built(step, inputs, f"Adam over {len(params)} tensors ({total} values)", [opt])


if __name__ == "__main__":
    main(build, __doc__)
