"""A Mamba-style selective state-space scan as a plain Python loop over time, as reference
implementations without the fused scan kernel run it (thirty-second hold-out): 4 sequences
of 64 steps, d_inner 512, d_state 16, fp32, no gradients. Each step first computes the
input-dependent parameters for all steps at once, delta = softplus(x @ W_dt + b_dt),
B = x @ W_B and C = x @ W_C, with A = -exp(A_log) (512 x 16, a parameter); then for each
of the 64 steps h = exp(delta_t * A) * h + (delta_t * x_t) * B_t and y_t = (h * C_t).sum
over the state (about eight tiny kernels a step, several hundred in all); the outputs are
stacked, the skip D * x added, and a Linear 512 -> 256 projects them. Returns y
(4 x 64 x 256).

    traceinspect profile selective_scan_loop_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


class SelectiveScan(nn.Module):
    def __init__(self, d_inner: int, d_state: int, d_out: int) -> None:
        super().__init__()
        scale = d_inner**-0.5
        self.w_dt = nn.Parameter(torch.randn(d_inner, d_inner) * scale * 0.1)
        dt = torch.exp(torch.rand(d_inner) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        self.b_dt = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1(dt)
        self.w_b = nn.Parameter(torch.randn(d_inner, d_state) * scale)
        self.w_c = nn.Parameter(torch.randn(d_inner, d_state) * scale)
        a = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.a_log = nn.Parameter(torch.log(a))
        self.d = nn.Parameter(torch.ones(d_inner))
        self.out = nn.Linear(d_inner, d_out)

    def forward(self, x: Tensor) -> Tensor:
        delta = F.softplus(x @ self.w_dt + self.b_dt)  # (b, L, d_inner)
        b_mat, c_mat = x @ self.w_b, x @ self.w_c  # (b, L, d_state)
        a = -torch.exp(self.a_log)  # (d_inner, d_state)
        h = x.new_zeros(x.shape[0], x.shape[2], a.shape[1])  # (b, d_inner, d_state)
        ys = []
        for t in range(x.shape[1]):
            delta_t, x_t = delta[:, t], x[:, t]
            h = (
                torch.exp(delta_t[..., None] * a) * h
                + (delta_t * x_t)[..., None] * b_mat[:, t][:, None, :]
            )
            ys.append((h * c_mat[:, t][:, None, :]).sum(-1))
        y = torch.stack(ys, dim=1) + self.d * x
        return self.out(y)


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, d_inner, d_state, d_out = (2, 8, 16, 4, 8) if smoke else (4, 64, 512, 16, 256)
    model = SelectiveScan(d_inner, d_state, d_out).to(device)
    model.eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, length, d_inner, device=device),) for _ in range(2)]
    description = (
        f"selective scan Python loop, {length} steps, d_inner {d_inner}, d_state {d_state}, "
        f"b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
