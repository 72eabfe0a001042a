"""SKNet-50 (Li, Wang, Hu and Yang, CVPR 2019: selective kernel networks, each bottleneck's 3 x 3
grouped convolution replaced by two paths of different receptive fields fused by a channel attention
that selects between them) classifying 16 ImageNet images at 224 x 224, each selective kernel unit's
two paths on two side streams (sixty-second hold-out: fp16, sixteen program fork / joins a step: the
7 x 7 stem and max pool on the current stream; then in each of the 3, 4, 6 and 3 units of the four
stages, the first 1 x 1 convolution, BatchNorm and ReLU on the current stream, the 3 x 3 grouped
path (32 groups) on side stream 1 beside the 3 x 3 grouped path dilated by 2 (a 5 x 5 receptive
field) on side stream 2, each with its BatchNorm and ReLU, then after the join the fuse (the paths'
sum, the global average pool, the 1 x 1 reduction to d channels with BatchNorm and ReLU), the select
(the 1 x 1 expansion to both paths' attention logits and the softmax across the paths), the weighted
sum, the last 1 x 1 convolution and BatchNorm, the shortcut and ReLU; some 400 to 500 kernels, most
of them small cuDNN convolutions and memory-bound elementwise kernels; some 1.5 to 4 ms of GPU
time). Laid out as the paper's SKNet-50 (Table 1: stages of 3, 4, 6 and 3 units, each [1 x 1, 128 /
256 / 512 / 1024; SK[M = 2, G = 32, r = 16], 128 / 256 / 512 / 1024; 1 x 1, 256 / 512 / 1024 /
2048]; d = max(C / r, L) with L = 32; the 5 x 5 kernel as a 3 x 3 dilated by 2, as the paper
suggests) and timm's ``SelectiveKernel`` / ``SelectiveKernelAttn`` (the select's logits viewed as M
x C for the softmax over M; the stride on the selective kernel convolution of each stage's first
unit and a strided 1 x 1 convolution and BatchNorm on its shortcut), the head an average pool and
``Linear(2048, 1000)``. fp16 weights and activations on a GPU (fp32 on a CPU), eval (BatchNorm on
random running statistics), no gradients, random weights (torch's defaults). Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). Input (two input sets): the images (16, 3, 224, 224) fp16, Gaussian. Returns the logits
(16, 1000).

    traceinspect profile sknet50_selective_kernel_paths_fp16_2streams_b16.py
"""

from __future__ import annotations

from collections.abc import Sequence

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

UNITS, WIDTH, GROUPS, RATIO, MIN_D = (3, 4, 6, 3), 128, 32, 16, 32


def conv_bn(cin: int, cout: int, k: int, stride: int = 1, dilation: int = 1, groups: int = 1):
    pad = dilation * (k - 1) // 2
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    )


class SKUnit(nn.Module):
    def __init__(self, cin: int, mid: int, stride: int, groups: int) -> None:
        super().__init__()
        cout = 2 * mid
        self.conv1 = conv_bn(cin, mid, 1)
        self.paths = nn.ModuleList(
            conv_bn(mid, mid, 3, stride, dilation, min(groups, mid)) for dilation in (1, 2)
        )
        d = max(mid // RATIO, MIN_D)
        self.conv_reduce = conv_bn(mid, d, 1)
        self.conv_select = nn.Conv2d(d, 2 * mid, 1, bias=False)
        self.conv3 = conv_bn(mid, cout, 1)
        self.shortcut = (
            conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else nn.Identity()
        )

    def forward(self, x: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]):
        y = torch.relu(self.conv1(x))
        small, dilated = self.paths
        u1, u2 = fork_join(
            device, streams, [lambda: torch.relu(small(y)), lambda: torch.relu(dilated(y))]
        )
        s = (u1 + u2).mean((2, 3), keepdim=True)
        z = torch.relu(self.conv_reduce(s))
        b, c = u1.shape[:2]
        attn = torch.softmax(self.conv_select(z).view(b, 2, c, 1, 1), dim=1)
        v = u1 * attn[:, 0] + u2 * attn[:, 1]
        return torch.relu(self.conv3(v) + self.shortcut(x))


class SKNet(nn.Module):
    def __init__(self, units: tuple[int, ...], width: int, groups: int, classes: int) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 64, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks = []
        cin = 64
        for stage, n in enumerate(units):
            mid = width * 2**stage
            for i in range(n):
                blocks.append(SKUnit(cin, mid, 2 if stage > 0 and i == 0 else 1, groups))
                cin = 2 * mid
        self.units = nn.ModuleList(blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: Tensor, device: torch.device, streams: Sequence[torch.cuda.Stream]):
        x = self.stem(x)
        for unit in self.units:
            x = unit(x, device, streams)
        return self.fc(x.mean((2, 3)))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, units, width, groups, classes = 2, 32, (1, 1, 1, 1), 8, 4, 10
    else:
        batch, image, units, width, groups, classes = 16, 224, UNITS, WIDTH, GROUPS, 1000
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = SKNet(units, width, groups, classes)
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return model(images, device, streams)

    inputs = [(torch.randn(batch, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"SKNet-50: {sum(units)} SK units {units} (M=2, G={groups}, r={RATIO}), 3x3 path beside "
        f"dilated 3x3 path on 2 side streams per unit, {image} px, {precision}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
