"""Simplified Mamba block (selective scan) over 2 sequences of 32 tokens of d 512, written
with plain tensor ops (ninth hold-out): an in-projection Linear 512->2048 split into x and
the gate z (1024 each); a depthwise causal conv1d over time on x (1024 channels, kernel 4,
padding 3, the last 3 outputs cut off) and SiLU; the selection projections (Linear
1024->64 giving dt (rank 32), B (16) and C (16); dt through Linear 32->1024 and softplus);
A = -exp(A_log) (1024 x 16, made at build). The scan runs in fp32: exp(dt A) and dt B x are
formed for all 32 steps at once, then a Python loop over the 32 time steps updates the
(2, 1024, 16) state h = exp(dt A)_t h + (dt B x)_t and reads y_t = sum over the 16 state
channels of h C_t, each a few elementwise kernels and a reduction on the state. The 32 y_t are
stacked, the skip D x added, gated by SiLU(z) and projected by a Linear 1024->512. The
projections and the conv run in bf16. Returns 2 x 32 x 512.

    traceinspect profile mamba_scan_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn


class MambaBlock(nn.Module):
    def __init__(self, d: int, inner: int, state: int, rank: int, kernel: int) -> None:
        super().__init__()
        self.inner, self.state, self.rank = inner, state, rank
        self.in_proj = nn.Linear(d, 2 * inner, bias=False)
        self.conv = nn.Conv1d(inner, inner, kernel, groups=inner, padding=kernel - 1)
        self.x_proj = nn.Linear(inner, rank + 2 * state, bias=False)
        self.dt_proj = nn.Linear(rank, inner)
        self.out_proj = nn.Linear(inner, d, bias=False)
        a = torch.arange(1, state + 1, dtype=torch.float32).repeat(inner, 1)
        self.register_buffer("a_log", torch.log(a))  # (inner, state)
        self.register_buffer("skip", torch.ones(inner))  # D

    def forward(self, u: Tensor) -> Tensor:  # u: (B, T, d)
        b, t, _ = u.shape
        x, z = self.in_proj(u).chunk(2, dim=-1)
        x = F.silu(self.conv(x.transpose(1, 2))[..., :t]).transpose(1, 2)  # (B, T, inner)
        dt, bm, cm = self.x_proj(x).split([self.rank, self.state, self.state], dim=-1)
        dt = F.softplus(self.dt_proj(dt).float())  # (B, T, inner)
        a = -torch.exp(self.a_log)
        xf = x.float()
        decay = torch.exp(dt.unsqueeze(-1) * a)  # (B, T, inner, state)
        drive = (dt * xf).unsqueeze(-1) * bm.float().unsqueeze(2)  # (B, T, inner, state)
        cm = cm.float()
        h = torch.zeros(b, self.inner, self.state, device=u.device)
        ys = []
        for i in range(t):
            h = decay[:, i] * h + drive[:, i]
            ys.append((h * cm[:, i].unsqueeze(1)).sum(-1))  # (B, inner)
        y = torch.stack(ys, dim=1) + xf * self.skip
        return self.out_proj((y * F.silu(z.float())).to(u.dtype))


def build(device: torch.device, smoke: bool) -> Built:
    d, inner, state, rank, kernel, tokens, batch = (
        (16, 32, 4, 4, 4, 6, 2) if smoke else (512, 1024, 16, 32, 4, 32, 2)
    )
    dtype = low_precision(device)
    model = MambaBlock(d, inner, state, rank, kernel).eval()
    a_log, skip = model.a_log, model.skip  # the scan's parameters stay fp32
    model = model.to(device=device, dtype=dtype)
    model.a_log, model.skip = a_log.to(device), skip.to(device)

    @torch.no_grad()
    def step(u: Tensor) -> Tensor:
        return model(u)

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Mamba-style scan, d{d} -> {inner} x {state} state, {tokens} steps, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
