"""An N-BEATS generic forecaster forward at batch 256 (thirty-fourth hold-out): 256 series,
a lookback window of 96 values and a 24-value horizon, 3 stacks of 4 blocks (12 blocks, no
weight sharing). Each block is a fully connected stack of 4 x (Linear -> 512 + ReLU)
(96 -> 512, then 512 -> 512 three times) and one ``Linear(512, 96 + 24)`` to theta, split
into the backcast (96) and the forecast (24) (the generic basis, as one linear map). Blocks
are chained by doubly residual stacking: each block reads the residual left by the one
before it (the input minus every backcast so far) and the forecasts of all 12 blocks are
summed. fp32 (explicitly, also on a GPU), eval mode, no gradients: 60 small GEMMs of 256
rows in a chain, with the residual subtractions and forecast additions between them.
Input: the lookback windows (256, 96) fp32. Returns the forecast (256, 24).

    traceinspect profile nbeats_stack_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

STACKS, BLOCKS, FC_LAYERS = 3, 4, 4


class Block(nn.Module):
    def __init__(self, lookback: int, horizon: int, width: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for i in range(FC_LAYERS):
            layers += [nn.Linear(lookback if i == 0 else width, width), nn.ReLU()]
        self.fc = nn.Sequential(*layers)
        self.theta = nn.Linear(width, lookback + horizon)
        self.lookback = lookback

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        theta = self.theta(self.fc(x))
        return theta[:, : self.lookback], theta[:, self.lookback :]


class NBeats(nn.Module):
    def __init__(self, lookback: int, horizon: int, width: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(lookback, horizon, width) for _ in range(STACKS * BLOCKS))

    def forward(self, x: Tensor) -> Tensor:
        residual, forecast = x, None
        for block in self.blocks:
            backcast, block_forecast = block(residual)
            residual = residual - backcast
            forecast = block_forecast if forecast is None else forecast + block_forecast
        assert forecast is not None
        return forecast


def build(device: torch.device, smoke: bool) -> Built:
    batch, lookback, horizon, width = (8, 16, 4, 32) if smoke else (256, 96, 24, 512)
    model = NBeats(lookback, horizon, width).to(device, torch.float32).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, lookback, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"N-BEATS generic, {STACKS} stacks x {BLOCKS} blocks, {FC_LAYERS} x FC {width}, "
        f"lookback {lookback} -> horizon {horizon}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
