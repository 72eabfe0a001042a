"""Bilinear pooling for fine-grained recognition (twenty-third hold-out): two feature maps
of 32 images, 512 channels over 14 x 14 positions, fp32 — their outer product averaged
over positions (a batched 512 x 196 @ 196 x 512 matmul), the signed square root, an L2
normalization over the 262,144 values, and a linear classifier 262,144 -> 200: one large
batched GEMM, elementwise kernels over 8.4 M values, a norm and a wide, short classifier
GEMM.

    traceinspect profile bilinear_pool_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, hw, classes = (2, 8, 9, 5) if smoke else (32, 512, 196, 200)
    head = nn.Linear(c * c, classes).to(device).eval()

    @torch.no_grad()
    def step(a: Tensor, b: Tensor) -> Tensor:
        outer = torch.bmm(a, b.transpose(1, 2)) / a.shape[-1]  # batch x c x c
        outer = torch.sign(outer) * torch.sqrt(outer.abs() + 1e-10)
        return head(F.normalize(outer.flatten(1), dim=1))

    inputs = [
        (torch.randn(batch, c, hw, device=device), torch.randn(batch, c, hw, device=device))
        for _ in range(2)
    ]
    return Built(step, inputs, f"bilinear pooling {c}x{c} over {hw}, b{batch}", [head])


if __name__ == "__main__":
    main(build, __doc__)
