"""Two-stream action recognition (Simonyan and Zisserman style) with the RGB net and the
optical-flow net on two side streams and late fusion after the join (thirty-fifth hold-out):
4 clips, bf16 on a GPU, eval mode, no gradients. Each stream is a small ResNet-style conv net
of the same shape: a stem ``Conv2d(in, 64, 7 x 7, stride 2, padding 3, bias=False)`` +
BatchNorm + ReLU and a 3 x 3 / 2 max pool (224 -> 56), then 4 stages of one basic block each
(two ``Conv2d(3 x 3, padding 1, bias=False)`` + BatchNorm, a ReLU between them, a residual
add and a ReLU; a 1 x 1 ``Conv2d`` + BatchNorm shortcut where the shape changes), 64 / 128 /
256 / 512 channels, stride 2 on the first conv from the second stage on (56 -> 7). All
BatchNorms are in eval mode with running statistics set at build. The RGB net reads one frame
(4, 3, 224, 224) on one side stream; the flow net reads 10 stacked optical-flow frames, x and
y each, (4, 20, 224, 224) on the other. Both are forked from the current stream and joined
back with the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). After the join, on the current stream: the global average pool of
both (4, 512) maps, their concat (4, 1024), ``Linear(1024, 512)`` + ReLU + ``Linear(512,
101)``, plus the average of each stream's own ``Linear(512, 101)`` logits. On a CPU the nets
run in order. Inputs: RGB (4, 3, 224, 224), flow (4, 20, 224, 224). Returns the (4, 101)
class logits (fp32).

    traceinspect profile video_two_stream_rgb_flow_b4.py
"""

from __future__ import annotations

from itertools import pairwise

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

CLASSES, FLOW_FRAMES = 101, 10


def conv_bn(cin: int, cout: int, kernel: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(cout)
    )


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = conv_bn(cin, cout, 3, stride)
        self.conv2 = conv_bn(cout, cout, 3, 1)
        self.shortcut = (
            conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        y = self.conv2(F.relu(self.conv1(x)))
        return F.relu(y + self.shortcut(x))


class StreamNet(nn.Module):
    def __init__(self, cin: int, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn(cin, widths[0], 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        strides = (1,) + (2,) * (len(widths) - 1)
        self.stages = nn.Sequential(
            *(
                BasicBlock(a, b, s)
                for (a, b), s in zip(pairwise((widths[0], *widths)), strides, strict=True)
            )
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.stages(self.stem(x))  # (b, widths[-1], size / 32, size / 32)


class LateFusion(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fuse = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, CLASSES))
        self.rgb_fc = nn.Linear(width, CLASSES)
        self.flow_fc = nn.Linear(width, CLASSES)

    def forward(self, rgb: Tensor, flow: Tensor) -> Tensor:
        a, b = rgb.mean(dim=(2, 3)), flow.mean(dim=(2, 3))
        fused = self.fuse(torch.cat([a, b], dim=1))
        return fused + 0.5 * (self.rgb_fc(a) + self.flow_fc(b))


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, widths = (2, 32, (8, 16, 16, 32)) if smoke else (4, 224, (64, 128, 256, 512))
    dtype = low_precision(device)
    rgb_net = StreamNet(3, widths)
    flow_net = StreamNet(2 * FLOW_FRAMES, widths)
    fusion = LateFusion(widths[-1])
    model = nn.ModuleList([rgb_net, flow_net, fusion])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(rgb: Tensor, flow: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: rgb_net(rgb), lambda: flow_net(flow)])
        return fusion(a, b).float()

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype),
            torch.randn(batch, 2 * FLOW_FRAMES, size, size, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"two-stream RGB / optical-flow ResNet-style nets on 2 side streams + late fusion, "
        f"b{batch} at {size}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
