"""Sixteen time steps of a D2Q9 lattice-Boltzmann simulation of the flow past a cylinder, 4
independent channels of 128 x 512 cells at 4 Reynolds numbers, written as a Python loop of
memory-bound kernels (forty-ninth hold-out: a lattice-Boltzmann solver, BGK collision and
streaming by ``torch.roll``, some 55 kernels a step, 880 in all, over 9.4 MB of populations),
fp32 on purpose (the flow lives in small differences between populations near their lattice
weights, density changes of a part in a thousand, which bf16's 8-bit mantissa would swamp), as
Palabos's Python example ``cylinder.py`` lays it out, batched: the 9 velocities ordered (1, 1),
(1, 0), (1, -1), (0, 1), (0, 0), (0, -1), (-1, 1), (-1, 0), (-1, -1) (x, y), so the right-,
rest- and left-moving thirds are slices and a population's opposite is 8 - i; populations (4, 9,
128, 512), y then x; top and bottom periodic. Per step: the outflow (the left-moving populations
of the last column copied from the one before it); the density (a sum over the 9) and velocity
(an ``einsum`` with the 9 x 2 velocities, divided by the density); the inflow, the first
column's velocity set to the inlet profile (0.04 (1 + 1e-4 sin(2 pi y / 127)), 0) and its
density from the rest and left-moving populations (Zou and He); the equilibrium w_i rho (1 + 3
c.u + 4.5 (c.u)^2 - 1.5 u.u); the first column's right-moving populations by Zou-He bounce-back
of the non-equilibrium part; the BGK collision, ``torch.lerp`` of the populations toward
equilibrium by omega = 1 / (3 nu + 0.5), nu = 0.04 r / Re for Re 100, 150, 200 and 300 (one
omega per channel); full-way bounce-back inside the cylinder (centre (128, 64), radius 14;
``torch.where`` with the populations flipped); the streaming, one ``torch.roll`` over both axes
per velocity (a kernel per axis) and a ``stack``. No gradients, one stream. Input: the initial
populations (4, 9, 128, 512), the equilibrium at density 1 and the inlet velocity, with a 1e-5
random perturbation. Returns the populations (4, 9, 128, 512) and the velocity field (4, 2, 128,
512) of the last step.

    traceinspect profile lattice_boltzmann_d2q9_loop_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

VELOCITIES = [(1, 1), (1, 0), (1, -1), (0, 1), (0, 0), (0, -1), (-1, 1), (-1, 0), (-1, -1)]
WEIGHTS = [1 / 36, 1 / 9, 1 / 36, 1 / 9, 4 / 9, 1 / 9, 1 / 36, 1 / 9, 1 / 36]
REYNOLDS, U_LB = (100.0, 150.0, 200.0, 300.0), 0.04
RIGHT, REST, LEFT = slice(0, 3), slice(3, 6), slice(6, 9)


def build(device: torch.device, smoke: bool) -> Built:
    ny, nx, steps = (18, 48, 3) if smoke else (128, 512, 16)
    batch = len(REYNOLDS)
    radius = ny // 9
    c = torch.tensor(VELOCITIES, dtype=torch.float32, device=device)  # (9, 2): x, y
    w = torch.tensor(WEIGHTS, device=device).view(1, 9, 1, 1)
    nu = torch.tensor([U_LB * radius / re for re in REYNOLDS])
    omega = (1 / (3 * nu + 0.5)).view(batch, 1, 1, 1).to(device)
    y, x = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
    solid = ((x - nx // 4) ** 2 + (y - ny // 2) ** 2 < radius**2).to(device)
    inlet_x = U_LB * (1 + 1e-4 * torch.sin(2 * math.pi * torch.arange(ny) / (ny - 1)))
    inlet = torch.stack([inlet_x, torch.zeros(ny)]).to(device)  # (2, ny)

    def equilibrium(rho: Tensor, u: Tensor) -> Tensor:
        cu = torch.einsum("qd,bdyx->bqyx", c, u)
        usq = (u * u).sum(dim=1, keepdim=True)
        return w * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * usq)

    @torch.no_grad()
    def step(f0: Tensor) -> tuple[Tensor, Tensor]:
        f = f0.clone()
        u = torch.empty(batch, 2, ny, nx, device=device)
        for _ in range(steps):
            f[:, LEFT, :, -1] = f[:, LEFT, :, -2]
            rho = f.sum(dim=1, keepdim=True)
            u = torch.einsum("bqyx,qd->bdyx", f, c) / rho
            u[:, :, :, 0] = inlet
            rest_left = f[:, REST, :, 0].sum(dim=1) + 2 * f[:, LEFT, :, 0].sum(dim=1)
            rho[:, 0, :, 0] = rest_left / (1 - u[:, 0, :, 0])
            feq = equilibrium(rho, u)
            f[:, RIGHT, :, 0] = (
                feq[:, RIGHT, :, 0] + f[:, LEFT, :, 0].flip(1) - feq[:, LEFT, :, 0].flip(1)
            )
            post = torch.lerp(f, feq, omega)
            post = torch.where(solid, f.flip(1), post)
            f = torch.stack(
                [
                    torch.roll(post[:, i], shifts=(cy, cx), dims=(1, 2))
                    for i, (cx, cy) in enumerate(VELOCITIES)
                ],
                dim=1,
            )
        return f, u

    u0 = inlet[None, :, :, None].expand(batch, 2, ny, nx)
    feq0 = equilibrium(torch.ones(batch, 1, ny, nx, device=device), u0)
    inputs = [(feq0 + 1e-5 * torch.randn_like(feq0),) for _ in range(2)]
    description = (
        f"D2Q9 lattice Boltzmann, cylinder flow, {steps} steps, {ny}x{nx} cells x {batch} "
        f"Reynolds numbers, BGK + Zou-He inlet + bounce-back, fp32"
    )
    return Built(step, inputs, description, [c, w, omega, solid, inlet])


if __name__ == "__main__":
    main(build, __doc__)
