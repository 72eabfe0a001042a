"""A Kolmogorov-Arnold network (Liu et al., 2024), written as efficient-kan writes its layers
(twenty-fourth hold-out): 3 layers 256 -> 256 over a batch of 64, fp32. Each layer
evaluates the cubic B-spline basis of every input over 8 grid intervals on [-1, 1] (15
knots, 11 basis functions) by the Cox-de Boor recursion in elementwise torch ops — the
order-0 indicator from two comparisons, then three rounds of differences, divisions,
products and a sum over 64 x 256 x 14 values — then an ``einsum`` of the basis with the
spline coefficients (256 x 256 x 11) plus a base branch, SiLU of the input through an
``nn.Linear``. Some 30 small elementwise kernels and two GEMMs per layer; one stream.

    traceinspect profile kan_spline_layer_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, GRID, ORDER = 3, 8, 3


class KanLayer(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        h = 2 / GRID
        knots = torch.arange(-ORDER, GRID + ORDER + 1, dtype=torch.float32) * h - 1
        self.register_buffer("grid", knots.expand(d_in, -1).contiguous())
        self.base = nn.Linear(d_in, d_out)
        self.coeff = nn.Parameter(0.1 * torch.randn(d_out, d_in, GRID + ORDER))

    def bases(self, x: Tensor) -> Tensor:
        g, x = self.grid, x.unsqueeze(-1)
        b = ((x >= g[:, :-1]) & (x < g[:, 1:])).to(x.dtype)
        for k in range(1, ORDER + 1):
            left = (x - g[:, : -(k + 1)]) / (g[:, k:-1] - g[:, : -(k + 1)]) * b[:, :, :-1]
            right = (g[:, k + 1 :] - x) / (g[:, k + 1 :] - g[:, 1:-k]) * b[:, :, 1:]
            b = left + right
        return b  # batch x d_in x (GRID + ORDER)

    def forward(self, x: Tensor) -> Tensor:
        spline = torch.einsum("bic,oic->bo", self.bases(x), self.coeff)
        return self.base(F.silu(x)) + spline


def build(device: torch.device, smoke: bool) -> Built:
    batch, d = (2, 8) if smoke else (64, 256)
    model = nn.Sequential(*[KanLayer(d, d) for _ in range(LAYERS)]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.rand(batch, d, device=device) * 2 - 1,) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{LAYERS} KAN layers {d}, cubic splines on {GRID} intervals, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
