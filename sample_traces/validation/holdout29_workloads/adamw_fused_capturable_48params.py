"""``torch.optim.AdamW`` with ``fused=True, capturable=True`` — the optimizer step as PyTorch
offers it for CUDA graphs — over 48 parameters of a small transformer's shapes (twenty-ninth
hold-out): 8 layers' QKV (768 x 2,304), output (768 x 768) and two MLP weights (768 x 3,072,
3,072 x 768), and 16 LayerNorm weights, fp32 (56.8M values). The step first restores the
parameters and the optimizer's moments and step counts from a snapshot (``_foreach_copy_``),
so it depends only on its inputs, then sets the gradients from the 48 inputs (one
``_foreach_copy_`` into the ``.grad`` tensors) and calls ``optimizer.step()``: the fused
kernels read the learning rate and the step count on the device. One stream; memory-bound
multi-tensor kernels over 227 MB of parameters and 455 MB of moments.

    traceinspect profile adamw_fused_capturable_48params.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor


def shapes(d: int, layers: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for _ in range(layers):
        out += [(3 * d, d), (d, d), (4 * d, d), (d, 4 * d), (d,), (d,)]
    return out


def build(device: torch.device, smoke: bool) -> Built:
    d, layers = (8, 2) if smoke else (768, 8)
    params = [torch.nn.Parameter(torch.randn(s, device=device) * 0.02) for s in shapes(d, layers)]
    cuda = device.type == "cuda"
    optimizer = torch.optim.AdamW(
        params,
        lr=torch.tensor(1e-4, device=device) if cuda else 1e-4,
        weight_decay=0.1,
        fused=cuda,
        capturable=cuda,
    )
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    optimizer.step()  # creates the state (exp_avg, exp_avg_sq, step), as after one step
    state = [optimizer.state[p] for p in params]
    live = params + [s["exp_avg"] for s in state] + [s["exp_avg_sq"] for s in state]
    snapshot = [t.detach().clone() for t in live]
    steps = [s["step"] for s in state]
    steps0 = [s.clone() for s in steps]
    grads = [p.grad for p in params]

    def step(*new_grads: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_([t.data for t in live], snapshot)
            torch._foreach_copy_(steps, steps0)
            torch._foreach_copy_(grads, list(new_grads))
        optimizer.step()
        return torch.stack(torch._foreach_norm([p.detach() for p in params[:8]]))

    inputs = [tuple(torch.randn_like(p) * 1e-3 for p in params) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"AdamW fused capturable, {len(params)} params d{d}",
        [params, optimizer, snapshot, steps0],
    )


if __name__ == "__main__":
    main(build, __doc__)
