"""One training step of a small Transformer encoder layer, 8 x 128 tokens of d 256, fp32
(nineteenth hold-out): ``nn.TransformerEncoderLayer`` (4 heads, FFN 1024, GELU, pre-norm,
no dropout, batch_first) and a Linear 256->1 head, mean-squared error against a target,
backward, and AdamW written with ``torch._foreach`` ops (no torch.optim: bias corrections
from a fixed step count, so the update is the same every step). Every step first restores
the parameters and both moment buffers from a snapshot taken at build (three foreach
copies) and zeroes the gradients in place (``set_to_none=False``), so a step depends only
on its inputs and replayed losses compare with eager ones. Some 200 kernels: the forward's
GEMMs and attention, the backward's (twice as many GEMMs and their reductions), and the
foreach update over 14 tensors. Inputs: 8 x 128 x 256 and the 8 x 128 x 1 target. Returns
the loss.

    traceinspect profile encoder_train_step_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LR, BETAS, EPS, WEIGHT_DECAY, AT_STEP = 1e-3, (0.9, 0.999), 1e-8, 0.01, 10


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, heads, ffn = (2, 8, 16, 2, 32) if smoke else (8, 128, 256, 4, 1024)
    layer = nn.TransformerEncoderLayer(
        d, heads, ffn, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    model = nn.Sequential(layer, nn.Linear(d, 1)).to(device).train()
    params = list(model.parameters())
    for p in params:
        p.grad = torch.zeros_like(p)
    grads = [p.grad for p in params]
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_sq = [torch.full_like(p, 1e-6) for p in params]
    snapshot = [t.detach().clone() for t in params + exp_avg + exp_sq]
    state = params + exp_avg + exp_sq
    correction1 = 1 - BETAS[0] ** AT_STEP
    correction2 = (1 - BETAS[1] ** AT_STEP) ** 0.5

    def step(x: Tensor, target: Tensor) -> Tensor:
        with torch.no_grad():
            torch._foreach_copy_(state, snapshot)
        model.zero_grad(set_to_none=False)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        with torch.no_grad():
            torch._foreach_mul_(params, 1 - LR * WEIGHT_DECAY)
            torch._foreach_lerp_(exp_avg, grads, 1 - BETAS[0])
            torch._foreach_mul_(exp_sq, BETAS[1])
            torch._foreach_addcmul_(exp_sq, grads, grads, 1 - BETAS[1])
            denom = torch._foreach_sqrt(exp_sq)
            torch._foreach_div_(denom, correction2)
            torch._foreach_add_(denom, EPS)
            torch._foreach_addcdiv_(params, exp_avg, denom, -LR / correction1)
        return loss.detach()

    inputs = [
        (torch.randn(batch, seq, d, device=device), torch.randn(batch, seq, 1, device=device))
        for _ in range(2)
    ]
    description = (
        f"encoder layer training step d{d} {heads} heads FFN {ffn} + foreach AdamW, "
        f"batch {batch} x {seq}"
    )
    return Built(step, inputs, description, [model, exp_avg, exp_sq, snapshot])


if __name__ == "__main__":
    main(build, __doc__)
