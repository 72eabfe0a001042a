"""A step fed twelve inputs (eighth hold-out): twelve feature tensors of different widths
(batch 32; 8 MB in all, bf16) concatenated and passed through a 3-layer MLP (GELU) to 256
outputs. The inputs are the step's arguments, so a graph replay first copies all twelve into
its static inputs.

    traceinspect profile input_heavy_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

WIDTHS = (4096, 2048, 2048, 1024, 1024, 1024, 512, 512, 256, 256, 128, 64)


def build(device: torch.device, smoke: bool) -> Built:
    scale, batch, hidden = (64, 2, 32) if smoke else (1, 32, 2048)
    widths = [max(1, w // scale) for w in WIDTHS]
    dtype = low_precision(device)
    batch_rows = batch * 8  # 8 rows of every feature per sample: ~8 MB of inputs in all
    mlp = nn.Sequential(
        nn.Linear(sum(widths), hidden),
        nn.GELU(),
        nn.Linear(hidden, hidden),
        nn.GELU(),
        nn.Linear(hidden, 256),
    )
    mlp = mlp.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(*features: Tensor) -> Tensor:
        return mlp(torch.cat(features, dim=1))

    inputs = [
        tuple(torch.randn(batch_rows, w, device=device, dtype=dtype) for w in widths)
        for _ in range(2)
    ]
    return Built(step, inputs, f"12 inputs ({sum(widths)} wide) into a 3-layer MLP", [mlp])


if __name__ == "__main__":
    main(build, __doc__)
