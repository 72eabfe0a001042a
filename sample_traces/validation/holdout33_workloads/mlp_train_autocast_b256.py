"""A mixed-precision training step under autocast (thirty-third hold-out): a 5-layer MLP
(four Linear 1024 -> 1024 with SiLU between them, then Linear 1024 -> 100) with fp32
weights, its forward and loss run under ``torch.autocast(device_type, dtype=torch.bfloat16)``
(the Linears in bf16 on casts of the fp32 weights, the loss in fp32), cross-entropy over 100
classes against integer targets for 256 rows, ``loss.backward()`` and ``torch.optim.AdamW``
(lr 1e-3, ``foreach=True``, ``capturable=True`` on a GPU so the step counts live there and
the step can be graphed; torch allows capturable only for GPU parameters, so a CPU smoke
run uses capturable=False). The optimizer state is allocated at build by one warm step on
zero gradients, then the parameters and Adam state (exp_avg, exp_avg_sq, step) are
snapshotted.

Every step first restores the parameters and Adam state from those snapshots (foreach
copies) and zeroes the gradients in place (``zero_grad(set_to_none=False)``), so a step
depends only on its inputs and replayed losses compare with eager ones. Inputs: x
(256, 1024) fp32, targets (256,) long. Returns the loss (a 0-d fp32 tensor, detached).

    traceinspect profile mlp_train_autocast_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, LR = 5, 1e-3


def build(device: torch.device, smoke: bool) -> Built:
    rows, d, classes = (8, 32, 10) if smoke else (256, 1024, 100)
    layers: list[nn.Module] = []
    for _ in range(LAYERS - 1):
        layers += [nn.Linear(d, d), nn.SiLU()]
    layers.append(nn.Linear(d, classes))
    model = nn.Sequential(*layers).to(device)
    model.train()
    params = list(model.parameters())
    capturable = device.type == "cuda"
    optimizer = torch.optim.AdamW(params, lr=LR, foreach=True, capturable=capturable)
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer.step()  # allocates exp_avg, exp_avg_sq and the step counts
    state = [optimizer.state[p][key] for key in ("exp_avg", "exp_avg_sq", "step") for p in params]
    live = params + state
    snapshot = [t.detach().clone() for t in live]

    def step(x: Tensor, target: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(live, snapshot)
        optimizer.zero_grad(set_to_none=False)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        return loss.detach()

    inputs = [
        (
            torch.randn(rows, d, device=device),
            torch.randint(0, classes, (rows,), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"autocast bf16 MLP training step, {LAYERS} Linear {d} -> {classes} classes, AdamW "
        f"(foreach{', capturable' if capturable else ''}), {rows} rows"
    )
    return Built(step, inputs, description, [model, optimizer, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
