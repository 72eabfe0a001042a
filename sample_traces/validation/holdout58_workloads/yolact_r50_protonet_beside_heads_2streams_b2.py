"""YOLACT (Bolya et al., 2019) segmenting the instances in 2 images of 550 x 550, its ResNet-50
backbone and FPN, then the mask prototypes on one side stream beside the shared prediction head on
the five FPN levels on the other, then Fast NMS and the mask assembly on the current stream (fifty-
eighth hold-out: fp32 with cuDNN's TF32 convolutions; first some 200 kernels on the current stream,
the backbone's 53 convolutions with inference BatchNorm and ReLU and the FPN's 8, some 120 GFLOP;
then two concurrent chains of unequal kind, the protonet's 5 convolutions over P3 (69 x 69, then 138
x 138 after a bilinear upsample), 3 x 3 at 256 channels, some 80 GFLOP in 18 kernels, beside the
head's 20 convolutions on 5 levels from 69 x 69 down to 5 x 5 with their permutes, tanh and
concatenations, some 36 GFLOP in some 70 kernels; then some 80 small sorting, gathering and
elementwise kernels per image and the masks' upsampling over 242 MB: convolution-bound, then launch-
bound). Laid out as dbolya/yolact's ``yolact_resnet50_config`` (``yolact_base_config`` with a
ResNet-50): the backbone a torchvision-style ResNet-50 (stem ``Conv2d(3, 64, 7, stride 2)``,
BatchNorm, ReLU, max-pool, bottleneck stages of 3, 4, 6, 3 blocks, C3 / C4 / C5 kept); ``FPN``
(``lat_layers`` 1 x 1 convolutions to 256 from C5 down, each level the lateral plus the coarser
level upsampled bilinearly, ``pred_layers`` 3 x 3 convolutions with ReLU, two ``downsample_layers``
3 x 3 stride 2 from P5: P3 to P7 at 69, 35, 18, 9 and 5 pixels). Side stream 1, ``proto_net`` on P3
(three 3 x 3 convolutions of 256 with ReLU, a x2 bilinear ``InterpolateModule`` with its ReLU, a 3 x
3 convolution of 256 with ReLU, a 1 x 1 convolution to 32), the prototype activation (ReLU) and the
permute to (2, 138, 138, 32); side stream 2, the ``PredictionModule`` shared by the five levels
(``upfeature`` 3 x 3 convolution of 256 with ReLU; ``bbox_layer``, ``conf_layer`` and
``mask_layer``, 3 x 3 convolutions to 3 priors x 4, x 81 classes and x 32 coefficients, each
permuted to (b, h w 3, ...), the coefficients through tanh), the five levels concatenated (19248
priors) and the class softmax. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current stream,
``Detect`` per image as YOLACT's eval runs it (``nms_top_k`` 200, ``conf_thresh`` 0.05,
``nms_thresh`` 0.5, ``max_num_detections`` 100): the boxes decoded against the priors (square
anchors of 24 to 384 pixels, variances 0.1 and 0.2, built at build time as YOLACT caches them), the
80 foreground classes' scores, then ``fast_nms``: each class's scores sorted, the top 200 kept,
their boxes and coefficients gathered, the class-wise IoU matrices (80, 200, 200), upper triangle,
the column maximum, then the top 100 detections over all classes; YOLACT's data-dependent selections
(the priors under ``conf_thresh`` dropped before the sort, the suppressed detections dropped after
it) become multiplications of the scores by the masks so that every shape is fixed. Then
``postprocess``: the prototypes times the coefficients (138 x 138 x 100), sigmoid, ``crop`` to the
padded boxes; both images' masks upsampled bilinearly together to 550 x 550 and thresholded at 0.5,
the boxes to pixel coordinates. fp32 (cuDNN convolutions may use TF32,
``torch.backends.cudnn.allow_tf32``, torch's default, set in build), eval (BatchNorm on random
running statistics), no gradients, random weights (torch's defaults). Input (two input sets): the
images (2, 3, 550, 550), normalized Gaussians. Returns the classes (2, 100) int64, the scores (2,
100), the boxes (2, 100, 4) int64 and the masks (2, 100, 550, 550), fp32 zeros and ones.

    traceinspect profile yolact_r50_protonet_beside_heads_2streams_b2.py
"""

from __future__ import annotations

import itertools
import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import Bottleneck, random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, PRIORS, MASK_DIM, TOP_K, MAX_DETS, NMS_THRESH, CONF_THRESH = 81, 3, 32, 200, 100, 0.5, 0.05
SCALES, ASPECT_RATIOS, VARIANCES = (24, 48, 96, 192, 384), (1.0, 0.5, 2.0), (0.1, 0.2)


class ResNetBackbone(nn.Module):
    def __init__(self, width: int, blocks: tuple[int, ...]) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        )  # fmt: skip
        self.layers = nn.ModuleList()
        cin = width
        for stage, count in enumerate(blocks):
            mid = width * 2**stage
            layer = []
            for i in range(count):
                layer.append(Bottleneck(cin, mid, 2 if stage > 0 and i == 0 else 1))
                cin = mid * 4
            self.layers.append(nn.Sequential(*layer))
        self.channels = [width * 2**s * 4 for s in range(1, len(blocks))]

    def forward(self, x: Tensor) -> list[Tensor]:
        x = self.stem(x)
        outs = []
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i > 0:
                outs.append(x)
        return outs


class FPN(nn.Module):
    def __init__(self, in_channels: list[int], f: int, downsample: int) -> None:
        super().__init__()
        self.lat_layers = nn.ModuleList(nn.Conv2d(c, f, 1) for c in reversed(in_channels))
        self.pred_layers = nn.ModuleList(nn.Conv2d(f, f, 3, padding=1) for _ in in_channels)
        self.downsample_layers = nn.ModuleList(
            nn.Conv2d(f, f, 3, padding=1, stride=2) for _ in range(downsample)
        )

    def forward(self, convouts: list[Tensor]) -> list[Tensor]:
        n = len(convouts)
        out: list[Tensor] = [convouts[0]] * n
        x = torch.zeros(1, device=convouts[0].device, dtype=convouts[0].dtype)
        for j, lat_layer in zip(range(n - 1, -1, -1), self.lat_layers, strict=True):
            if j < n - 1:
                h, w = convouts[j].shape[-2:]
                x = F.interpolate(x, size=(h, w), mode="bilinear", align_corners=False)
            x = x + lat_layer(convouts[j])
            out[j] = x
        for j, pred_layer in zip(range(n - 1, -1, -1), self.pred_layers, strict=True):
            out[j] = F.relu(pred_layer(out[j]))
        for layer in self.downsample_layers:
            out.append(layer(out[-1]))
        return out


class ProtoNet(nn.Module):
    def __init__(self, f: int, mask_dim: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(f, f, 3, padding=1) for _ in range(4))
        self.last = nn.Conv2d(f, mask_dim, 1)

    def forward(self, x: Tensor) -> Tensor:
        for conv in self.convs[:3]:
            x = F.relu(conv(x))
        x = F.relu(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False))
        x = F.relu(self.convs[3](x))
        return F.relu(self.last(x)).permute(0, 2, 3, 1).contiguous()


class PredictionModule(nn.Module):
    def __init__(self, f: int, classes: int, mask_dim: int) -> None:
        super().__init__()
        self.classes, self.mask_dim = classes, mask_dim
        self.upfeature = nn.Conv2d(f, f, 3, padding=1)
        self.bbox_layer = nn.Conv2d(f, PRIORS * 4, 3, padding=1)
        self.conf_layer = nn.Conv2d(f, PRIORS * classes, 3, padding=1)
        self.mask_layer = nn.Conv2d(f, PRIORS * mask_dim, 3, padding=1)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        b = x.shape[0]
        x = F.relu(self.upfeature(x))
        bbox = self.bbox_layer(x).permute(0, 2, 3, 1).contiguous().view(b, -1, 4)
        conf = self.conf_layer(x).permute(0, 2, 3, 1).contiguous().view(b, -1, self.classes)
        mask = self.mask_layer(x).permute(0, 2, 3, 1).contiguous().view(b, -1, self.mask_dim)
        return bbox, conf, torch.tanh(mask)


def make_priors(sizes: list[tuple[int, int]], max_size: int) -> Tensor:
    """PredictionModule.make_priors (square anchors, pixel scales), all levels: (priors, 4)."""
    data = []
    for (h, w), scale in zip(sizes, SCALES, strict=True):
        for j, i in itertools.product(range(h), range(w)):
            x, y = (i + 0.5) / w, (j + 0.5) / h
            for ar in ASPECT_RATIOS:
                side = scale * math.sqrt(ar) / max_size
                data += [x, y, side, side]
    return torch.tensor(data).view(-1, 4)


def decode(loc: Tensor, priors: Tensor) -> Tensor:
    boxes = torch.cat(
        (
            priors[:, :2] + loc[:, :2] * VARIANCES[0] * priors[:, 2:],
            priors[:, 2:] * torch.exp(loc[:, 2:] * VARIANCES[1]),
        ),
        1,
    )
    boxes[:, :2] -= boxes[:, 2:] / 2
    boxes[:, 2:] += boxes[:, :2]
    return boxes


def jaccard(a: Tensor, b: Tensor) -> Tensor:
    """box_utils.jaccard on batched boxes (n, A, 4) x (n, B, 4) -> (n, A, B)."""
    max_xy = torch.min(a[:, :, None, 2:], b[:, None, :, 2:])
    min_xy = torch.max(a[:, :, None, :2], b[:, None, :, :2])
    inter = torch.clamp(max_xy - min_xy, min=0).prod(3)
    area_a = ((a[:, :, 2] - a[:, :, 0]) * (a[:, :, 3] - a[:, :, 1])).unsqueeze(2)
    area_b = ((b[:, :, 2] - b[:, :, 0]) * (b[:, :, 3] - b[:, :, 1])).unsqueeze(1)
    return inter / (area_a + area_b - inter)


def sanitize(x1: Tensor, x2: Tensor, size: int, padding: int = 0) -> tuple[Tensor, Tensor]:
    x1, x2 = x1 * size, x2 * size
    lo, hi = torch.min(x1, x2), torch.max(x1, x2)
    return torch.clamp(lo - padding, min=0), torch.clamp(hi + padding, max=size)


def crop(masks: Tensor, boxes: Tensor, padding: int = 1) -> Tensor:
    h, w, n = masks.shape
    x1, x2 = sanitize(boxes[:, 0], boxes[:, 2], w, padding)
    y1, y2 = sanitize(boxes[:, 1], boxes[:, 3], h, padding)
    rows = torch.arange(w, device=masks.device, dtype=x1.dtype).view(1, -1, 1).expand(h, w, n)
    cols = torch.arange(h, device=masks.device, dtype=x1.dtype).view(-1, 1, 1).expand(h, w, n)
    keep = (rows >= x1.view(1, 1, -1)) * (rows < x2.view(1, 1, -1))
    keep = keep * (cols >= y1.view(1, 1, -1)) * (cols < y2.view(1, 1, -1))
    return masks * keep.float()


def fast_nms(boxes: Tensor, coeffs: Tensor, scores: Tensor) -> tuple[Tensor, ...]:
    """Detect.fast_nms with its selections as score masks: fixed shapes."""
    scores, idx = scores.sort(1, descending=True)
    idx, scores = idx[:, :TOP_K].contiguous(), scores[:, :TOP_K]
    num_classes, num_dets = idx.shape
    boxes = boxes[idx.view(-1)].view(num_classes, num_dets, 4)
    coeffs = coeffs[idx.view(-1)].view(num_classes, num_dets, -1)
    iou = jaccard(boxes, boxes).triu_(diagonal=1)
    iou_max, _ = iou.max(dim=1)
    scores = scores * (iou_max <= NMS_THRESH)
    classes = torch.arange(num_classes, device=boxes.device)[:, None].expand_as(scores)
    scores, idx = scores.reshape(-1).sort(0, descending=True)
    idx, scores = idx[:MAX_DETS], scores[:MAX_DETS]
    boxes = boxes.view(-1, 4)[idx]
    return boxes, coeffs.view(num_classes * num_dets, -1)[idx], classes.reshape(-1)[idx], scores


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, width, blocks, f = 2, 64, 8, (1, 1, 1, 1), 16
    else:
        batch, size, width, blocks, f = 2, 550, 64, (3, 4, 6, 3), 256
    torch.backends.cudnn.allow_tf32 = True  # the workload: torch's default for convolutions
    backbone = ResNetBackbone(width, blocks)
    random_batch_norm_stats(backbone)
    fpn = FPN(backbone.channels, f, 2)
    proto = ProtoNet(f, MASK_DIM)
    head = PredictionModule(f, CLASSES, MASK_DIM)
    nets = nn.ModuleList([backbone, fpn, proto, head]).to(device).eval()
    with torch.no_grad():
        levels = fpn(backbone(torch.zeros(1, 3, size, size, device=device)))
    priors = make_priors([tuple(p.shape[-2:]) for p in levels], size).to(device)
    streams = side_streams(device, 2)

    def heads(levels: list[Tensor]) -> tuple[Tensor, Tensor, Tensor]:
        outs = [head(p) for p in levels]
        loc, conf, mask = (torch.cat(v, dim=-2) for v in zip(*outs, strict=True))
        return loc, F.softmax(conf, -1), mask

    @torch.no_grad()
    def step(images: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        levels = fpn(backbone(images))
        proto_out, (loc, conf, coeffs) = fork_join(
            device, streams, [lambda: proto(levels[0]), lambda: heads(levels)]
        )
        conf_preds = conf.transpose(2, 1).contiguous()
        results, crops = [], []
        for i in range(images.shape[0]):
            decoded = decode(loc[i], priors)
            cur_scores = conf_preds[i, 1:, :]
            conf_scores, _ = torch.max(cur_scores, dim=0)
            cur_scores = cur_scores * (conf_scores > CONF_THRESH)
            boxes, masks, classes, scores = fast_nms(decoded, coeffs[i], cur_scores)
            masks = torch.sigmoid(proto_out[i] @ masks.t())
            crops.append(crop(masks, boxes).permute(2, 0, 1))
            x1, x2 = sanitize(boxes[:, 0], boxes[:, 2], size)
            y1, y2 = sanitize(boxes[:, 1], boxes[:, 3], size)
            results.append((classes, scores, torch.stack((x1, y1, x2, y2), dim=1).long()))
        full = F.interpolate(torch.stack(crops), (size, size), mode="bilinear", align_corners=False)
        classes, scores, boxes = (torch.stack(v) for v in zip(*results, strict=True))
        return classes, scores, boxes, full.gt_(0.5)

    inputs = [(torch.randn(batch, 3, size, size, device=device),) for _ in range(2)]
    description = (
        f"YOLACT ResNet-50-FPN at {size}px: protonet beside the shared prediction head on 5 "
        f"levels on 2 side streams, Fast NMS (top {TOP_K}, {MAX_DETS} detections) + mask "
        f"assembly per image, b{batch}, fp32 (TF32 convolutions)"
    )
    return Built(step, inputs, description, [nets, priors])


if __name__ == "__main__":
    main(build, __doc__)
