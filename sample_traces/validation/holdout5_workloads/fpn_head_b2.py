"""RetinaNet-style detection head over an FPN: 4 feature maps (2 x 256 x {64, 32, 16, 8}^2)
given as 4 inputs, a tower of 4 Conv3x3-GroupNorm(32)-ReLU shared by the levels, then a
class conv (256 -> 9 anchors x 80 = 720) and a box conv (256 -> 9 x 4 = 36) per level, the
outputs flattened to (batch, anchors, 80) and (batch, anchors, 4) and concatenated over the
levels, bf16 (fifth hold-out).

    traceinspect profile fpn_head_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

ANCHORS, CLASSES = 9, 80


class Head(nn.Module):
    def __init__(self, c: int, groups: int, depth: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(depth):
            layers += [nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(groups, c), nn.ReLU()]
        self.tower = nn.Sequential(*layers)
        self.cls = nn.Conv2d(c, ANCHORS * CLASSES, 3, padding=1)
        self.box = nn.Conv2d(c, ANCHORS * 4, 3, padding=1)

    def forward(self, *levels: Tensor) -> tuple[Tensor, Tensor]:
        classes, boxes = [], []
        for x in levels:
            t = self.tower(x)
            b = x.shape[0]
            classes.append(self.cls(t).permute(0, 2, 3, 1).reshape(b, -1, CLASSES))
            boxes.append(self.box(t).permute(0, 2, 3, 1).reshape(b, -1, 4))
        return torch.cat(classes, dim=1), torch.cat(boxes, dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    c, groups, top, batch = (32, 8, 8, 1) if smoke else (256, 32, 64, 2)
    dtype = low_precision(device)
    model = Head(c, groups, 4).to(device=device, dtype=dtype).eval()
    sizes = [top >> i for i in range(4)]

    @torch.no_grad()
    def step(*levels: Tensor) -> tuple[Tensor, Tensor]:
        return model(*levels)

    inputs = [
        tuple(torch.randn(batch, c, s, s, device=device, dtype=dtype) for s in sizes)
        for _ in range(2)
    ]
    return Built(step, inputs, f"FPN head C{c}, levels {sizes}, batch {batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
