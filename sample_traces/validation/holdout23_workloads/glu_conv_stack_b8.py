"""A gated convolutional language-model stack (Dauphin et al., 2017) (twenty-third hold-out):
6 residual blocks over 8 sequences of 512 tokens, 256 channels, fp32 — each a causal
Conv1d 256 -> 512 with kernel 4 (left-padded), a GLU (one half gates the other through a
sigmoid) and the residual add, then a LayerNorm over channels. Convolutions, small
elementwise kernels and transposes for the norm.

    traceinspect profile glu_conv_stack_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

BLOCKS, KERNEL = 6, 4


class GluBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv, self.norm = nn.Conv1d(c, 2 * c, KERNEL), nn.LayerNorm(c)

    def forward(self, x: Tensor) -> Tensor:
        h = F.glu(self.conv(F.pad(x, (KERNEL - 1, 0))), dim=1)
        return self.norm((x + h).transpose(1, 2)).transpose(1, 2)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, n = (2, 8, 16) if smoke else (8, 256, 512)
    model = nn.Sequential(*[GluBlock(c) for _ in range(BLOCKS)]).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, n, device=device),) for _ in range(2)]
    return Built(step, inputs, f"{BLOCKS} GLU conv blocks {c}ch x {n}, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
