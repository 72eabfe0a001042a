"""Two DenseNet-121 dense blocks with the transition layer between them (Huang et al., 2017,
laid out as torchvision's ``_DenseBlock`` / ``_DenseLayer`` / ``_Transition``, growth rate 32,
bottleneck width 4 x 32 = 128, no dropout), the first block as DenseNet-121's (6 layers) and the
second cut from 12 layers to 6, on the stem output of 8 images of 224 x 224 (fortieth hold-out):
bf16 on a GPU, eval mode, no gradients; every BatchNorm in eval mode with running statistics set
at build, every convolution ``bias=False``. Input: the (8, 64, 56, 56) features after
DenseNet-121's stem. Each dense layer takes ``torch.cat`` of the block input and every earlier
layer's output along the channels (64 + 32 i channels in the first block), BatchNorm + ReLU, a 1
x 1 ``Conv2d(64 + 32 i, 128)``, BatchNorm + ReLU and a 3 x 3 ``Conv2d(128, 32, padding 1)``; the
block returns the concatenation of its input and all 6 new feature maps. First block at 56 x 56:
64 -> 256 channels. Transition: BatchNorm + ReLU, a 1 x 1 ``Conv2d(256, 128)`` and a 2 x 2
average pool (stride 2) to (8, 128, 28, 28). Second block at 28 x 28: 128 -> 320 channels. A
growing concatenation copy before every layer, small convolutions (32 output channels) and
elementwise BatchNorm / ReLU passes over the concatenated maps. Returns the (8, 320, 28, 28)
features (bf16 on a GPU).

    traceinspect profile densenet_dense_block_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from torch import Tensor, nn

LAYERS, BN_SIZE = 6, 4


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        mid = BN_SIZE * growth
        self.body = nn.Sequential(
            nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, mid, 1, bias=False),
            nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, growth, 3, padding=1, bias=False),
        )  # fmt: skip

    def forward(self, features: list[Tensor]) -> Tensor:
        return self.body(torch.cat(features, dim=1))


class DenseBlock(nn.Module):
    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(cin + i * growth, growth) for i in range(LAYERS))

    def forward(self, x: Tensor) -> Tensor:
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, dim=1)


def transition(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), nn.AvgPool2d(2, 2)
    )


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, growth, size = (2, 16, 8, 16) if smoke else (8, 64, 32, 56)
    dtype = low_precision(device)
    mid = c + LAYERS * growth
    model = nn.Sequential(
        DenseBlock(c, growth), transition(mid, mid // 2), DenseBlock(mid // 2, growth)
    )
    random_batch_norm_stats(model)
    model = model.to(device, dtype).eval()
    out = mid // 2 + LAYERS * growth

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, c, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"DenseNet-121 dense blocks: {LAYERS} layers (growth {growth}, concat of all earlier "
        f"maps) {c} -> {mid} at {size}, transition, {LAYERS} layers {mid // 2} -> {out} at "
        f"{size // 2}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
