"""The FCOS detection head (Tian et al., 2019) on the FPN features of 2 images of 768 x 1280, its
classification tower on one side stream and its regression tower on another (fiftieth hold-out:
anchor-free dense detection, two equal branches of convolutions each followed by a GroupNorm and a
ReLU of a few hundred to a few thousand blocks, five pyramid levels per layer, the decoding after
the join), as the improved FCOS of the authors' code lays it out (centerness on the regression
tower, normalized regression targets): the backbone and FPN are not run; the five levels P3 to P7,
(2, 256, 96, 160), (2, 256, 48, 80), (2, 256, 24, 40), (2, 256, 12, 20) and (2, 256, 6, 10), are
the inputs. Each tower is 4 x (``Conv2d(256, 256, 3, padding 1)`` + ``GroupNorm(32, 256)`` +
ReLU), shared across the levels and run level by level (60 kernels a tower, some 96 GMAC). Side
stream 1: the classification tower and ``Conv2d(256, 80, 3, padding 1)`` (the logits, bias set to
the prior -log(99)). Side stream 2: the regression tower, ``Conv2d(256, 4, 3, padding 1)`` times a
learned per-level scale, ReLU, times the level's stride (8 to 128), and ``Conv2d(256, 1, 3,
padding 1)`` for the centerness. After the join, on the current stream: per level the maps
flattened to (2, H W, .), the scores sqrt(sigmoid(cls) x sigmoid(centerness)), the boxes decoded
from the level's location grid (the centres of the stride cells, made at build) as (x - l, y - t,
x + r, y + b); the levels concatenated (20,460 locations, 1.64 M class scores an image) and
``topk`` 1,000 of the flattened scores per image, the boxes gathered by location and the labels by
class. Non-maximum suppression is left out (it has data-dependent shapes). bf16 on a GPU, NCHW
(GroupNorm's layout), eval mode, no gradients. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). Inputs: the five
FPN levels as above. Returns the top-1,000 scores (2, 1000), their labels (2, 1000) int64 and
boxes (2, 1000, 4).

    traceinspect profile fcos_head_towers_2streams_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

STRIDES, CLASSES, GROUPS, TOWER = (8, 16, 32, 64, 128), 80, 32, 4


def tower(c: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for _ in range(TOWER):
        layers += [nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(GROUPS, c), nn.ReLU()]
    return nn.Sequential(*layers)


def locations(h: int, w: int, stride: int) -> Tensor:
    """The centres of a level's stride cells, (h w, 2) as (x, y)."""
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    return torch.stack([xs.flatten(), ys.flatten()], dim=1).float() * stride + stride // 2


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width, c, top_k = (1, 256, 256, 32, 50) if smoke else (2, 768, 1280, 256, 1000)
    classes = 8 if smoke else CLASSES
    dtype = low_precision(device)
    cls_tower, reg_tower = tower(c), tower(c)
    cls_logits = nn.Conv2d(c, classes, 3, padding=1)
    nn.init.constant_(cls_logits.bias, -math.log(99))
    bbox_pred, centerness = nn.Conv2d(c, 4, 3, padding=1), nn.Conv2d(c, 1, 3, padding=1)
    scales = nn.Parameter(torch.ones(len(STRIDES)))
    head = nn.ModuleList([cls_tower, reg_tower, cls_logits, bbox_pred, centerness])
    head = head.to(device=device, dtype=dtype).eval()
    scales = scales.to(device=device, dtype=dtype)
    sizes = [(height // s, width // s) for s in STRIDES]
    grid = torch.cat([locations(h, w, s) for (h, w), s in zip(sizes, STRIDES, strict=True)])
    grid = grid.to(device)
    streams = side_streams(device, 2)

    def classify(levels: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        return tuple(cls_logits(cls_tower(x)) for x in levels)

    def regress(levels: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        outs = []
        for i, x in enumerate(levels):
            t = reg_tower(x)
            outs.append(torch.relu(bbox_pred(t) * scales[i]) * STRIDES[i])
            outs.append(centerness(t))
        return tuple(outs)

    def flat(x: Tensor) -> Tensor:
        return x.flatten(2).transpose(1, 2)  # (b, h w, channels)

    @torch.no_grad()
    def step(*levels: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        cls, reg = fork_join(device, streams, [lambda: classify(levels), lambda: regress(levels)])
        logits = torch.cat([flat(x) for x in cls], dim=1).float()
        ltrb = torch.cat([flat(x) for x in reg[0::2]], dim=1).float()
        ctr = torch.cat([flat(x) for x in reg[1::2]], dim=1).float()
        scores = torch.sqrt(torch.sigmoid(logits) * torch.sigmoid(ctr))
        boxes = torch.cat([grid - ltrb[..., :2], grid + ltrb[..., 2:]], dim=-1)
        top, idx = scores.flatten(1).topk(top_k, dim=1)
        where, labels = idx // classes, idx % classes
        picked = torch.gather(boxes, 1, where[..., None].expand(-1, -1, 4))
        return top, labels, picked

    inputs = [
        tuple(torch.randn(batch, c, h, w, device=device, dtype=dtype) for h, w in sizes)
        for _ in range(2)
    ]
    description = (
        f"FCOS head: cls and reg towers ({TOWER} conv+GN+ReLU) over P3-P7 of {height}x{width}, "
        f"top-{top_k}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [head, scales, grid])


if __name__ == "__main__":
    main(build, __doc__)
