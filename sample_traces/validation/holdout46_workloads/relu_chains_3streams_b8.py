"""Three hand-written recurrences on three side streams, joined on the current stream
(forty-sixth hold-out: dependent chains of small kernels side by side, written in PyTorch
rather than cuDNN): each h <- relu(h W + b) + x_t over 32 steps, batch 8, 768 wide, its own
weights and input, bf16 on a GPU (``addmm`` then ``relu`` then ``add``: three kernels a step).
After the join the three final states are averaged. No gradients. Inputs: three (8, 32, 768)
sequences. Returns (8, 768).

    traceinspect profile relu_chains_3streams_b8.py
"""

from __future__ import annotations

from collections.abc import Callable

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor

CHAINS = 3


def build(device: torch.device, smoke: bool) -> Built:
    batch, steps, width = (2, 4, 8) if smoke else (8, 32, 768)
    dtype = low_precision(device)
    ws = [torch.randn(width, width, device=device, dtype=dtype) * width**-0.5 for _ in range(3)]
    bs = [torch.randn(width, device=device, dtype=dtype) * 0.01 for _ in range(3)]
    streams = side_streams(device, CHAINS)

    def chain(i: int, x: Tensor) -> Callable[[], Tensor]:
        def run() -> Tensor:
            h = torch.zeros(batch, width, device=device, dtype=dtype)
            for t in range(steps):
                h = torch.relu(torch.addmm(bs[i], h, ws[i])) + x[:, t]
            return h

        return run

    @torch.no_grad()
    def step(*xs: Tensor) -> Tensor:
        return torch.stack(
            fork_join(device, streams, [chain(i, x) for i, x in enumerate(xs)])
        ).mean(0)

    inputs = [
        tuple(torch.randn(batch, steps, width, device=device, dtype=dtype) for _ in range(CHAINS))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"{CHAINS} relu recurrences ({steps} steps, {batch}x{width}) on {CHAINS} side streams",
        [ws, bs],
    )


if __name__ == "__main__":
    main(build, __doc__)
