"""The two field queries of a proposal-sampled NeRF (nerfacto-style, after mip-NeRF 360's
proposal network) with instant-NGP's multiresolution hash encoding (Mueller et al., 2022)
written in plain PyTorch the way the pure-PyTorch ports loop over it (HashNeRF-pytorch's
``HashEmbedder``: one ``nn.Embedding`` table per level, a Python loop over the levels, the
corner indices hashed with integer tensor ops, the corner features gathered, trilinear
interpolation), each field on its own side stream (fifty-third hold-out: two concurrent chains
of some 260 small memory-bound kernels each, int64 hashing over (65536, 8, 3) corner
coordinates and random gathers from a 4 MB table per level, then a tiny MLP). Each field: 16
levels of 2 features, a table of 2^19 entries per level (``nn.Embedding(2**19, 2)``, uniform in
+-1e-4 as instant-NGP and HashNeRF-pytorch initialize it), per-level growth so that level l has
scale base x b^l - 1 with b = (finest / base)^(1 / 15), instant-NGP's grid alignment (each point
at position x scale + 0.5, its cell the floor, its fraction the rest). Per level, with the
level's rule chosen in Python at build: the 8 corners of every cell as (65536, 8, 3) int64
coordinates; their table index, where the level's (resolution)^3 grid fits in 2^19 entries the
dense index x + y r + z r^2, else instant-NGP's spatial hash (x x 1) XOR (y x 2654435761) XOR (z
x 805459861) (int64 products, whose low bits are those of instant-NGP's uint32 arithmetic); both
masked to the low 19 bits; the corner features gathered by the level's ``nn.Embedding`` (65536,
8, 2); the trilinear weights (the product over the 3 axes of the fraction or 1 - the fraction,
one ``torch.where`` on a corner-bit mask); the weighted sum over the 8 corners (65536, 2). The 16
levels concatenated to (65536, 32) and instant-NGP's density MLP in bf16 on a GPU:
``Linear(32, 64)`` + ReLU, ``Linear(64, 64)`` + ReLU, ``Linear(64, 16)``; the first output
through exp in fp32 is the density, the other 15 the geometry features. Side stream 1, the
proposal field (resolutions 16 to 512: the 7 coarsest levels dense, as a proposal network's
coarser grid) on 65,536 proposal samples, returning only its densities; side stream 2, the fine
field (resolutions 16 to 2048, the 5 coarsest levels dense) on 65,536 other samples, its own
tables, returning densities and features. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Encoding in
fp32, eval mode, no gradients. Inputs: the proposal samples and the fine samples, (65536, 3)
fp32 each, uniform in the unit cube (the scene box, normalized), two input sets. Returns the
proposal densities (65536,), the fine densities (65536,) and the fine features (65536, 15).

    traceinspect profile hashgrid_nerf_2streams_b65536.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

FEATURES, PRIMES, INIT, OUT = 2, (1, 2654435761, 805459861), 1e-4, 16


class HashEmbedder(nn.Module):
    """The multiresolution hash encoding, one table and one pass per level."""

    def __init__(self, levels: int, log2_size: int, base: int, finest: int) -> None:
        super().__init__()
        size = 2**log2_size
        growth = math.exp((math.log(finest) - math.log(base)) / (levels - 1))
        self.scales = [base * growth**level - 1 for level in range(levels)]
        res = [math.ceil(s) + 1 for s in self.scales]
        self.dense = [r**3 <= size for r in res]
        self.mask = size - 1
        self.tables = nn.ModuleList(nn.Embedding(size, FEATURES) for _ in range(levels))
        for table in self.tables:
            nn.init.uniform_(table.weight, -INIT, INIT)
        self.register_buffer("primes", torch.tensor(PRIMES))
        self.register_buffer("strides", torch.tensor([[1, r, r * r] for r in res]))
        corners = torch.tensor([[(i >> k) & 1 for k in range(3)] for i in range(8)])
        self.register_buffer("corners", corners)  # (8, 3), bit k of corner i along axis k
        self.register_buffer("upper", corners.bool())

    def level(self, x: Tensor, level: int) -> Tensor:
        pos = x * self.scales[level] + 0.5  # (n, 3)
        cell = pos.floor()
        frac = (pos - cell)[:, None]  # (n, 1, 3)
        corner = cell.long()[:, None] + self.corners  # (n, 8, 3)
        if self.dense[level]:
            idx = (corner * self.strides[level]).sum(dim=-1)
        else:
            hx, hy, hz = (corner * self.primes).unbind(-1)
            idx = hx ^ hy ^ hz
        feats = self.tables[level](idx & self.mask)  # (n, 8, FEATURES)
        w = torch.where(self.upper, frac, 1 - frac).prod(dim=-1)  # (n, 8)
        return (feats * w[..., None]).sum(dim=1)

    def forward(self, x: Tensor) -> Tensor:
        return torch.cat([self.level(x, level) for level in range(len(self.tables))], dim=1)


class Field(nn.Module):
    def __init__(
        self, levels: int, log2_size: int, base: int, finest: int, width: int, dtype: torch.dtype
    ) -> None:
        super().__init__()
        self.encoding = HashEmbedder(levels, log2_size, base, finest)  # fp32
        self.mlp = nn.Sequential(
            nn.Linear(levels * FEATURES, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, OUT),
        ).to(dtype)  # fmt: skip
        self.dtype = dtype

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        out = self.mlp(self.encoding(x).to(self.dtype)).float()
        return out[:, 0].exp(), out[:, 1:]


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        points, levels, log2_size, base, proposal_finest, fine_finest, width = (
            256,
            4,
            10,
            4,
            32,
            64,
            16,
        )
    else:
        points, levels, log2_size, base, proposal_finest, fine_finest, width = (
            65536,
            16,
            19,
            16,
            512,
            2048,
            64,
        )
    dtype = low_precision(device)
    proposal = Field(levels, log2_size, base, proposal_finest, width, dtype).to(device).eval()
    fine = Field(levels, log2_size, base, fine_finest, width, dtype).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x_proposal: Tensor, x_fine: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        (density_p, _), (density_f, features_f) = fork_join(
            device, streams, [lambda: proposal(x_proposal), lambda: fine(x_fine)]
        )
        return density_p, density_f, features_f

    inputs = [
        (torch.rand(points, 3, device=device), torch.rand(points, 3, device=device))
        for _ in range(2)
    ]
    dense_p, dense_f = sum(proposal.encoding.dense), sum(fine.encoding.dense)
    description = (
        f"proposal + fine instant-NGP fields on 2 side streams: per-level hash encoding "
        f"({levels} levels x {FEATURES}, 2^{log2_size} entries, res {base}..{proposal_finest} "
        f"({dense_p} dense) and {base}..{fine_finest} ({dense_f} dense), int64 hash, "
        f"nn.Embedding gather, trilinear) + MLP {levels * FEATURES}-{width}-{width}-{OUT}, "
        f"{points} points each"
    )
    return Built(step, inputs, description, [proposal, fine])


if __name__ == "__main__":
    main(build, __doc__)
