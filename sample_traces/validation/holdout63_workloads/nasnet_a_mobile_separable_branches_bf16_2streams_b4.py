"""NASNet-A Mobile (Zoph, Vasudevan, Shlens and Le, CVPR 2018: the normal and reduction cells found
by neural architecture search, stacked as "4 @ 1056") classifying 4 ImageNet images at 224 x 224,
the independent branches of every cell split over two side streams (sixty-third hold-out: bf16,
channels-last, sixteen program fork / joins a step, one per cell: on the current stream each cell's
two input adjustments (ReLU, 1 x 1 convolution and BatchNorm of the cell's input and of the previous
cell's, or the factorized reduction of the previous cell's where its grid is twice as fine); then in
each of the 12 normal cells, on side stream 1 the combinations sep5x5(right) + sep3x3(left),
sep3x3(right) + right and avg3x3(right) + left, beside, on side stream 2, sep5x5(left) +
sep3x3(left) and avg3x3(left) + avg3x3(left); in each of the 2 stem and 2 reduction cells, on side
stream 1 sep5x5/2(right) + sep7x7/2(left) and then sep3x3 of that sum + max3x3/2(right), beside, on
side stream 2, max3x3/2(right) + sep7x7/2(left) and avg3x3/2(right) + sep5x5/2(left); after each
join the reduction cell's avg3x3 of its first sum plus its second and the concatenation; each
separable branch ReLU, depthwise, pointwise, BatchNorm, ReLU, depthwise, pointwise, BatchNorm, so a
side stream runs 20 to 30 kernels a fork, nearly all a few microseconds long (the largest tensor
``conv0``'s (4, 32, 111, 111), 3.2 MB); some 900 kernels in all, some 1.5 to 4 ms of GPU time). Laid
out as Cadene's ``pretrainedmodels`` ``NASNetAMobile`` (stem ``conv0`` 3 x 3 / 2 to 32 channels
without padding and BatchNorm (eps 1e-3); ``cell_stem_0`` and ``cell_stem_1`` with 11 and 22
filters; three stages of 4 normal cells with 44, 88 and 176 filters, each cell's output the
concatenation of its adjusted left input and its 5 combinations (6 x filters: 264, 528, 1056
channels), a reduction cell (88 and 176 filters, 4 x filters out) between the stages;
``BranchSeparables`` and the cells' ``comb_iter`` wiring as ``NormalCell`` and ``ReductionCell1``;
average pools without the padding counted; the final ReLU, the global average pool and
``Linear(1056, 1000)``), with two changes that keep one cell builder: the stem cells are reduction
cells whose inputs are adjusted as any cell's (``CellStem0`` reads ``conv0`` for both inputs,
``CellStem1`` ``conv0`` as its previous input) and the factorized reduction gives filters / 2
channels a path; the stride-2 separable branches pad symmetrically (``k // 2``; Cadene's crop and
pad that mimic TensorFlow's SAME are left out). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture); no branch works in
place on an input another reads. bf16 weights and activations, channels-last, on a GPU (fp32 on a
CPU), eval (BatchNorm on random running statistics), no gradients, random weights (torch's
defaults). Input (two input sets): the images (4, 3, 224, 224) bf16, Gaussian, channels-last.
Returns the logits (4, 1000).

    traceinspect profile nasnet_a_mobile_separable_branches_bf16_2streams_b4.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import conv_input, random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

STEM, FILTERS, CELLS, EPS = 32, 44, 4, 1e-3


def bn(channels: int) -> nn.BatchNorm2d:
    return nn.BatchNorm2d(channels, eps=EPS, momentum=0.1)


class BranchSeparables(nn.Module):
    """ReLU, separable k x k (stride), BN, ReLU, separable k x k, BN."""

    def __init__(self, channels: int, k: int, stride: int) -> None:
        super().__init__()
        pad = k // 2
        self.dw1 = nn.Conv2d(channels, channels, k, stride, pad, groups=channels, bias=False)
        self.pw1 = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn1 = bn(channels)
        self.dw2 = nn.Conv2d(channels, channels, k, 1, pad, groups=channels, bias=False)
        self.pw2 = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn2 = bn(channels)

    def forward(self, x: Tensor) -> Tensor:
        x = self.bn1(self.pw1(self.dw1(torch.relu(x))))
        return self.bn2(self.pw2(self.dw2(torch.relu(x))))


class ReluConvBn(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), bn(cout))


class FactorizedReduction(nn.Module):
    """The previous cell's output on a grid twice as fine: two strided 1 x 1 paths, the second
    shifted by one pixel, concatenated, then BN (NASNet's ``path_1`` / ``path_2``)."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.path_1 = nn.Conv2d(cin, cout // 2, 1, bias=False)
        self.path_2 = nn.Conv2d(cin, cout - cout // 2, 1, bias=False)
        self.bn = bn(cout)

    def forward(self, x: Tensor) -> Tensor:
        x = torch.relu(x)
        x1 = self.path_1(F.avg_pool2d(x, 1, 2))
        x2 = F.pad(x, (0, 1, 0, 1))[:, :, 1:, 1:]
        x2 = self.path_2(F.avg_pool2d(x2, 1, 2))
        return self.bn(torch.cat((x1, x2), dim=1))


def avg3(x: Tensor, stride: int = 1) -> Tensor:
    return F.avg_pool2d(x, 3, stride, 1, count_include_pad=False)


def max3(x: Tensor) -> Tensor:
    return F.max_pool2d(x, 3, 2, 1)


class Cell(nn.Module):
    def __init__(self, c_prev: int, c_in: int, filters: int, reduction: bool, reduce_prev: bool):
        super().__init__()
        self.reduction = reduction
        self.adjust_left = (
            FactorizedReduction(c_prev, filters) if reduce_prev else ReluConvBn(c_prev, filters)
        )
        self.adjust_right = ReluConvBn(c_in, filters)
        if reduction:
            self.c0_left = BranchSeparables(filters, 5, 2)
            self.c0_right = BranchSeparables(filters, 7, 2)
            self.c1_right = BranchSeparables(filters, 7, 2)
            self.c2_right = BranchSeparables(filters, 5, 2)
            self.c4_left = BranchSeparables(filters, 3, 1)
            self.out_channels = 4 * filters
        else:
            self.c0_left = BranchSeparables(filters, 5, 1)
            self.c0_right = BranchSeparables(filters, 3, 1)
            self.c1_left = BranchSeparables(filters, 5, 1)
            self.c1_right = BranchSeparables(filters, 3, 1)
            self.c4_left = BranchSeparables(filters, 3, 1)
            self.out_channels = 6 * filters

    def forward(
        self, x: Tensor, x_prev: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]
    ) -> Tensor:
        left = self.adjust_left(x_prev)
        right = self.adjust_right(x)
        if self.reduction:

            def branch1() -> tuple[Tensor, Tensor]:
                c0 = self.c0_left(right) + self.c0_right(left)
                return c0, self.c4_left(c0) + max3(right)

            def branch2() -> tuple[Tensor, Tensor]:
                c1 = max3(right) + self.c1_right(left)
                return c1, avg3(right, 2) + self.c2_right(left)

            (c0, c4), (c1, c2) = fork_join(device, streams, [branch1, branch2])
            c3 = avg3(c0) + c1
            return torch.cat((c1, c2, c3, c4), dim=1)

        def normal1() -> tuple[Tensor, Tensor, Tensor]:
            c0 = self.c0_left(right) + self.c0_right(left)
            c4 = self.c4_left(right) + right
            return c0, avg3(right) + left, c4

        def normal2() -> tuple[Tensor, Tensor]:
            c1 = self.c1_left(left) + self.c1_right(left)
            return c1, avg3(left) + avg3(left)

        (c0, c2, c4), (c1, c3) = fork_join(device, streams, [normal1, normal2])
        return torch.cat((left, c0, c1, c2, c3, c4), dim=1)


class NASNetAMobile(nn.Module):
    def __init__(self, stem: int, filters: int, cells: int, classes: int) -> None:
        super().__init__()
        self.conv0 = nn.Sequential(nn.Conv2d(3, stem, 3, 2, bias=False), bn(stem))
        layers: list[Cell] = []
        # (filters, reduction, previous output on a finer grid)
        plan = [(filters // 4, True, False), (filters // 2, True, True)]
        for stage in range(3):
            f = filters * 2**stage
            plan += [(f, False, i == 0) for i in range(cells)]
            if stage < 2:
                plan.append((2 * f, True, False))
        c_prev, c_in = stem, stem
        for f, reduction, reduce_prev in plan:
            cell = Cell(c_prev, c_in, f, reduction, reduce_prev)
            layers.append(cell)
            c_prev, c_in = c_in, cell.out_channels
        self.cells = nn.ModuleList(layers)
        self.last_linear = nn.Linear(c_in, classes)

    def forward(self, x: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]):
        x = self.conv0(x)
        x_prev = x
        for cell in self.cells:
            x, x_prev = cell(x, x_prev, device, streams), x
        return self.last_linear(torch.relu(x).mean((2, 3)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, filters, cells, classes = 2, 32, 8, 1, 10
    else:
        batch, image, filters, cells, classes = 4, 224, FILTERS, CELLS, 1000
    dtype = low_precision(device)
    model = NASNetAMobile(STEM, filters, cells, classes)
    random_batch_norm_stats(model)
    model = model.to(device, dtype, memory_format=torch.channels_last).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images, device, streams)

    inputs = conv_input(batch, image, device, dtype)
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"NASNet-A Mobile: {len(model.cells)} cells ({cells} normal a stage, filters {filters}), "
        f"each cell's branches on 2 side streams, {image} px, {precision} channels-last, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
