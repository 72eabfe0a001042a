"""A neural ODE integrated with a fixed-step classic Runge-Kutta 4 solver, 512 trajectories of
a 64-value state, fp32 (thirteenth hold-out), as torchdiffeq's ``odeint(method="rk4")``
with a fixed grid, written out. The dynamics f(h) is an autonomous MLP, Linear 64->256,
tanh, Linear 256->256, tanh, Linear 256->64 (three GEMMs with their biases and two tanh
per evaluation); 20 steps of dt = 0.05 from t = 0 to 1, each taking four evaluations (k1
at h, k2 at h + dt/2 k1, k3 at h + dt/2 k2, k4 at h + dt k3, each stage input one
``torch.add`` with alpha) and the update h + dt/6 (k1 + 2 k2 + 2 k3 + k4) as four more
adds: 27 small kernels per step, 540 in all, none bigger than a 512 x 256 x 256 GEMM, so
the step is launch-bound. A Linear 64->10 readout on the final state. Input: the initial
states (512 x 64). Returns the final states (512 x 64) and the logits (512 x 10).

    traceinspect profile neural_ode_rk4_b512.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

STEPS, DT = 20, 0.05


def build(device: torch.device, smoke: bool) -> Built:
    batch, state, hidden = (4, 8, 16) if smoke else (512, 64, 256)
    dynamics = nn.Sequential(
        nn.Linear(state, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
        nn.Linear(hidden, state),
    )  # fmt: skip
    readout = nn.Linear(state, 10)
    dynamics = dynamics.to(device).eval()
    readout = readout.to(device).eval()

    @torch.no_grad()
    def step(h: Tensor) -> tuple[Tensor, Tensor]:
        for _ in range(STEPS):
            k1 = dynamics(h)
            k2 = dynamics(torch.add(h, k1, alpha=DT / 2))
            k3 = dynamics(torch.add(h, k2, alpha=DT / 2))
            k4 = dynamics(torch.add(h, k3, alpha=DT))
            acc = torch.add(k1, k2, alpha=2.0)
            acc = torch.add(acc, k3, alpha=2.0)
            acc = acc + k4
            h = torch.add(h, acc, alpha=DT / 6)
        return h, readout(h)

    inputs = [(torch.randn(batch, state, device=device),) for _ in range(2)]
    description = (
        f"neural ODE, RK4 {STEPS} steps of MLP {state}-{hidden}-{hidden}-{state}, batch {batch}"
    )
    return Built(step, inputs, description, [dynamics, readout])


if __name__ == "__main__":
    main(build, __doc__)
