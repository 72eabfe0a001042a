"""A multi-scale head of three MobileNetV2 towers (Sandler et al., 2018), one per feature level
of a 512 x 512 image and each on its own side stream, for 8 images in fp32 (fifty-fourth
hold-out: three concurrent chains of memory-bound kernels over 8 to 25 MB tensors, PyTorch's own
depthwise 3x3 convolution kernel (fp32 NCHW does not take cuDNN's depthwise path), cuDNN's 1x1
convolutions and inference BatchNorm, ReLU6 and residual adds, side by side), as the parallel
per-resolution branches of a multi-branch network refine a backbone's levels (HRNet-style
branches, the per-level towers of an SSDLite-like head) before they are pooled together. Each
tower is a stack of 4 inverted residual blocks laid out as torchvision's ``InvertedResidual``
(expansion 6: a 1x1 ``Conv2d`` to 6x the channels, ``BatchNorm2d``, ReLU6, the depthwise
``Conv2d(k 3, padding 1, groups = channels)``, ``BatchNorm2d``, ReLU6, the 1x1 projection and
its ``BatchNorm2d``, plus the block's input where the shapes match; convolutions without
bias). Side stream 1, the stride-8 level C3 (8, 32, 64, 64): 4 blocks 32 -> 32 (192 channels
inside, 25 MB a tensor); side stream 2, the stride-16 level C4 (8, 96, 32, 32): 4 blocks 96 ->
96 (576 inside, 19 MB); side stream 3, the stride-32 level C5 (8, 160, 16, 16): 3 blocks 160 ->
160 and one 160 -> 320 (960 inside, 7.9 MB), the shapes of MobileNetV2's own stages at those
strides. Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream``
on the branch outputs outside capture). After the join, on the current stream: each tower's
output average-pooled, the three concatenated (8, 448) and a ``Linear(448, 1000)``. Eval mode
with BatchNorm running statistics drawn at build (as after training), no gradients, NCHW, fp32
(the 1x1 convolutions may use TF32, PyTorch's default for cuDNN). Inputs (two input sets): the
three levels, random. Returns the logits (8, 1000).

    traceinspect profile mbv2_multiscale_towers_3streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _models import InvertedResidual, random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

EXPAND, CLASSES = 6, 1000


def tower(channels: int, blocks: int, out: int) -> nn.Sequential:
    """``blocks`` inverted residuals at ``channels``, the last one to ``out`` channels."""
    return nn.Sequential(
        *(
            InvertedResidual(channels, out if i == blocks - 1 else channels, 1, EXPAND)
            for i in range(blocks)
        )
    )


class MultiScaleHead(nn.Module):
    def __init__(self, levels: tuple[tuple[int, int], ...], blocks: int) -> None:
        super().__init__()
        self.towers = nn.ModuleList(tower(c, blocks, out) for c, out in levels)
        self.fc = nn.Linear(sum(out for _, out in levels), CLASSES)

    def head(self, outs: list[Tensor]) -> Tensor:
        return self.fc(torch.cat([o.mean(dim=(2, 3)) for o in outs], dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, blocks, levels = 2, 16, 2, ((8, 8), (16, 16), (24, 32))
    else:
        batch, size, blocks, levels = 8, 64, 4, ((32, 32), (96, 96), (160, 320))
    model = MultiScaleHead(levels, blocks)
    random_batch_norm_stats(model)
    model = model.to(device).eval()
    streams = side_streams(device, len(levels))

    @torch.no_grad()
    def step(c3: Tensor, c4: Tensor, c5: Tensor) -> Tensor:
        outs = fork_join(
            device,
            streams,
            [lambda: model.towers[0](c3), lambda: model.towers[1](c4), lambda: model.towers[2](c5)],
        )
        return model.head(outs)

    def make() -> tuple[Tensor, ...]:
        return tuple(
            torch.randn(batch, c, size >> i, size >> i, device=device)
            for i, (c, _) in enumerate(levels)
        )

    inputs = [make() for _ in range(2)]
    shapes = ", ".join(f"{c}x{size >> i}x{size >> i}" for i, (c, _) in enumerate(levels))
    description = (
        f"3 MobileNetV2 towers ({blocks} inverted residuals, expand {EXPAND}, fp32 depthwise) "
        f"over levels {shapes} on 3 side streams, pooled + Linear {CLASSES}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
