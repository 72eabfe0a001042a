"""A ConvLSTM cell unrolled over 8 frames (Shi et al., 2015) (twenty-sixth hold-out): 4 clips
of 32 x 32 frames, 16 input and 64 hidden channels, fp32. Each step concatenates the frame
with the hidden state, one 3 x 3 convolution 80 -> 256 gives the four gates, and the cell
update runs as separate sigmoid, tanh, multiply and add kernels. Eight convolutions and
about 100 elementwise kernels per step, one stream.

    traceinspect profile convlstm_loop_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


class ConvLSTMCell(nn.Module):
    def __init__(self, c_in: int, hidden: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.gates = nn.Conv2d(c_in + hidden, 4 * hidden, 3, padding=1)

    def forward(self, x: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        i, f, o, g = self.gates(torch.cat([x, h], dim=1)).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


def build(device: torch.device, smoke: bool) -> Built:
    batch, frames, c_in, hidden, side = (2, 2, 2, 4, 8) if smoke else (4, 8, 16, 64, 32)
    cell = ConvLSTMCell(c_in, hidden).to(device).eval()

    @torch.no_grad()
    def step(clip: Tensor) -> Tensor:
        b = clip.shape[0]
        h = clip.new_zeros(b, hidden, side, side)
        c = torch.zeros_like(h)
        for t in range(clip.shape[1]):
            h, c = cell(clip[:, t], h, c)
        return h

    inputs = [(torch.randn(batch, frames, c_in, side, side, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"ConvLSTM {c_in}->{hidden}ch {side}x{side}, {frames} frames, b{batch}",
        [cell],
    )


if __name__ == "__main__":
    main(build, __doc__)
