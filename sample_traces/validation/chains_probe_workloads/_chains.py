"""Recurrent chains side by side, one per side stream (the chains probe): how the replay of
K dependent kernel chains scales with K, for hand-written recurrences (a small GEMM and one
elementwise kernel per step) and for cuDNN's LSTMs, uni- and bidirectional. Not a hold-out
set: it measures the pace of chains beside each other, which the BiLSTMs on side streams
(``holdout42``) suggest the schedule overrates.

Every branch gets its own input and weights, so nothing is shared but the device; the
branches' last hidden states are summed on the current stream after the join."""

from __future__ import annotations

from collections.abc import Callable

import torch
from _common import Built, low_precision
from _streams import fork_join, side_streams
from torch import Tensor, nn


def gemm_tanh_chains(device: torch.device, smoke: bool, chains: int) -> Built:
    """``chains`` recurrences h <- tanh(x_t U + h W) of 48 steps, batch 16, 512 wide (bf16):
    per step one GEMM (``addmm`` with the step's input projection as its bias) and one
    ``tanh``; the input projections of all steps are one GEMM up front."""
    batch, steps, width = (2, 4, 8) if smoke else (16, 48, 512)
    dtype = low_precision(device)
    u = [torch.randn(width, width, device=device, dtype=dtype) * width**-0.5 for _ in range(chains)]
    w = [torch.randn(width, width, device=device, dtype=dtype) * width**-0.5 for _ in range(chains)]
    streams = side_streams(device, chains)

    def branch(i: int, x: Tensor) -> Callable[[], Tensor]:
        def run() -> Tensor:
            proj = (x.reshape(batch * steps, width) @ u[i]).reshape(batch, steps, width)
            h = torch.zeros(batch, width, device=device, dtype=dtype)
            for t in range(steps):
                h = torch.tanh(torch.addmm(proj[:, t], h, w[i]))
            return h

        return run

    @torch.no_grad()
    def step(*xs: Tensor) -> Tensor:
        outs = fork_join(device, streams, [branch(i, x) for i, x in enumerate(xs)])
        return torch.stack(outs).sum(0)

    inputs = [
        tuple(torch.randn(batch, steps, width, device=device, dtype=dtype) for _ in range(chains))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{chains} GEMM+tanh recurrences ({steps} steps, {batch}x{width}) on {chains} side "
        f"stream(s)",
        [u, w],
    )


def cudnn_lstm_chains(
    device: torch.device, smoke: bool, chains: int, bidirectional: bool = False
) -> Built:
    """``chains`` 1-layer ``nn.LSTM(256, 512)`` (cuDNN, bf16) over 48 steps of batch 16, each
    on its own side stream; the last hidden state of each (both directions summed)."""
    batch, steps, features, hidden = (2, 4, 8, 8) if smoke else (16, 48, 256, 512)
    dtype = low_precision(device)
    lstms = [
        nn.LSTM(features, hidden, batch_first=True, bidirectional=bidirectional)
        .to(device=device, dtype=dtype)
        .eval()
        for _ in range(chains)
    ]
    streams = side_streams(device, chains)

    def branch(i: int, x: Tensor) -> Callable[[], Tensor]:
        return lambda: lstms[i](x)[1][0].sum(0)

    @torch.no_grad()
    def step(*xs: Tensor) -> Tensor:
        outs = fork_join(device, streams, [branch(i, x) for i, x in enumerate(xs)])
        return torch.stack(outs).sum(0)

    inputs = [
        tuple(
            torch.randn(batch, steps, features, device=device, dtype=dtype) for _ in range(chains)
        )
        for _ in range(2)
    ]
    kind = "BiLSTM" if bidirectional else "LSTM"
    return Built(
        step,
        inputs,
        f"{chains} cuDNN {kind} {features}->{hidden} ({steps} steps, b{batch}) on {chains} side "
        f"stream(s)",
        [nn.ModuleList(lstms)],
    )
