"""CondConv-style dynamic convolution (Yang et al., 2019) (twenty-fifth hold-out): 16 feature
maps of 64 channels at 32 x 32, fp32, two layers with ReLU. In each, a router — global
average pooling, a Linear 64 -> 4 and a softmax — gives every sample weights over 4 expert
3 x 3 kernels (64 -> 64); a matmul of those weights with the experts (4 x 36,864) mixes one
kernel and one bias per sample, and a grouped convolution with 16 groups over the input
reshaped to 1 x 1,024 x 32 x 32 applies each sample's kernel to its own feature map. A
pooling, two small GEMMs, a softmax and one grouped convolution per layer; one stream.

    traceinspect profile dynamic_conv_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, EXPERTS, KERNEL = 2, 4, 3


class CondConv(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        fan_in = c * KERNEL * KERNEL
        self.router = nn.Linear(c, EXPERTS)
        self.weight = nn.Parameter(torch.randn(EXPERTS, c, c, KERNEL, KERNEL) * fan_in**-0.5)
        self.bias = nn.Parameter(0.01 * torch.randn(EXPERTS, c))

    def forward(self, x: Tensor) -> Tensor:
        b, c, h, w = x.shape
        route = torch.softmax(self.router(x.mean(dim=(2, 3))), dim=-1)  # b x EXPERTS
        weight = torch.matmul(route, self.weight.view(EXPERTS, -1))
        bias = torch.matmul(route, self.bias)
        y = F.conv2d(
            x.reshape(1, b * c, h, w),
            weight.view(b * c, c, KERNEL, KERNEL),
            bias.reshape(b * c),
            padding=KERNEL // 2,
            groups=b,
        )
        return y.view(b, c, h, w)


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, side = (2, 4, 8) if smoke else (16, 64, 32)
    layers: list[nn.Module] = []
    for _ in range(LAYERS):
        layers += [CondConv(c), nn.ReLU()]
    model = nn.Sequential(*layers).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, side, side, device=device),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"{LAYERS} CondConv layers, {EXPERTS} experts 3x3 {c}ch {side}x{side}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
