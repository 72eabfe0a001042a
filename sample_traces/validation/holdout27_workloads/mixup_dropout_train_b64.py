"""A training step with mixup and dropout (twenty-seventh hold-out): 64 samples of 512
features, fp32, an MLP 512 -> 1,024 -> 1,024 -> 100 with GELU and dropout 0.1 after each
hidden layer, in training mode. Each step draws a mixing weight uniformly from [0.5, 1) and a
permutation of the batch (an ``argsort`` of uniform keys) on the device, mixes inputs and
one-hot targets (a ``scatter_``), takes a soft-target cross entropy, backpropagates and
applies SGD with momentum through ``torch._foreach`` ops. The step restores the weights and
zeroes the momenta first, so it depends only on its inputs. Random draws inside the step (the
weight, the keys, the dropout masks), one stream.

    traceinspect profile mixup_dropout_train_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, MOMENTUM = 0.05, 0.9


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, hidden, classes = (4, 8, 16, 5) if smoke else (64, 512, 1024, 100)
    model = nn.Sequential(
        nn.Linear(d, hidden),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(hidden, classes),
    ).to(device)
    model.train()
    params = list(model.parameters())
    for p in params:
        p.grad = torch.zeros_like(p)
    start = [p.detach().clone() for p in params]
    momenta = [torch.zeros_like(p) for p in params]

    def step(x: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_zero_(momenta)
        lam = 0.5 + 0.5 * torch.rand((), device=x.device)
        order = torch.rand(x.shape[0], device=x.device).argsort()
        target = x.new_zeros(x.shape[0], classes).scatter_(1, labels.unsqueeze(1), 1.0)
        mixed = lam * x + (1 - lam) * x[order]
        soft = lam * target + (1 - lam) * target[order]
        model.zero_grad(set_to_none=False)
        loss = torch.sum(-soft * F.log_softmax(model(mixed), dim=-1), dim=-1).mean()
        loss.backward()
        with torch.no_grad():
            grads = [p.grad for p in params]
            torch._foreach_mul_(momenta, MOMENTUM)
            torch._foreach_add_(momenta, grads)
            torch._foreach_add_(params, momenta, alpha=-LR)
        return loss.detach()

    inputs = [
        (torch.randn(batch, d, device=device), torch.randint(classes, (batch,), device=device))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"mixup + dropout MLP training step {d}-{hidden}-{hidden}-{classes}, b{batch}",
        [model, start, momenta],
    )


if __name__ == "__main__":
    main(build, __doc__)
