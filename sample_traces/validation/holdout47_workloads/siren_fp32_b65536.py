"""A SIREN implicit network evaluated on 65,536 2-D coordinates in fp32 (forty-seventh
hold-out: sine-activated coordinate MLP, wide fp32 GEMMs each followed by two elementwise
passes): ``Linear(2, 256)``, then 4 hidden ``Linear(256, 256)`` layers, each output scaled by
omega_0 = 30 and passed through ``sin`` (a multiply and a sine kernel a layer), then
``Linear(256, 3)`` to RGB. SIREN initialization (first layer U(-1/2, 1/2), later layers
U(-sqrt(6/256)/30, +)). fp32 with TF32 left off (torch's default for matmuls), eval mode, no
gradients, one stream. Some 35 GFLOP. Input: (65536, 2) coordinates in [-1, 1]. Returns
(65536, 3).

    traceinspect profile siren_fp32_b65536.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

OMEGA = 30.0


class Siren(nn.Module):
    def __init__(self, din: int, hidden: int, layers: int, dout: int) -> None:
        super().__init__()
        self.first = nn.Linear(din, hidden)
        self.hidden = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.out = nn.Linear(hidden, dout)
        with torch.no_grad():
            self.first.weight.uniform_(-1 / din, 1 / din)
            bound = math.sqrt(6 / hidden) / OMEGA
            for lin in [*self.hidden, self.out]:
                lin.weight.uniform_(-bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        h = torch.sin(OMEGA * self.first(x))
        for lin in self.hidden:
            h = torch.sin(OMEGA * lin(h))
        return self.out(h)


def build(device: torch.device, smoke: bool) -> Built:
    points, hidden, layers = (64, 16, 2) if smoke else (65536, 256, 4)
    model = Siren(2, hidden, layers, 3).to(device).eval()

    @torch.no_grad()
    def step(coords: Tensor) -> Tensor:
        return model(coords)

    inputs = [(torch.rand(points, 2, device=device) * 2 - 1,) for _ in range(2)]
    description = f"fp32 SIREN 2-{hidden}x{layers + 1}-3 on {points} coordinates"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
