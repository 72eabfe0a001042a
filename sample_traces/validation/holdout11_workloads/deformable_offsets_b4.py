"""Deformable sampling over a feature map: 4 maps of 128 x 64 x 64, bf16 (eleventh hold-out),
through 4 layers, each of which learns where to look. Per layer: a conv3x3 128->128 and
ReLU, then a conv3x3 128->8 that predicts a per-pixel (x, y) offset for each of 4 channel
groups of 32 channels; the offsets are squashed with ``tanh`` to at most 4 pixels, scaled to
grid units and added to a base grid of pixel centres (made at build, in [-1, 1]); the input
map, viewed as 16 maps of 32 channels, is resampled at those points with
``F.grid_sample`` (bilinear, zero padding, ``align_corners=False``) and the result goes
through a conv1x1 128->128 added to the layer's input. Every shape is fixed (the offsets
move the sampling points, not the sizes). Returns 4 x 128 x 64 x 64.

    traceinspect profile deformable_offsets_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

MAX_SHIFT = 4.0  # pixels


class DeformableLayer(nn.Module):
    def __init__(self, c: int, groups: int, size: int) -> None:
        super().__init__()
        self.groups = groups
        self.features = nn.Conv2d(c, c, 3, padding=1)
        self.offsets = nn.Conv2d(c, 2 * groups, 3, padding=1)
        nn.init.normal_(self.offsets.weight, std=0.01)
        self.mix = nn.Conv2d(c, c, 1)
        centres = (torch.arange(size) + 0.5) * (2.0 / size) - 1.0
        gy, gx = torch.meshgrid(centres, centres, indexing="ij")
        self.register_buffer("base", torch.stack((gx, gy), dim=-1))  # (H, W, 2): x, y
        self.scale = MAX_SHIFT * 2.0 / size  # pixels to grid units

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        g = self.groups
        off = torch.tanh(self.offsets(torch.relu(self.features(x)))) * self.scale
        grid = self.base + off.view(b, g, 2, h, w).permute(0, 1, 3, 4, 2)  # (B, G, H, W, 2)
        sampled = F.grid_sample(
            x.reshape(b * g, c // g, h, w),
            grid.reshape(b * g, h, w, 2),
            mode="bilinear",
            padding_mode="zeros",
            align_corners=False,
        )
        return x + self.mix(sampled.view(b, c, h, w))


def build(device: torch.device, smoke: bool) -> Built:
    c, groups, size, layers, batch = (16, 4, 8, 4, 2) if smoke else (128, 4, 64, 4, 4)
    dtype = low_precision(device)
    model = nn.Sequential(*(DeformableLayer(c, groups, size) for _ in range(layers)))
    model = model.to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, size, size, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"deformable sampling, {layers} layers x {c} ch ({groups} offset groups), "
        f"batch {batch} x {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
