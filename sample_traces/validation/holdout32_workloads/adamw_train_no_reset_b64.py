"""A real training step whose state drifts on purpose (thirty-second hold-out): a 4-layer
MLP (Linear 1024 -> 1024 four times, GELU between them) over 64 rows, bf16 on a GPU,
mean-squared error against a target, ``loss.backward()`` and ``torch.optim.AdamW`` (lr
1e-3, ``foreach=True``, ``capturable=True`` so the step counts live on the GPU and the
step can be graphed; torch allows capturable only for GPU parameters, so a CPU smoke run
uses capturable=False). The optimizer state is allocated at build by one warm step on zero
gradients; each step zeroes the gradients in place (``zero_grad(set_to_none=False)``).

Unlike the other training workloads the step does NOT restore the parameters or the
optimizer state: the weights and Adam moments move every call, so two calls on the same
inputs give different losses (eager and replayed losses do not compare value for value).
Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile adamw_train_no_reset_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS, LR = 4, 1e-3


def build(device: torch.device, smoke: bool) -> Built:
    rows, d = (8, 32) if smoke else (64, 1024)
    dtype = low_precision(device)
    layers: list[nn.Module] = []
    for i in range(LAYERS):
        layers.append(nn.Linear(d, d))
        if i < LAYERS - 1:
            layers.append(nn.GELU())
    model = nn.Sequential(*layers).to(device, dtype)
    model.train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.AdamW(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts

    def step(x: Tensor, target: Tensor) -> Tensor:
        optimizer.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x).float(), target)
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randn(rows, d, device=device, dtype=dtype),
            torch.randn(rows, d, device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"MLP training step without reset, {LAYERS} x Linear {d}, AdamW (foreach"
        f"{', capturable' if capturable else ''}), {rows} rows"
    )
    return Built(step, inputs, description, [model, optimizer])


if __name__ == "__main__":
    main(build, __doc__)
