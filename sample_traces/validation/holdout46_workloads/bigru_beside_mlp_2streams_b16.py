"""A bidirectional GRU on one side stream beside an MLP on another, joined on the current
stream (forty-sixth hold-out: a cuDNN bidirectional RNN beside GEMMs): 16 utterances of 80
frames of 80 filterbank features through a 1-layer bidirectional ``nn.GRU(80, 384)``
(batch_first; its mean over time), beside 16 speaker vectors of 512 through three
``Linear(512, 1024)``/``Linear(1024, 1024)`` + GELU layers. After the join the two are
concatenated, (16, 1792), and scored by ``Linear(1792, 64)``. bf16 on a GPU, eval mode, no
gradients. Inputs: the (16, 80, 80) frames and the (16, 512) speaker vectors. Returns (16, 64).

    traceinspect profile bigru_beside_mlp_2streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, feats, hidden, spk, width = (
        (2, 4, 8, 8, 8, 16) if smoke else (16, 80, 80, 384, 512, 1024)
    )
    dtype = low_precision(device)
    gru = nn.GRU(feats, hidden, 1, batch_first=True, bidirectional=True)
    mlp = nn.Sequential(
        nn.Linear(spk, width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.GELU(),
        nn.Linear(width, width),
        nn.GELU(),
    )
    head = nn.Linear(2 * hidden + width, 64)
    model = nn.ModuleList([gru, mlp, head]).to(device, dtype).eval()
    gru.flatten_parameters()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(x: Tensor, s: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: gru(x)[0].mean(1), lambda: mlp(s)])
        return head(torch.cat([a, b], dim=1))

    inputs = [
        (
            torch.randn(batch, frames, feats, device=device, dtype=dtype),
            torch.randn(batch, spk, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"BiGRU {hidden} over {frames} frames beside a 3-layer MLP {width} on 2 side streams, "
        f"b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
