"""An instant-NGP field query (Mueller et al., 2022: the multiresolution hash encoding and its
small density MLP) written in plain PyTorch for 65,536 points (fortieth hold-out): the encoding
in fp32 (positions, integer hashing, interpolation), the MLP in bf16 on a GPU, eval mode, no
gradients. The encoding: 16 levels of 2 features, a table of 2^16 entries per level (one fp32
(16 x 65536, 2) table, uniform in +-1e-4 as instant-NGP initializes it), base resolution 16 and
finest 2048 (per-level scale 1.3819); per level the scale 16 x 1.3819^l - 1, each point at
position x scale + 0.5, its cell the floor and its fraction the rest, all 16 levels at once as
(65536, 16, 3). The 8 corners of every cell as (65536, 16, 8, 3) int64 coordinates; their
table index, for the 3 coarsest levels whose (resolution)^3 grid fits in 2^16 entries, the
dense index x + y r + z r^2, for the other 13 the spatial hash (x x 1) XOR (y x 2654435761)
XOR (z x 805459861), both masked to the low 16 bits (``torch.where`` over a per-level flag made
at build) and offset to the level's part of the table; the features read by indexing the table
with those (65536, 16, 8) indices, weighted by the trilinear weights (the product over the 3
axes of the fraction or 1 - the fraction) and summed over the corners to (65536, 32). Memory
bound: elementwise int64 passes over 25 M corner coordinates and a random gather from an 8 MB
table. The MLP, in bf16: ``Linear(32, 64)`` + ReLU, ``Linear(64, 64)`` + ReLU, ``Linear(64,
16)``; the first output through exp in fp32 is the density. Input: the points (65536, 3) fp32
in the unit cube. Returns the densities (65536,) and the MLP outputs (65536, 16), fp32.

    traceinspect profile hashgrid_encoding_mlp_b65536.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

FEATURES, PRIMES, INIT = 2, (1, 2654435761, 805459861), 1e-4


class HashGrid(nn.Module):
    def __init__(self, levels: int, log2_size: int, base: int, finest: int) -> None:
        super().__init__()
        size = 2**log2_size
        growth = math.exp((math.log(finest) - math.log(base)) / (levels - 1))
        scales = [base * growth**level - 1 for level in range(levels)]
        res = [math.ceil(s) + 1 for s in scales]
        self.mask = size - 1
        self.table = nn.Parameter(torch.empty(levels * size, FEATURES).uniform_(-INIT, INIT))
        self.register_buffer("scales", torch.tensor(scales)[:, None])  # (levels, 1)
        self.register_buffer("primes", torch.tensor(PRIMES))
        self.register_buffer("strides", torch.tensor([[1, r, r * r] for r in res])[:, None])
        self.register_buffer("dense", torch.tensor([r**3 <= size for r in res])[:, None])
        self.register_buffer("offsets", (torch.arange(levels) * size)[:, None])
        corners = torch.tensor([[(i >> k) & 1 for k in range(3)] for i in range(8)])
        self.register_buffer("corners", corners)  # (8, 3)

    def forward(self, x: Tensor) -> Tensor:
        pos = x[:, None] * self.scales + 0.5  # (n, levels, 3)
        cell = pos.floor()
        frac = (pos - cell)[:, :, None]  # (n, levels, 1, 3)
        corner = cell.long()[:, :, None] + self.corners  # (n, levels, 8, 3)
        hx, hy, hz = (corner * self.primes).unbind(-1)
        dense = (corner * self.strides).sum(dim=-1)
        idx = (torch.where(self.dense, dense, hx ^ hy ^ hz) & self.mask) + self.offsets
        w = torch.where(self.corners.bool(), frac, 1 - frac).prod(dim=-1)  # (n, levels, 8)
        return (self.table[idx] * w[..., None]).sum(dim=2).flatten(1)  # (n, levels x features)


def build(device: torch.device, smoke: bool) -> Built:
    points, levels, log2_size, base, finest, width = (
        (256, 4, 10, 4, 64, 16) if smoke else (65536, 16, 16, 16, 2048, 64)
    )
    dtype = low_precision(device)
    grid = HashGrid(levels, log2_size, base, finest).to(device).eval()  # fp32
    mlp = nn.Sequential(
        nn.Linear(levels * FEATURES, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
        nn.Linear(width, 16),
    ).to(device, dtype).eval()  # fmt: skip

    @torch.no_grad()
    def step(x: Tensor) -> tuple[Tensor, Tensor]:
        out = mlp(grid(x).to(dtype)).float()
        return out[:, 0].exp(), out

    inputs = [(torch.rand(points, 3, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"instant-NGP hash grid: {levels} levels x {FEATURES} features, 2^{log2_size} entries, "
        f"res {base}..{finest}, 8-corner gather + trilinear (fp32) + {width}-wide MLP, "
        f"{points} points",
        [grid, mlp],
    )


if __name__ == "__main__":
    main(build, __doc__)
