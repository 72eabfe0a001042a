"""One training step of a student MLP with its EMA teacher updated on a side stream, as
self-distillation (mean-teacher, BYOL, DINO) trains (twenty-fourth hold-out): the student
Linear 512->1024, ReLU, Linear 1024->1024, ReLU, Linear 1024->10, batch 32, fp32;
cross-entropy against int64 labels, backward, and ``torch.optim.SGD`` (lr 0.01, momentum
0.9, ``foreach=True``: multi-tensor kernels over the 6 parameter tensors). Then the teacher,
a copy of the student made at build, moves toward the updated student —
``torch._foreach_lerp_`` of the teacher's 6 tensors (1.6 M values) with weight 0.001 —
forked onto a side stream: the side stream waits on the current one (``wait_stream``),
runs the update, and the current stream waits on it (``wait_stream``) before the step
ends. The update is in place on tensors made at build, so the side stream allocates nothing
and no ``record_stream`` is needed. On a CPU all runs on one stream.

Gradients are zeroed in place (``optimizer.zero_grad(set_to_none=False)``), so they keep
their storage from step to step. The momentum buffers are allocated at build by one
optimizer step over zero gradients, then set to small random values; every step first
restores the student's parameters and the momentum buffers from a snapshot taken at build
(two foreach copies, as the eleventh hold-out's training step does) and returns the loss of
its forward pass, so a step depends only on its input and replayed losses compare with eager
ones. The teacher changes every step; the loss does not depend on it. Returns the loss (a
0-d tensor).

    traceinspect profile ema_teacher_update_side_stream_b32.py
"""

from __future__ import annotations

import copy

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, MOMENTUM, EMA_WEIGHT = 0.01, 0.9, 0.001


def build(device: torch.device, smoke: bool) -> Built:
    features, hidden, classes, batch = (16, 32, 10, 4) if smoke else (512, 1024, 10, 32)
    model = nn.Sequential(
        nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, classes),
    ).to(device)  # fmt: skip
    model.train()
    teacher = copy.deepcopy(model).requires_grad_(False).eval()
    params = list(model.parameters())
    teacher_params = list(teacher.parameters())
    optimizer = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM, foreach=True)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates the momentum buffers (copies of the zero gradients)
    bufs = [optimizer.state[p]["momentum_buffer"] for p in params]
    start = [p.detach().clone() for p in params]
    bufs0 = [torch.randn_like(p) * 1e-3 for p in params]
    side = torch.cuda.Stream(device) if device.type == "cuda" else None

    def ema_update() -> None:
        torch._foreach_lerp_(teacher_params, params, EMA_WEIGHT)

    def step(x: Tensor, labels: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(params, start)
            torch._foreach_copy_(bufs, bufs0)
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), labels)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            if side is None:
                ema_update()
            else:
                current = torch.cuda.current_stream(device)
                side.wait_stream(current)
                with torch.cuda.stream(side):
                    ema_update()
                current.wait_stream(side)
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
        f"MLP training step {features}-{hidden}x2-{classes}, torch.optim SGD (foreach) and "
        f"an EMA teacher over {len(params)} tensors ({total} values) on a side stream, "
        f"batch {batch}"
    )
    return Built(step, inputs, description, [model, teacher, optimizer, start, bufs0])


if __name__ == "__main__":
    main(build, __doc__)
