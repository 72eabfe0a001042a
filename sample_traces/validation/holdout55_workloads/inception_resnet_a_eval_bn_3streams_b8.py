"""The Inception-ResNet-A stage of Inception-ResNet-v2 (Szegedy et al., 2017, "Inception-v4,
Inception-ResNet and the Impact of Residual Connections on Learning"), its ten residual blocks
one after the other on 8 images at the stage's 35 x 35 resolution, each block's three branches
on three side streams (fifty-fifth hold-out: per block three concurrent chains of 3, 6 and 9
small kernels, cuDNN convolutions each followed by cuDNN's inference BatchNorm kernel and a
ReLU over fp32 NCHW maps of 1.3 to 2.5 MB, so the memory-bound batch norms and activations of
one branch run beside the convolutions and batch norms of the others, then a join and five
kernels on the current stream; ten fork / join rounds in all), laid out as timm's
``inception_resnet_v2`` (``Block35`` with ``scale=0.17``, ``BasicConv2d``). A block on x (8,
320, 35, 35): branch 0 a ``BasicConv2d(320, 32, 1)``; branch 1 ``BasicConv2d(320, 32, 1)``
then ``BasicConv2d(32, 32, 3, padding 1)``; branch 2 ``BasicConv2d(320, 32, 1)``,
``BasicConv2d(32, 48, 3, padding 1)`` and ``BasicConv2d(48, 64, 3, padding 1)``; each
``BasicConv2d`` a ``Conv2d`` without bias, a ``BatchNorm2d(eps=0.001)`` and a ReLU (not in
place), three kernels. The batch norms are not folded into the convolutions (as a plain
``model.eval()`` leaves them): eval mode with running statistics drawn at build, as after
training, and fp32 NCHW inputs with fp32 parameters, so PyTorch hands them to cuDNN
(``cudnn_batch_norm``, its inference kernel), not to its native batch-norm kernels. Side
stream 1, branch 0; side stream 2, branch 1; side stream 3, branch 2. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: the three outputs concatenated over the
channels (8, 128, 35, 35), the ``Conv2d(128, 320, 1)`` with bias, times 0.17, plus the block's
input, ReLU. fp32 throughout (the convolutions may use TF32, PyTorch's default for cuDNN), no
gradients. Input (two input sets): the stage's input (8, 320, 35, 35), as the ``mixed_5b``
block hands it over for a 299 x 299 image, random and non-negative (it follows a ReLU).
Returns the stage's output (8, 320, 35, 35).

    traceinspect profile inception_resnet_a_eval_bn_3streams_b8.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS, SCALE, BN_EPS = 10, 0.17, 1e-3


class BasicConv2d(nn.Module):
    """timm's BasicConv2d: Conv2d (no bias), BatchNorm2d (eps 0.001), ReLU (not in place)."""

    def __init__(self, c_in: int, c_out: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out, eps=BN_EPS)
        self.act = nn.ReLU(inplace=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.act(self.bn(self.conv(x)))


class Block35(nn.Module):
    """timm's Block35 at ``channels`` (320) with branch width ``w`` (32)."""

    def __init__(self, channels: int, w: int) -> None:
        super().__init__()
        self.branch0 = BasicConv2d(channels, w, 1)
        self.branch1 = nn.Sequential(BasicConv2d(channels, w, 1), BasicConv2d(w, w, 3))
        self.branch2 = nn.Sequential(
            BasicConv2d(channels, w, 1),
            BasicConv2d(w, 3 * w // 2, 3),
            BasicConv2d(3 * w // 2, 2 * w, 3),
        )
        self.conv2d = nn.Conv2d(4 * w, channels, 1)
        self.act = nn.ReLU()

    def merge(self, x: Tensor, x0: Tensor, x1: Tensor, x2: Tensor) -> Tensor:
        out = self.conv2d(torch.cat((x0, x1, x2), 1))
        return self.act(out * SCALE + x)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, channels, w, blocks = 2, 9, 40, 8, 2
    else:
        batch, size, channels, w, blocks = 8, 35, 320, 32, BLOCKS
    model = nn.ModuleList(Block35(channels, w) for _ in range(blocks))
    random_batch_norm_stats(model)
    model = model.to(device).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        for blk in model:
            branches = [partial(b, x) for b in (blk.branch0, blk.branch1, blk.branch2)]
            x = blk.merge(x, *fork_join(device, streams, branches))
        return x

    inputs = [(torch.randn(batch, channels, size, size, device=device).relu(),) for _ in range(2)]
    description = (
        f"Inception-ResNet-A x {blocks} ({channels} ch, branches 1x1 / 1x1-3x3 / 1x1-3x3-3x3 "
        f"of {w}-{2 * w}, conv + eval cuDNN BN + ReLU) with the 3 branches on 3 side streams, "
        f"fp32 NCHW, b{batch} at {size}x{size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
