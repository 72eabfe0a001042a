"""SSD300-style detection head over 4 images' 6 feature maps of 256 channels (38 x 38,
19 x 19, 10 x 10, 5 x 5, 3 x 3, 1 x 1, given as the step's 6 inputs), bf16 (seventh
hold-out): per map a conv3x3 256->16 (4 anchors x 4 box offsets) and a conv3x3 256->84
(4 anchors x 21 classes), each permuted to channels-last and reshaped to one row per anchor,
the rows of all maps concatenated (7760 anchors), a softmax over the 21 classes, and the
offsets decoded against fixed prior boxes (made at build with tensor arithmetic: per cell
centre, scales 0.1-0.9 linear over the maps, aspect ratios 1, 2, 1/2 and a sqrt(s_k s_k+1)
square; variances 0.1 and 0.2): centre = prior centre + 0.1 x offset x prior size, size =
prior size x exp(0.2 x offset), then corners (x0, y0, x1, y1). Returns the boxes (4 x 7760 x
4) and the class probabilities (4 x 7760 x 21). No non-maximum suppression.

    traceinspect profile ssd_heads_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

ANCHORS, CLASSES = 4, 21


def priors(sizes: tuple[int, ...], device: torch.device) -> Tensor:
    """(anchors, 4) prior boxes (cx, cy, w, h) in the order the heads' rows come out."""
    scales = torch.linspace(0.1, 0.9, len(sizes) + 1, device=device)
    out = []
    for k, f in enumerate(sizes):
        centres = (torch.arange(f, device=device, dtype=torch.float32) + 0.5) / f
        cy, cx = torch.meshgrid(centres, centres, indexing="ij")
        s, s_next = scales[k], scales[k + 1]
        r = math.sqrt(2.0)
        wh = torch.stack(
            [
                torch.stack([s, s]),
                torch.stack([s * r, s / r]),
                torch.stack([s / r, s * r]),
                (s * s_next).sqrt().expand(2),
            ]
        )  # (ANCHORS, 2)
        centre = torch.stack([cx, cy], dim=-1).reshape(-1, 1, 2).expand(-1, ANCHORS, 2)
        out.append(torch.cat([centre, wh.expand_as(centre)], dim=-1).reshape(-1, 4))
    return torch.cat(out).clamp(0, 1)


class SSDHeads(nn.Module):
    def __init__(self, c: int, maps: int) -> None:
        super().__init__()
        self.loc = nn.ModuleList(nn.Conv2d(c, ANCHORS * 4, 3, padding=1) for _ in range(maps))
        self.conf = nn.ModuleList(
            nn.Conv2d(c, ANCHORS * CLASSES, 3, padding=1) for _ in range(maps)
        )

    def forward(self, maps: tuple[Tensor, ...], prior: Tensor) -> tuple[Tensor, Tensor]:
        b = maps[0].shape[0]
        locs, confs = [], []
        for x, loc, conf in zip(maps, self.loc, self.conf, strict=True):
            locs.append(loc(x).permute(0, 2, 3, 1).reshape(b, -1, 4))
            confs.append(conf(x).permute(0, 2, 3, 1).reshape(b, -1, CLASSES))
        offsets = torch.cat(locs, dim=1).float()
        scores = torch.softmax(torch.cat(confs, dim=1).float(), dim=-1)
        centre = prior[:, :2] + 0.1 * offsets[..., :2] * prior[:, 2:]
        size = prior[:, 2:] * torch.exp(0.2 * offsets[..., 2:])
        boxes = torch.cat([centre - size / 2, centre + size / 2], dim=-1)
        return boxes, scores


def build(device: torch.device, smoke: bool) -> Built:
    c, sizes, batch = (16, (8, 4, 2, 1), 2) if smoke else (256, (38, 19, 10, 5, 3, 1), 4)
    dtype = low_precision(device)
    model = SSDHeads(c, len(sizes)).to(device=device, dtype=dtype).eval()
    prior = priors(sizes, device)

    @torch.no_grad()
    def step(*maps: Tensor) -> tuple[Tensor, Tensor]:
        return model(maps, prior)

    inputs = [
        tuple(torch.randn(batch, c, f, f, device=device, dtype=dtype) for f in sizes)
        for _ in range(2)
    ]
    description = f"SSD heads over {len(sizes)} maps of {c} channels, {len(prior)} anchors"
    return Built(step, inputs, f"{description}, batch {batch}", [model, prior])


if __name__ == "__main__":
    main(build, __doc__)
