"""Twelve velocity-Verlet steps of a Lennard-Jones fluid, 8 independent systems of 256
particles, written as a Python loop of small kernels (forty-eighth hold-out: a molecular-dynamics
integration loop with all-pairs forces under periodic boundaries, some 290 launches of a few
microseconds each): reduced units (epsilon = sigma = mass = 1), density 0.8 (a cubic periodic
box of side 6.84), cutoff 2.5, time step 0.005, fp32 throughout (as molecular dynamics needs).
Forces, for all 8 x 256 x 256 ordered pairs at once: the displacements x_i - x_j (8, 256, 256,
3), wrapped to the minimum image (``remainder(d + L/2, L) - L/2``), squared distances plus a
precomputed diagonal pad that puts every i = j pair beyond the cutoff, 1/r^2 zeroed beyond the
cutoff (``masked_fill_``), (1/r^2)^3, the pair coefficient 24 (2/r^14 - 1/r^8) written as inv2
inv6 (48 inv6 - 24), and the force sum over j as a batched ``matmul`` (8 x 256 products of (1 x
256) by (256 x 3)): some 18 kernels. The step clones the positions and velocities, computes
the forces once, then per Verlet step: v += dt/2 F, x += dt v, x wrapped into the box
(``remainder_``), new forces, v += dt/2 F. At the end: the kinetic energy and the (unshifted,
cut) potential energy of each system. No gradients, one stream. Inputs: positions (8, 256, 3)
(a face-centred cubic lattice of 4 x 4 x 4 cells, jittered by 0.02) and velocities (8, 256, 3)
(temperature about 1, zero mean). Returns the final positions and velocities, (8, 256, 3) each,
and the energies (8, 2) [potential, kinetic].

    traceinspect profile lennard_jones_verlet_loop_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

DENSITY, CUTOFF, DT, JITTER = 0.8, 2.5, 0.005, 0.02


def fcc_lattice(systems: int, cells: int, box: float) -> Tensor:
    """The 4 cells^3 sites of a face-centred cubic lattice filling the box, jittered."""
    grid = torch.arange(cells, dtype=torch.float32)
    corners = torch.cartesian_prod(grid, grid, grid)
    basis = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])
    sites = (corners[:, None, :] + basis + 0.25).reshape(-1, 3)
    pos = sites * (box / cells) + JITTER * torch.randn(systems, len(sites), 3)
    return pos.remainder(box)


def build(device: torch.device, smoke: bool) -> Built:
    systems, cells, steps = (2, 2, 3) if smoke else (8, 4, 12)
    particles = 4 * cells**3
    box = (particles / DENSITY) ** (1 / 3)
    half, cut2 = box / 2, CUTOFF**2
    self_pad = torch.eye(particles, device=device) * (4 * cut2)

    def forces(x: Tensor) -> tuple[Tensor, Tensor]:
        d = x[:, :, None, :] - x[:, None, :, :]
        d = torch.remainder(d + half, box) - half
        r2 = (d * d).sum(dim=-1) + self_pad
        inv2 = r2.reciprocal().masked_fill_(r2 >= cut2, 0.0)
        inv6 = inv2 * inv2 * inv2
        coef = inv2 * inv6 * (48 * inv6 - 24)
        return torch.matmul(coef.unsqueeze(2), d).squeeze(2), inv6

    @torch.no_grad()
    def step(pos: Tensor, vel: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        x, v = pos.clone(), vel.clone()
        f, inv6 = forces(x)
        for _ in range(steps):
            v.add_(f, alpha=0.5 * DT)
            x.add_(v, alpha=DT).remainder_(box)
            f, inv6 = forces(x)
            v.add_(f, alpha=0.5 * DT)
        potential = 2 * (inv6 * (inv6 - 1)).sum(dim=(1, 2))  # 4 eps (...) over pairs, halved
        kinetic = 0.5 * (v * v).sum(dim=(1, 2))
        return x, v, torch.stack([potential, kinetic], dim=1)

    inputs = []
    for _ in range(2):
        pos = fcc_lattice(systems, cells, box)
        vel = torch.randn(systems, particles, 3)
        vel -= vel.mean(dim=1, keepdim=True)
        inputs.append((pos.to(device), vel.to(device)))
    description = (
        f"Lennard-Jones fluid, {steps} velocity-Verlet steps, {particles} particles x "
        f"{systems} systems, all-pairs forces, fp32"
    )
    return Built(step, inputs, description, [self_pad])


if __name__ == "__main__":
    main(build, __doc__)
