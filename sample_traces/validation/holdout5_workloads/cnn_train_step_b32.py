"""One training step of a small CNN: 3 conv-BatchNorm-ReLU layers (3->32->64->128 at 32x32,
train mode), global average pool, Linear 128->10, cross-entropy against int64 labels,
backward, and SGD with momentum written with ``torch._foreach`` ops (no torch.optim), batch
32, fp32 (fifth hold-out).

Gradients are zeroed in place (``zero_grad(set_to_none=False)``), so they keep their storage
from step to step. Every step first restores the parameters and momentum buffers from a
snapshot taken at build (two foreach copies) and returns the loss of its forward pass, so a
step depends only on its input and replayed losses compare with eager ones. BatchNorm's
running statistics still update; in train mode they do not change the output.

    traceinspect profile cnn_train_step_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, MOMENTUM, WEIGHT_DECAY = 0.05, 0.9, 5e-4


def conv_bn(cin: int, cout: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


def build(device: torch.device, smoke: bool) -> Built:
    widths, size, batch = ((3, 4, 8, 16), 8, 4) if smoke else ((3, 32, 64, 128), 32, 32)
    layers = [m for a, b in zip(widths, widths[1:], strict=False) for m in conv_bn(a, b)]
    model = nn.Sequential(
        *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(widths[-1], 10)
    ).to(device)
    model.train()
    params = list(model.parameters())
    for p in params:
        p.grad = torch.zeros_like(p)
    start = [p.detach().clone() for p in params]
    bufs0 = [torch.randn_like(p) * 1e-3 for p in params]
    bufs = [b.clone() for b in bufs0]

    def step(images: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(bufs, bufs0)
        model.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        with torch.no_grad():
            grads = [p.grad for p in params]
            torch._foreach_add_(grads, params, alpha=WEIGHT_DECAY)
            torch._foreach_mul_(bufs, MOMENTUM)
            torch._foreach_add_(bufs, grads)
            torch._foreach_add_(params, bufs, alpha=-LR)
        return loss.detach()

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device),
            torch.randint(10, (batch,), device=device),
        )
        for _ in range(2)
    ]
    description = f"CNN training step {'-'.join(map(str, widths))}, batch {batch} at {size}"
    return Built(step, inputs, description, [model, start, bufs0, bufs])


if __name__ == "__main__":
    main(build, __doc__)
