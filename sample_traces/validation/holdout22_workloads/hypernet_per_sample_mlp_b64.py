"""A hypernetwork (twenty-second hold-out): a conditioning MLP (32 -> 256 -> weights) emits
each sample's own two-layer MLP, 64 -> 64 -> 64 with biases, which then runs on that
sample's 16 points through batched matmuls (``baddbmm``) with a ReLU between. Batch 64
conditions, fp32: two GEMMs that generate 8,320 weights per sample, then per-sample small
GEMMs and the reshapes between.

    traceinspect profile hypernet_per_sample_mlp_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, cond, width, points = (2, 4, 8, 3) if smoke else (64, 32, 64, 16)
    per_layer = width * width + width
    hyper = nn.Sequential(nn.Linear(cond, 256), nn.ReLU(), nn.Linear(256, 2 * per_layer))
    hyper = hyper.to(device).eval()

    def split(flat: Tensor) -> tuple[Tensor, Tensor]:
        w = flat[:, : width * width].reshape(-1, width, width) / width**0.5
        return w, flat[:, width * width :].unsqueeze(1)

    @torch.no_grad()
    def step(z: Tensor, x: Tensor) -> Tensor:
        params = hyper(z)
        w1, b1 = split(params[:, :per_layer])
        w2, b2 = split(params[:, per_layer:])
        h = torch.relu(torch.baddbmm(b1, x, w1))
        return torch.baddbmm(b2, h, w2)

    inputs = [
        (torch.randn(batch, cond, device=device), torch.randn(batch, points, width, device=device))
        for _ in range(2)
    ]
    return Built(step, inputs, f"hypernetwork b{batch}: per-sample MLP {width}x{width}", [hyper])


if __name__ == "__main__":
    main(build, __doc__)
