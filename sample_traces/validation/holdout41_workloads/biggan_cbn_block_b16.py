"""Two BigGAN generator residual blocks (Brock et al., 2019: class-conditional BatchNorm whose
gains and biases are linear in a shared class embedding concatenated with a chunk of the noise,
nearest 2x upsampling, 3 x 3 convolutions) taking 256 channels from 16 x 16 to 64 x 64 for 16
samples (forty-first hold-out): bf16 on a GPU, eval mode, no gradients, no self-attention block
and no spectral norm (eval weights are already normalized). Inputs: the features entering the
blocks (16, 256, 16, 16), the class labels (16,) int64 in 0..999, and the 2 noise chunks (16,
40), 20 per block (BigGAN splits z over its blocks). The shared class embedding
``nn.Embedding(1000, 128)``; each block's condition is the embedding concatenated with its noise
chunk (16, 148). A conditional BatchNorm: ``F.batch_norm`` with the running statistics (set at
build) and no affine, then times 1 + ``Linear(148, 256, bias=False)`` of the condition and plus
``Linear(148, 256, bias=False)`` of it, per sample and channel. Each block: CBN, ReLU, nearest
2x upsampling (``F.interpolate``), ``Conv2d(256, 256, 3, padding 1)``, CBN, ReLU,
``Conv2d(256, 256, 3, padding 1)``; plus the shortcut, the upsampled input through ``Conv2d(256,
256, 1)``. Block 1 at 32 x 32, block 2 at 64 x 64: 3 x 3 convolutions over 16 x 4,096 pixels of
256 channels and elementwise normalization passes over 16.8 M values. Returns the (16, 256, 64,
64) output of the second block (bf16 on a GPU).

    traceinspect profile biggan_cbn_block_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES, SHARED, Z_CHUNK, BLOCKS, BN_EPS = 1000, 128, 20, 2, 1e-5


class ConditionalBatchNorm(nn.Module):
    def __init__(self, c: int, cond: int) -> None:
        super().__init__()
        self.gain, self.bias = nn.Linear(cond, c, bias=False), nn.Linear(cond, c, bias=False)
        self.register_buffer("running_mean", torch.randn(c) * 0.1)
        self.register_buffer("running_var", torch.rand(c) + 0.5)

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        out = F.batch_norm(x, self.running_mean, self.running_var, training=False, eps=BN_EPS)
        gain = (1 + self.gain(y))[:, :, None, None]
        return out * gain + self.bias(y)[:, :, None, None]


def up(x: Tensor) -> Tensor:
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


class GBlock(nn.Module):
    def __init__(self, cin: int, cout: int, cond: int) -> None:
        super().__init__()
        self.bn1, self.bn2 = ConditionalBatchNorm(cin, cond), ConditionalBatchNorm(cout, cond)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.shortcut = nn.Conv2d(cin, cout, 1)

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        h = self.conv1(up(F.relu(self.bn1(x, y))))
        h = self.conv2(F.relu(self.bn2(h, y)))
        return h + self.shortcut(up(x))


class Generator(nn.Module):
    def __init__(self, c: int, classes: int) -> None:
        super().__init__()
        self.shared = nn.Embedding(classes, SHARED)
        self.blocks = nn.ModuleList(GBlock(c, c, SHARED + Z_CHUNK) for _ in range(BLOCKS))

    def forward(self, h: Tensor, labels: Tensor, z: Tensor) -> Tensor:
        shared = self.shared(labels)
        for block, chunk in zip(self.blocks, z.split(Z_CHUNK, dim=1), strict=True):
            h = block(h, torch.cat([shared, chunk], dim=1))
        return h


def build(device: torch.device, smoke: bool) -> Built:
    batch, c, size, classes = (2, 16, 4, 10) if smoke else (16, 256, 16, CLASSES)
    dtype = low_precision(device)
    model = Generator(c, classes).to(device, dtype).eval()

    @torch.no_grad()
    def step(h: Tensor, labels: Tensor, z: Tensor) -> Tensor:
        return model(h, labels, z)

    inputs = [
        (
            torch.randn(batch, c, size, size, device=device, dtype=dtype),
            torch.randint(classes, (batch,), device=device),
            torch.randn(batch, BLOCKS * Z_CHUNK, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"BigGAN generator: {BLOCKS} residual blocks with class-conditional BatchNorm (shared "
        f"embedding + z chunk), nearest 2x upsampling, 3 x 3 convs, {c} channels "
        f"{size} -> {size * 2**BLOCKS}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
