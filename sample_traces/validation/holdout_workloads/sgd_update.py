"""Optimizer update: SGD with momentum (foreach=False) over 200 parameter tensors (hold-out).

100 weights of 256x1024 and 100 biases of 1024, fp32; each step copies a new flat gradient
into the buffer the .grad tensors are views of, then runs optimizer.step().

    traceinspect profile sgd_update.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main


def build(device: torch.device, smoke: bool) -> Built:
    pairs, rows, cols = (4, 4, 8) if smoke else (100, 256, 1024)
    params = []
    for _ in range(pairs):
        params += [
            torch.nn.Parameter(torch.randn(rows, cols, device=device) * 0.02),
            torch.nn.Parameter(torch.zeros(cols, device=device)),
        ]
    total = sum(p.numel() for p in params)
    grads = torch.zeros(total, device=device)
    offset = 0
    for p in params:
        p.grad = grads[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=False)

    def step(new_grads: torch.Tensor) -> None:
        grads.copy_(new_grads)
        opt.step()

    inputs = [(torch.randn(total, device=device) * 1e-3,) for _ in range(2)]
    return Built(step, inputs, f"SGD momentum over {len(params)} tensors", [opt])


if __name__ == "__main__":
    main(build, __doc__)
