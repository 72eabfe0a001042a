"""One training step of a 4-layer MLP classifier through ``torch.optim``: batch 64 of 1024
features, Linear 1024->2048, ReLU, Linear 2048->2048, ReLU, Linear 2048->2048, ReLU, Linear
2048->1000, fp32 (eleventh hold-out); cross-entropy (label smoothing 0.1) against int64
labels, backward, and ``torch.optim.SGD`` (lr 0.01, momentum 0.9, weight decay 1e-4) with
``foreach=False``: the single-tensor path, a few small kernels per parameter tensor (8
tensors, 12,540,904 values).

Gradients are zeroed in place (``optimizer.zero_grad(set_to_none=False)``), so they keep
their storage from step to step. The momentum buffers are allocated at build by one
optimizer step over zero gradients, then set to small random values; every step first
restores the parameters and the momentum buffers from a snapshot taken at build (two
foreach copies, as the fifth hold-out's training step does) and returns the loss of its
forward pass, so a step depends only on its input and replayed losses compare with eager
ones. Returns the loss (a 0-d tensor).

    traceinspect profile cross_entropy_train_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, MOMENTUM, WEIGHT_DECAY, SMOOTHING = 0.01, 0.9, 1e-4, 0.1


def build(device: torch.device, smoke: bool) -> Built:
    features, hidden, classes, batch = (16, 32, 10, 4) if smoke else (1024, 2048, 1000, 64)
    model = nn.Sequential(
        nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, classes),
    ).to(device)  # fmt: skip
    model.train()
    params = list(model.parameters())
    optimizer = torch.optim.SGD(
        params, lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY, foreach=False
    )
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates the momentum buffers (copies of the zero gradients)
    bufs = [optimizer.state[p]["momentum_buffer"] for p in params]
    start = [p.detach().clone() for p in params]
    bufs0 = [torch.randn_like(p) * 1e-3 for p in params]

    def step(x: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(bufs, bufs0)
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), labels, label_smoothing=SMOOTHING)
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randn(batch, features, device=device),
            torch.randint(classes, (batch,), device=device),
        )
        for _ in range(2)
    ]
    total = sum(p.numel() for p in params)
    description = (
        f"MLP classifier training step {features}-{hidden}x3-{classes}, torch.optim SGD "
        f"(foreach=False) over {len(params)} tensors ({total} values), batch {batch}"
    )
    return Built(step, inputs, description, [model, optimizer, start, bufs0])


if __name__ == "__main__":
    main(build, __doc__)
