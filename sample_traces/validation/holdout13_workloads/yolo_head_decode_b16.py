"""A YOLOv5-style detection head and box decode on 16 images of 640 x 640, the 1x1 output
convolutions in bf16 and the decode in fp32, no NMS (thirteenth hold-out), as
ultralytics' ``Detect.forward`` in inference mode followed by the score and box
conversion before NMS. Inputs: the neck's three feature maps, 16 x 128 x 80 x 80 (stride
8), 16 x 256 x 40 x 40 (stride 16) and 16 x 512 x 20 x 20 (stride 32). Per scale: a
conv1x1 to 3 anchors x (5 + 80 classes) = 255 channels, viewed as 16 x 3 x 85 x ny x nx and
permuted to 16 x 3 x ny x nx x 85 (a copy), ``sigmoid``, then xy = (2 sigmoid - 0.5 +
grid) x stride and wh = (2 sigmoid)^2 x anchor (the cell grids and the YOLOv5 COCO anchors
in pixels, made at build), the 85 values put back together with ``torch.cat`` and
flattened to 16 x (3 ny nx) x 85; the three scales concatenated: 25,200 candidates per
image. Then the boxes converted from centre-size to corners (x1 y1 x2 y2), the class scores
multiplied by the objectness and the best class taken with ``max`` (values and indices, no
data-dependent shapes). Some 40 kernels, most of them bandwidth-bound over the 16 x 25,200
x 85 fp32 candidates (137 MB), so the step is largely GPU-bound. Returns the boxes (16 x
25,200 x 4), the scores (16 x 25,200) and the class ids (16 x 25,200).

    traceinspect profile yolo_head_decode_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES, ANCHORS_PER_CELL = 80, 3
STRIDES = (8, 16, 32)
ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, widths = (2, 64, (8, 16, 32)) if smoke else (16, 640, (128, 256, 512))
    dtype = low_precision(device)
    no = CLASSES + 5
    convs = nn.ModuleList(nn.Conv2d(c, ANCHORS_PER_CELL * no, 1) for c in widths)
    convs = convs.to(device=device, dtype=dtype).eval()
    grids, anchor_grids = [], []
    for stride, anchors in zip(STRIDES, ANCHORS, strict=True):
        ny = nx = image // stride
        yv, xv = torch.meshgrid(
            torch.arange(ny, device=device, dtype=torch.float32),
            torch.arange(nx, device=device, dtype=torch.float32),
            indexing="ij",
        )
        grids.append(torch.stack((xv, yv), -1).view(1, 1, ny, nx, 2))
        wh = torch.tensor(anchors, device=device, dtype=torch.float32).view(1, -1, 1, 1, 2)
        anchor_grids.append(wh.expand(1, ANCHORS_PER_CELL, ny, nx, 2).contiguous())

    @torch.no_grad()
    def step(p3: Tensor, p4: Tensor, p5: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        out = []
        for i, feat in enumerate((p3, p4, p5)):
            b, _, ny, nx = feat.shape
            y = convs[i](feat).view(b, ANCHORS_PER_CELL, no, ny, nx)
            y = y.permute(0, 1, 3, 4, 2).contiguous().float().sigmoid()
            xy, wh, conf = y.split((2, 2, no - 4), -1)
            xy = (xy * 2 - 0.5 + grids[i]) * STRIDES[i]
            wh = (wh * 2) ** 2 * anchor_grids[i]
            out.append(torch.cat((xy, wh, conf), -1).view(b, -1, no))
        pred = torch.cat(out, 1)  # (B, candidates, 85)
        xy, wh = pred[..., :2], pred[..., 2:4]
        boxes = torch.cat((xy - wh / 2, xy + wh / 2), -1)
        scores, classes = (pred[..., 5:] * pred[..., 4:5]).max(-1)
        return boxes, scores, classes

    inputs = [
        tuple(
            torch.randn(batch, c, image // s, image // s, device=device, dtype=dtype)
            for c, s in zip(widths, STRIDES, strict=True)
        )
        for _ in range(2)
    ]
    description = (
        f"YOLOv5 Detect head + decode, {CLASSES} classes, 3 scales of a {image}x{image} image, "
        f"batch {batch}"
    )
    return Built(step, inputs, description, [convs, *grids, *anchor_grids])


if __name__ == "__main__":
    main(build, __doc__)
