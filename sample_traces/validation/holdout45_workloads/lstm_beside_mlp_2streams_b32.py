"""A cuDNN LSTM on one side stream beside an MLP on another, joined on the current stream
(forty-fifth hold-out: a recurrent kernel sequence beside GEMMs, the pairing whose replay the
schedule misses both ways): 32 sequences of 64 steps of 128 fp32 features through a 2-layer
``nn.LSTM(128, 384)``; beside it, 32 rows of 1024 context features through six
``Linear(1024, 1024)`` + ReLU. After the join the LSTM's last hidden state (32 x 384) and the
MLP's output are concatenated and go through ``Linear(1408, 10)``. TF32 stays as PyTorch sets
it by default. Eval mode, no gradients. Inputs: the (32, 64, 128) sequences and the (32, 1024)
context. Returns the (32, 10) logits.

    traceinspect profile lstm_beside_mlp_2streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, features, hidden, width, depth = (
        (2, 4, 8, 8, 16, 2) if smoke else (32, 64, 128, 384, 1024, 6)
    )
    lstm = nn.LSTM(features, hidden, num_layers=2, batch_first=True)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    mlp = nn.Sequential(*layers)
    head = nn.Linear(hidden + width, 10)
    model = nn.ModuleList([lstm, mlp, head]).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(seq: Tensor, context: Tensor) -> Tensor:
        h, m = fork_join(device, streams, [lambda: lstm(seq)[1][0][-1], lambda: mlp(context)])
        return head(torch.cat([h, m], dim=1))

    inputs = [
        (
            torch.randn(batch, steps, features, device=device),
            torch.randn(batch, width, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"LSTM {features}->{hidden}x2 over {steps} steps beside {depth}x Linear {width} on 2 "
        f"side streams, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
