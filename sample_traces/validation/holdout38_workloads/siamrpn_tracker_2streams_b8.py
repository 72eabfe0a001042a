"""One SiamRPN tracking step (Li et al., 2018; the depthwise cross-correlation head of SiamRPN++,
as pysot's ``siamrpn_alex_dwxcorr`` model and ``SiamRPNTracker.track`` run it) for 8 targets
at once, with the template and the search branch of the shared backbone on two side streams
and the RPN head and the box selection after the join (thirty-eighth hold-out): bf16 on a GPU
(the post-processing in fp32), eval mode, no gradients. The backbone, pysot's AlexNet
(``AlexNetLegacy``): ``Conv2d(3, 96, 11, stride 2)`` + BatchNorm + 3 x 3 / 2 max pool + ReLU,
``Conv2d(96, 256, 5)`` + BatchNorm + 3 x 3 / 2 max pool + ReLU, ``Conv2d(256, 384, 3)`` +
BatchNorm + ReLU, ``Conv2d(384, 384, 3)`` + BatchNorm + ReLU, ``Conv2d(384, 256, 3)`` +
BatchNorm, no padding anywhere (BatchNorms in eval mode, running statistics set at build).
On one side stream it reads the 127 x 127 template crops (to 6 x 6), on the other the 255 x
255 search crops (to 22 x 22), both forked from the current stream and joined back with the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream, the DepthwiseRPN head with 5 anchors, one
DepthwiseXCorr for the classification (10 channels) and one for the box deltas (20): each a
``Conv2d(256, 256, 3, bias=False)`` + BatchNorm + ReLU on the template features (to 4 x 4)
and another on the search features (to 20 x 20), their depthwise cross-correlation (the
search features viewed as (1, 8 x 256, 20, 20) and convolved with the template features as a
(8 x 256, 1, 4, 4) kernel, ``groups`` 2,048, to 17 x 17), then ``Conv2d(256, 256, 1,
bias=False)`` + BatchNorm + ReLU and ``Conv2d(256, out, 1)``. Then the tracker's selection
per target, in fp32, over the 5 x 17 x 17 = 1,445 anchors (stride 8, ratios 0.33 / 0.5 / 1 /
2 / 3, scale 8, made at build as pysot's ``Anchors`` does): the foreground score (softmax over
the 2 classes), the boxes decoded from the deltas (centre plus delta x anchor size, size x
exp(delta)), the scale and ratio change penalty against the previous target size (exp(-(r_c
s_c - 1) 0.16), with change(r) = max(r, 1 / r) and sz(w, h) = sqrt((w + p)(h + p)), p = (w +
h) / 2), the penalized score blended with a Hann window (17 x 17, tiled over the anchors) at
0.40, the best anchor by ``argmax``, its box gathered, and the target size updated with the
learning rate penalty x score x 0.30. Inputs: templates (8, 3, 127, 127), search crops (8, 3,
255, 255), previous target sizes (8, 2) fp32 in search-crop pixels. Returns the chosen boxes
(8, 4: cx, cy, w, h relative to the crop centre), the updated sizes (8, 2) and the chosen
scores (8,), fp32.

    traceinspect profile siamrpn_tracker_2streams_b8.py
"""

from __future__ import annotations

import math
from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

STRIDE, SCALE, RATIOS = 8, 8, (0.33, 0.5, 1.0, 2.0, 3.0)
PENALTY_K, WINDOW_INFLUENCE, LR = 0.16, 0.40, 0.30
TEMPLATE, SEARCH = 127, 255


def alexnet(widths: tuple[int, ...]) -> nn.Sequential:
    """pysot's AlexNetLegacy: 11 x 11 / 2, 5 x 5, then three 3 x 3, no padding."""
    kernels, strides = (11, 5, 3, 3, 3), (2, 1, 1, 1, 1)
    layers: list[nn.Module] = []
    for i, ((cin, cout), k, s) in enumerate(zip(pairwise(widths), kernels, strides, strict=True)):
        layers += [nn.Conv2d(cin, cout, k, s), nn.BatchNorm2d(cout)]
        if i < 2:
            layers += [nn.MaxPool2d(3, 2), nn.ReLU()]
        elif i < 4:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def conv_bn_relu(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class DepthwiseXCorr(nn.Module):
    def __init__(self, cin: int, hidden: int, cout: int) -> None:
        super().__init__()
        self.conv_kernel = conv_bn_relu(cin, hidden, 3)
        self.conv_search = conv_bn_relu(cin, hidden, 3)
        self.head = nn.Sequential(conv_bn_relu(hidden, hidden, 1), nn.Conv2d(hidden, cout, 1))

    def forward(self, template: Tensor, search: Tensor) -> Tensor:
        k, s = self.conv_kernel(template), self.conv_search(search)
        b, c, h, w = s.shape
        corr = F.conv2d(s.reshape(1, b * c, h, w), k.reshape(b * c, 1, *k.shape[2:]), groups=b * c)
        return self.head(corr.view(b, c, *corr.shape[2:]))


def make_anchors(score_size: int, device: torch.device) -> Tensor:
    """(4, anchors x score_size^2): cx, cy, w, h in crop pixels, as pysot's Anchors lays them."""
    sizes = []
    for r in RATIOS:
        ws = int(math.sqrt(STRIDE * STRIDE / r))
        hs = int(ws * r)
        sizes.append((ws * SCALE, hs * SCALE))
    wh = torch.tensor(sizes, dtype=torch.float32, device=device)  # (anchors, 2)
    ori = -(score_size // 2) * STRIDE
    pos = ori + STRIDE * torch.arange(score_size, dtype=torch.float32, device=device)
    cy, cx = torch.meshgrid(pos, pos, indexing="ij")
    n = len(RATIOS)
    grid = (n, score_size, score_size)
    return torch.stack(
        [
            cx.expand(grid),
            cy.expand(grid),
            wh[:, 0, None, None].expand(grid),
            wh[:, 1, None, None].expand(grid),
        ]
    ).flatten(1)


def change(r: Tensor) -> Tensor:
    return torch.maximum(r, 1.0 / r)


def sz(w: Tensor, h: Tensor) -> Tensor:
    pad = (w + h) * 0.5
    return ((w + pad) * (h + pad)).sqrt()


def build(device: torch.device, smoke: bool) -> Built:
    batch, widths, hidden = (2, (3, 8, 16, 24, 24, 16), 16) if smoke else (
        8, (3, 96, 256, 384, 384, 256), 256,
    )  # fmt: skip
    anchors_n = len(RATIOS)
    dtype = low_precision(device)
    backbone = alexnet(widths)
    cls_head = DepthwiseXCorr(widths[-1], hidden, 2 * anchors_n)
    loc_head = DepthwiseXCorr(widths[-1], hidden, 4 * anchors_n)
    model = nn.ModuleList([backbone, cls_head, loc_head])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    score_size = 17  # (255 - 127) / 8 + 1
    anchors = make_anchors(score_size, device)  # (4, 1445)
    hann = torch.hann_window(score_size, periodic=False, device=device)
    window = torch.outer(hann, hann).flatten().repeat(anchors_n)  # (1445,)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(template: Tensor, search: Tensor, size: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        zf, xf = fork_join(device, streams, [lambda: backbone(template), lambda: backbone(search)])
        cls, loc = cls_head(zf, xf).float(), loc_head(zf, xf).float()
        b = cls.shape[0]
        score = cls.view(b, 2, -1).softmax(dim=1)[:, 1]  # (b, 1445)
        delta = loc.view(b, 4, -1)
        cx = delta[:, 0] * anchors[2] + anchors[0]
        cy = delta[:, 1] * anchors[3] + anchors[1]
        w = delta[:, 2].exp() * anchors[2]
        h = delta[:, 3].exp() * anchors[3]
        pw, ph = size[:, 0:1], size[:, 1:2]
        s_c = change(sz(w, h) / sz(pw, ph))
        r_c = change((pw / ph) / (w / h))
        penalty = torch.exp(-(r_c * s_c - 1) * PENALTY_K)
        pscore = penalty * score * (1 - WINDOW_INFLUENCE) + window * WINDOW_INFLUENCE
        best = pscore.argmax(dim=1, keepdim=True)  # (b, 1)
        box = torch.stack([cx, cy, w, h], dim=1).gather(2, best[:, None].expand(b, 4, 1))[..., 0]
        best_score = score.gather(1, best)
        lr = penalty.gather(1, best) * best_score * LR
        new_size = size * (1 - lr) + box[:, 2:] * lr
        return box, new_size, best_score[:, 0]

    inputs = [
        (
            torch.randn(batch, 3, TEMPLATE, TEMPLATE, device=device, dtype=dtype),
            torch.randn(batch, 3, SEARCH, SEARCH, device=device, dtype=dtype),
            torch.rand(batch, 2, device=device) * 64 + 32,
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"SiamRPN (AlexNet, depthwise xcorr): template {TEMPLATE} / search {SEARCH} branches on "
        f"2 side streams + RPN head + penalized argmax selection, b{batch}",
        [model, anchors, window],
    )


if __name__ == "__main__":
    main(build, __doc__)
