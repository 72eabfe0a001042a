"""RetinaNet's head stage (Lin, Goyal, Girshick, He and Dollar, ICCV 2017, "Focal Loss for Dense
Object Detection": a classification subnet and a box subnet of four 3 x 3 convolutions each, shared
by the five FPN levels, over 9 anchors a location) on the FPN features of two COCO images resized to
800 x 1216, up to the decoded top-1,000 candidates of each level (sixty-sixth hold-out: one stream,
fp16, channels-last: the backbone and FPN are not run, their five levels P3 to P7 are the inputs,
(2, 256, 100, 152), (2, 256, 50, 76), (2, 256, 25, 38), (2, 256, 13, 19) and (2, 256, 7, 10); level
by level the classification subnet (4 x ``Conv2d(256, 256, 3, padding 1)`` with bias and ReLU, then
``Conv2d(256, 9 x 80, 3, padding 1)``, its bias the prior -log(99)) and the box subnet (4 x the same
convolution and ReLU, then ``Conv2d(256, 9 x 4, 3, padding 1)``), each output viewed as (2, H W 9,
80) or (2, H W 9, 4) (free in channels-last) and the levels concatenated (182,403 anchors an image,
a 58 MB fp16 copy of the class logits) and split back per level; then per level the sigmoid of the
logits, ``topk`` 1,000 of the level's flattened scores per image (up to 10.9 M of them at P3), the
anchor index (``// 80``) and label (``% 80``) of each candidate, the gather of its four box deltas
and of its anchor (the anchors made at build), the box decoding and the clip to the image; the five
levels' candidates concatenated; some 300 kernels, the 50 convolutions 0.5 TFLOP in all, the largest
at P3 on 30,400 positions, some 1.5 to 3 ms of GPU time). Laid out as torchvision's
``retinanet_resnet50_fpn`` (``RetinaNetHead``'s ``RetinaNetClassificationHead`` and
``RetinaNetRegressionHead``: ``Conv2dNormActivation`` without a norm, the convolutions' weights
normal with std 0.01 and zero biases, ``cls_logits``' bias ``-log((1 - 0.01) / 0.01)``, the ``view
(N, A, K, H, W)``, ``permute(0, 3, 4, 1, 2)`` and ``reshape(N, -1, K)`` of each level and the
``torch.cat`` over levels; ``AnchorGenerator`` with sizes ``(x, int(x 2^(1/3)), int(x 2^(2/3)))``
for x in 32 to 512, aspect ratios 0.5, 1 and 2, the rounded cell anchors and the strides as the
image size floor-divided by the grid size; ``postprocess_detections``' per-level ``split``,
``sigmoid``, ``topk`` of ``min(1000, n)``, ``div(.., rounding_mode="floor")`` and ``%``;
``BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))``'s ``decode_single`` with the deltas divided by the
weights, dw and dh clamped at log(1000 / 16), the exponentials and the corners from the centres;
``clip_boxes_to_image``), with the changes a replayable step needs: the ``score_thresh`` 0.05 filter
before ``topk`` and the batched NMS after it are left out (their shapes depend on the data), and the
two images are handled together (``topk`` along dim 1) rather than in a Python loop over images; the
decoding in fp32 on the gathered fp16 deltas. fp16 weights and activations, channels-last, on a GPU
(fp32 on a CPU), eval, no gradients, random weights (as above). Inputs (two input sets): the five
FPN levels (2, 256, H, W) fp16, Gaussian, channels-last. Returns the candidates' scores (2, 5000)
fp32, labels (2, 5000) int64 and boxes (2, 5000, 4) fp32 (x1, y1, x2, y2 in pixels).

    traceinspect profile retinanet_r50_fpn_heads_topk_decode_coco_fp16_one_stream_b2.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

CHANNELS, CLASSES, CONVS, TOPK, PRIOR = 256, 80, 4, 1000, 0.01
SIZES = tuple(
    (x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3))) for x in (32, 64, 128, 256, 512)
)
RATIOS = (0.5, 1.0, 2.0)
ANCHORS = len(SIZES[0]) * len(RATIOS)
BBOX_XFORM_CLIP = math.log(1000.0 / 16)
WEIGHTS = (1.0, 1.0, 1.0, 1.0)


def subnet(c: int, out: int) -> tuple[nn.Sequential, nn.Conv2d]:
    layers: list[nn.Module] = []
    for _ in range(CONVS):
        layers += [nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True)]
    conv = nn.Sequential(*layers)
    final = nn.Conv2d(c, out, 3, padding=1)
    for m in [*conv.modules(), final]:
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight, std=0.01)
            nn.init.constant_(m.bias, 0)
    return conv, final


class RetinaNetHead(nn.Module):
    def __init__(self, c: int, classes: int) -> None:
        super().__init__()
        self.classes = classes
        self.cls_conv, self.cls_logits = subnet(c, ANCHORS * classes)
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - PRIOR) / PRIOR))
        self.bbox_conv, self.bbox_reg = subnet(c, ANCHORS * 4)

    @staticmethod
    def flat(x: Tensor, k: int) -> Tensor:
        n, _, h, w = x.shape
        x = x.view(n, -1, k, h, w).permute(0, 3, 4, 1, 2)
        return x.reshape(n, -1, k)  # (n, h w a, k)

    def forward(self, features: tuple[Tensor, ...]) -> tuple[Tensor, Tensor]:
        cls = [self.flat(self.cls_logits(self.cls_conv(x)), self.classes) for x in features]
        reg = [self.flat(self.bbox_reg(self.bbox_conv(x)), 4) for x in features]
        return torch.cat(cls, dim=1), torch.cat(reg, dim=1)


def cell_anchors(scales: tuple[int, ...]) -> Tensor:
    scales_t = torch.as_tensor(scales, dtype=torch.float32)
    h_ratios = torch.sqrt(torch.as_tensor(RATIOS))
    w_ratios = 1 / h_ratios
    ws = (w_ratios[:, None] * scales_t[None, :]).view(-1)
    hs = (h_ratios[:, None] * scales_t[None, :]).view(-1)
    return (torch.stack([-ws, -hs, ws, hs], dim=1) / 2).round()


def grid_anchors(grids: list[tuple[int, int]], height: int, width: int) -> list[Tensor]:
    out = []
    for (gh, gw), scales in zip(grids, SIZES, strict=True):
        sh, sw = height // gh, width // gw
        shift_y, shift_x = torch.meshgrid(
            torch.arange(gh) * sh, torch.arange(gw) * sw, indexing="ij"
        )
        shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
        shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1).float()
        out.append((shifts.view(-1, 1, 4) + cell_anchors(scales).view(1, -1, 4)).reshape(-1, 4))
    return out


def decode(rel_codes: Tensor, boxes: Tensor) -> Tensor:
    """``BoxCoder.decode_single`` on (n, k, 4) deltas and anchors."""
    widths = boxes[..., 2] - boxes[..., 0]
    heights = boxes[..., 3] - boxes[..., 1]
    ctr_x = boxes[..., 0] + 0.5 * widths
    ctr_y = boxes[..., 1] + 0.5 * heights
    wx, wy, ww, wh = WEIGHTS
    dx = rel_codes[..., 0::4] / wx
    dy = rel_codes[..., 1::4] / wy
    dw = rel_codes[..., 2::4] / ww
    dh = rel_codes[..., 3::4] / wh
    dw = torch.clamp(dw, max=BBOX_XFORM_CLIP)
    dh = torch.clamp(dh, max=BBOX_XFORM_CLIP)
    pred_ctr_x = dx * widths[..., None] + ctr_x[..., None]
    pred_ctr_y = dy * heights[..., None] + ctr_y[..., None]
    pred_w = torch.exp(dw) * widths[..., None]
    pred_h = torch.exp(dh) * heights[..., None]
    c_to_c_h = 0.5 * pred_h
    c_to_c_w = 0.5 * pred_w
    pred_boxes = torch.stack(
        (
            pred_ctr_x - c_to_c_w,
            pred_ctr_y - c_to_c_h,
            pred_ctr_x + c_to_c_w,
            pred_ctr_y + c_to_c_h,
        ),
        dim=-1,
    )
    return pred_boxes.flatten(-2)


def clip_boxes_to_image(boxes: Tensor, height: int, width: int) -> Tensor:
    boxes_x = boxes[..., 0::2].clamp(min=0, max=width)
    boxes_y = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((boxes_x, boxes_y), dim=boxes.dim()).reshape(boxes.shape)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, height, width, c, classes, top_k = 2, 128, 192, 16, 4, 50
    else:
        batch, height, width, c, classes, top_k = 2, 800, 1216, CHANNELS, CLASSES, TOPK
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    head = RetinaNetHead(c, classes).to(device, dtype, memory_format=torch.channels_last).eval()
    grids = [(math.ceil(height / s), math.ceil(width / s)) for s in (8, 16, 32)]
    for _ in range(2):  # P6 and P7: stride-2 3 x 3 convolutions
        gh, gw = grids[-1]
        grids.append(((gh - 1) // 2 + 1, (gw - 1) // 2 + 1))
    anchors = [a.to(device) for a in grid_anchors(grids, height, width)]
    per_level = [gh * gw * ANCHORS for gh, gw in grids]

    @torch.no_grad()
    def step(*features: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        cls_logits, bbox_regression = head(features)
        scores_all, labels_all, boxes_all = [], [], []
        for logits, regression, level_anchors in zip(
            cls_logits.split(per_level, dim=1),
            bbox_regression.split(per_level, dim=1),
            anchors,
            strict=True,
        ):
            scores = torch.sigmoid(logits).flatten(1)  # (n, h w a k)
            scores, topk_idxs = scores.topk(min(top_k, scores.shape[1]), dim=1)
            anchor_idxs = torch.div(topk_idxs, classes, rounding_mode="floor")
            labels = topk_idxs % classes
            deltas = torch.gather(regression, 1, anchor_idxs[..., None].expand(-1, -1, 4))
            boxes = decode(deltas.float(), level_anchors[anchor_idxs])
            boxes_all.append(clip_boxes_to_image(boxes, height, width))
            scores_all.append(scores.float())
            labels_all.append(labels)
        return torch.cat(scores_all, 1), torch.cat(labels_all, 1), torch.cat(boxes_all, 1)

    inputs = [
        tuple(
            torch.randn(batch, c, gh, gw, device=device, dtype=dtype).contiguous(
                memory_format=torch.channels_last
            )
            for gh, gw in grids
        )
        for _ in range(2)
    ]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"RetinaNet head: cls + box subnets ({CONVS} conv3x3+ReLU, {c} ch) over P3-P7 of "
        f"{height}x{width}, {ANCHORS} anchors x {classes} classes, top-{top_k} a level, decode, "
        f"{precision} channels-last, one stream, b{batch}"
    )
    return Built(step, inputs, description, [head, anchors])


if __name__ == "__main__":
    main(build, __doc__)
