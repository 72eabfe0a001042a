"""MobileViT blocks (Mehta & Rastegari, 2022) (thirtieth hold-out): 8 feature maps of 96
channels at 32 x 32, fp16 on a GPU. Each of 2 blocks: a 3 x 3 convolution and a 1 x 1
projection to 144 channels (BatchNorm + SiLU each), the map unfolded into 2 x 2 patches
(``reshape`` + ``permute``: 4 pixel positions x 256 patches), 2 Transformer layers of 144
channels over the 256 patches of each position (pre-norm, 4 heads, SiLU MLP x 2), folded
back, a 1 x 1 projection to 96, concatenated with the block input and fused by a 3 x 3
convolution; between the blocks an inverted residual (expand x 4, depthwise 3 x 3,
project). One stream.

    traceinspect profile mobilevit_block_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn


def conv_bn(cin: int, cout: int, k: int, groups: int = 1, act: bool = True) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(cin, cout, k, 1, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]
    if act:
        layers.append(nn.SiLU())
    return nn.Sequential(*layers)


class TransformerLayer(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).transpose(1, 3).unbind(2)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(a)
        return x + self.fc2(F.silu(self.fc1(self.norm2(x))))


class MobileViTBlock(nn.Module):
    def __init__(self, c: int, d: int, heads: int) -> None:
        super().__init__()
        self.local = nn.Sequential(conv_bn(c, c, 3), conv_bn(c, d, 1))
        self.layers = nn.Sequential(TransformerLayer(d, heads), TransformerLayer(d, heads))
        self.norm = nn.LayerNorm(d)
        self.project = conv_bn(d, c, 1)
        self.fuse = conv_bn(2 * c, c, 3)

    def forward(self, x: Tensor) -> Tensor:
        y = self.local(x)
        b, d, h, w = y.shape
        patches = y.reshape(b, d, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1)
        seq = patches.reshape(b * 4, (h // 2) * (w // 2), d)
        seq = self.norm(self.layers(seq))
        y = seq.reshape(b, 2, 2, h // 2, w // 2, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.project(y)], dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, size, d, heads = (2, 8, 8, 16, 2) if smoke else (8, 96, 32, 144, 4)
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = (
        nn.Sequential(
            MobileViTBlock(c, d, heads),
            conv_bn(c, 4 * c, 1),
            conv_bn(4 * c, 4 * c, 3, groups=4 * c),
            conv_bn(4 * c, c, 1, act=False),
            MobileViTBlock(c, d, heads),
        )
        .to(device, dtype)
        .eval()
    )

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"2 MobileViT blocks c{c} d{d}, {size}x{size}, b{batch}", [model])


if __name__ == "__main__":
    main(build, __doc__)
