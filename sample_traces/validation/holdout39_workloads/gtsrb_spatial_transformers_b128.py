"""A traffic-sign classifier with three spatial transformers (Jaderberg et al., 2015; after the
GTSRB layout of Arcos-Garcia et al., 2018: a transformer before each of three convolutions of
7 x 7 / 200, 4 x 4 / 250 and 4 x 4 / 350, the localization nets as written below) at batch 128
(thirty-ninth hold-out): 128 crops of 3 x 48 x 48, 43 classes, bf16 on a GPU (the affine grids
and the sampling in bf16, the final log-softmax in fp32), eval mode, no gradients. Each
spatial transformer: its localization net predicts the (2, 3) affine matrix of every sample
(the last ``Linear`` initialized near the identity: weights N(0, 0.001), bias (1, 0, 0, 0, 1,
0)), ``F.affine_grid`` over the input's own size and ``F.grid_sample`` (bilinear, zeros
padding, align_corners=False) resample the input. The localization nets: ST1 on the images,
2 x 2 max pool, ``Conv2d(3, 250, 5)`` + ReLU, max pool, ``Conv2d(250, 250, 5)`` + ReLU, max
pool (48 -> 24 -> 20 -> 10 -> 6 -> 3), ``Linear(2250, 250)`` + ReLU, ``Linear(250, 6)``; ST2
on the (200, 21, 21) maps, max pool, ``Conv2d(200, 150, 5, padding 2)`` + ReLU, max pool,
``Conv2d(150, 200, 5, padding 2)`` + ReLU, max pool (21 -> 10 -> 5 -> 2), ``Linear(800,
300)`` + ReLU, ``Linear(300, 6)``; ST3 on the (250, 9, 9) maps, the same layout with 250 input
channels (9 -> 4 -> 2 -> 1), ``Linear(200, 300)`` + ReLU, ``Linear(300, 6)``. The trunk: ST1,
``Conv2d(3, 200, 7)`` + ReLU + 2 x 2 max pool (48 -> 42 -> 21), ST2, ``Conv2d(200, 250, 4)`` +
ReLU + max pool (21 -> 18 -> 9), ST3, ``Conv2d(250, 350, 4)`` + ReLU + max pool (9 -> 6 -> 3),
flattened (3,150), ``Linear(3150, 400)`` + ReLU, ``Linear(400, 43)`` and ``log_softmax`` in
fp32. Input: the crops (128, 3, 48, 48). Returns the (128, 43) class log-probabilities.

    traceinspect profile gtsrb_spatial_transformers_b128.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

SIZE, CLASSES = 48, 43


class SpatialTransformer(nn.Module):
    def __init__(self, cin: int, size: int, widths: tuple[int, int], pad: int, hidden: int) -> None:
        super().__init__()
        a, b = widths
        s = ((size // 2 - 4 + 2 * pad) // 2 - 4 + 2 * pad) // 2  # the loc net's output size
        self.loc = nn.Sequential(
            nn.MaxPool2d(2), nn.Conv2d(cin, a, 5, padding=pad), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(a, b, 5, padding=pad), nn.ReLU(),
            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(b * s * s, hidden), nn.ReLU(),
            nn.Linear(hidden, 6),
        )  # fmt: skip
        last = self.loc[-1]
        with torch.no_grad():
            last.weight.normal_(0, 1e-3)
            last.bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))

    def forward(self, x: Tensor) -> Tensor:
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)


def conv_relu_pool(cin: int, cout: int, kernel: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel), nn.ReLU(), nn.MaxPool2d(2))


class STNClassifier(nn.Module):
    def __init__(
        self,
        c: tuple[int, int, int],
        st1: tuple[int, int],
        loc: tuple[int, int],
        hidden: int,
        fc: int,
    ) -> None:
        super().__init__()
        self.st1 = SpatialTransformer(3, SIZE, st1, 0, st1[1])
        self.conv1 = conv_relu_pool(3, c[0], 7)  # 48 -> 42 -> 21
        self.st2 = SpatialTransformer(c[0], 21, loc, 2, hidden)
        self.conv2 = conv_relu_pool(c[0], c[1], 4)  # 21 -> 18 -> 9
        self.st3 = SpatialTransformer(c[1], 9, loc, 2, hidden)
        self.conv3 = conv_relu_pool(c[1], c[2], 4)  # 9 -> 6 -> 3
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(c[2] * 9, fc), nn.ReLU(), nn.Linear(fc, CLASSES)
        )

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv1(self.st1(x))
        x = self.conv2(self.st2(x))
        x = self.conv3(self.st3(x))
        return self.head(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, st1, loc, hidden, fc = (
        (2, (8, 8, 8), (8, 8), (8, 8), 16, 16)
        if smoke
        else (128, (200, 250, 350), (250, 250), (150, 200), 300, 400)
    )
    dtype = low_precision(device)
    model = STNClassifier(c, st1, loc, hidden, fc).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x).float().log_softmax(dim=-1)

    inputs = [(torch.randn(batch, 3, SIZE, SIZE, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"GTSRB classifier with 3 spatial transformers (affine_grid + grid_sample) before "
        f"convs {'/'.join(map(str, c))}, b{batch} at {SIZE}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
