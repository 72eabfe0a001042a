"""An OCR step, a DBNet-like text detector (Liao et al., 2020: FPN features, probability and
threshold maps, differentiable binarization) on full images beside a CRNN recognizer (Shi et
al., 2016: a conv stack, a bidirectional recurrent net, per-column classes) on cropped text
lines, the two on two side streams, the per-image text fraction and the greedy CTC labels after
the join (forty-first hold-out): 4 images of 3 x 640 x 640 and 32 line crops of 1 x 32 x 256,
bf16 on a GPU (the GRU too: cuDNN takes bf16 RNNs on sm80 and later; the reductions in fp32),
eval mode, no gradients; every BatchNorm in eval mode with running statistics set at build.
Detector, on side stream 1: a small backbone of 3 x 3 convolutions, each + BatchNorm + ReLU, a
stride-2 stem 3 -> 32 (320 x 320), then three stages of a stride-2 ``Conv2d`` and a stride-1
one, 32 -> 64 (C2, 160 x 160), 64 -> 128 (C3, 80 x 80), 128 -> 256 (C4, 40 x 40); the FPN, a
1 x 1 lateral ``Conv2d`` to 64 channels per level, top-down upsample-and-add (nearest 2x
``F.interpolate``) from C4 to C2, a 3 x 3 ``Conv2d(64, 64)`` per level, the three levels
upsampled to 160 x 160 and concatenated (192 channels); the probability and threshold heads,
each ``Conv2d(192, 48, 3)`` + BatchNorm + ReLU, ``ConvTranspose2d(48, 48, 2, 2)`` + BatchNorm +
ReLU, ``ConvTranspose2d(48, 1, 2, 2)`` and a sigmoid to (4, 1, 640, 640); the differentiable
binarization 1 / (1 + exp(-50 (P - T))) (a sigmoid). Recognizer, on side stream 2: 3 x 3
convolutions + ReLU, 1 -> 64, 2 x 2 max pool, 64 -> 128, 2 x 2 max pool, 128 -> 256 (+
BatchNorm), 256 -> 256, (2, 1) max pool, 256 -> 512 (+ BatchNorm), 512 -> 512, (2, 1) max pool,
then ``Conv2d(512, 512, 2)`` (no padding) + BatchNorm + ReLU to (32, 512, 1, 63), 63 columns;
a 2-layer bidirectional ``nn.GRU`` (hidden 256 per direction, batch_first) run as one cuDNN call
over the 63 columns, and ``Linear(512, 97)`` to 97 classes (96 characters and the CTC blank).
Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the
branch outputs outside capture). After the join, on the current stream: the mean of each
image's binarized map in fp32 (4,), and each line's greedy CTC path, the argmax class of every
column (32, 63) (no collapsing of repeats or blanks, which would give data-dependent lengths).
On a CPU the branches run in order. Inputs: images (4, 3, 640, 640), line crops (32, 1, 32,
256). Returns the per-image text fractions (4,) fp32 and the per-column labels (32, 63) int64.

    traceinspect profile ocr_det_rec_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, DB_K = 97, 50.0


def conv_bn_relu(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()
    )


def up(x: Tensor, factor: int) -> Tensor:
    return F.interpolate(x, scale_factor=float(factor), mode="nearest")


class DBHead(nn.Module):
    def __init__(self, cin: int, mid: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 3, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.ConvTranspose2d(mid, mid, 2, 2), nn.BatchNorm2d(mid), nn.ReLU(),
            nn.ConvTranspose2d(mid, 1, 2, 2), nn.Sigmoid(),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.body(x)


class Detector(nn.Module):
    def __init__(self, width: int, inner: int) -> None:
        super().__init__()
        widths = (2 * width, 4 * width, 8 * width)  # C2, C3, C4
        self.stem = conv_bn_relu(3, width, 2)
        self.stages = nn.ModuleList(
            nn.Sequential(conv_bn_relu(cin, cout, 2), conv_bn_relu(cout, cout))
            for cin, cout in zip((width, *widths[:-1]), widths, strict=True)
        )
        self.laterals = nn.ModuleList(nn.Conv2d(c, inner, 1, bias=False) for c in widths)
        self.smooth = nn.ModuleList(
            nn.Conv2d(inner, inner, 3, padding=1, bias=False) for _ in widths
        )
        self.prob, self.thresh = (DBHead(3 * inner, 3 * inner // 4) for _ in range(2))

    def forward(self, images: Tensor) -> Tensor:
        x, feats = self.stem(images), []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        lat = [conv(f) for conv, f in zip(self.laterals, feats, strict=True)]
        for i in (1, 0):  # top-down: C4 -> C3 -> C2
            lat[i] = lat[i] + up(lat[i + 1], 2)
        p2, p3, p4 = (conv(x) for conv, x in zip(self.smooth, lat, strict=True))
        fused = torch.cat([p2, up(p3, 2), up(p4, 4)], dim=1)
        prob, thresh = self.prob(fused), self.thresh(fused)
        return torch.sigmoid(DB_K * (prob - thresh))  # differentiable binarization


class Recognizer(nn.Module):
    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        w = width
        self.convs = nn.Sequential(
            nn.Conv2d(1, w, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(w, 2 * w, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2, 2),
            conv_bn_relu(2 * w, 4 * w), nn.Conv2d(4 * w, 4 * w, 3, 1, 1), nn.ReLU(),
            nn.MaxPool2d((2, 1), (2, 1)),
            conv_bn_relu(4 * w, 8 * w), nn.Conv2d(8 * w, 8 * w, 3, 1, 1), nn.ReLU(),
            nn.MaxPool2d((2, 1), (2, 1)),
            nn.Conv2d(8 * w, 8 * w, 2, bias=False), nn.BatchNorm2d(8 * w), nn.ReLU(),
        )  # fmt: skip
        self.rnn = nn.GRU(8 * w, hidden, 2, batch_first=True, bidirectional=True)
        self.classifier = nn.Linear(2 * hidden, CLASSES)

    def forward(self, lines: Tensor) -> Tensor:
        cols = self.convs(lines).squeeze(2).transpose(1, 2)  # (n, columns, 8 w)
        out, _ = self.rnn(cols)
        return self.classifier(out)  # (n, columns, classes)


def build(device: torch.device, smoke: bool) -> Built:
    images, size, lines, width, inner, rec_width, hidden = (
        (1, 64, 2, 8, 8, 8, 16) if smoke else (4, 640, 32, 32, 64, 64, 256)
    )
    dtype = low_precision(device)
    detector, recognizer = Detector(width, inner), Recognizer(rec_width, hidden)
    model = nn.ModuleList([detector, recognizer])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    recognizer.rnn.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(image: Tensor, crops: Tensor) -> tuple[Tensor, Tensor]:
        binary, logits = fork_join(
            device, streams, [lambda: detector(image), lambda: recognizer(crops)]
        )
        return binary.float().mean(dim=(1, 2, 3)), logits.argmax(dim=-1)

    inputs = [
        (
            torch.rand(images, 3, size, size, device=device, dtype=dtype),
            torch.rand(lines, 1, 32, 256, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"OCR: DBNet-like detector ({images} x {size}^2, 3-level FPN, probability / threshold "
        f"maps, binarization) and CRNN recognizer ({lines} lines 32 x 256, conv stack + 2-layer "
        f"BiGRU {hidden}, {CLASSES} classes) on 2 side streams + map means / greedy CTC argmax",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
