"""Flip test-time augmentation of a light FPN segmentation decoder over 4 images of 512 x 512,
the image's decoder pass on one side stream and its mirror's on the other (fifty-fourth
hold-out: two concurrent chains of upsampling and elementwise kernels, nearest and bilinear
``F.interpolate`` and residual adds over fp32 maps of 2 to 80 MB, memory-bound, between a few
cheap 1x1 convolutions), after torchvision's ``FeaturePyramidNetwork`` top-down path and the
semantic branch of Panoptic FPN (Kirillov et al., 2019), lightened: no 3x3 convolutions. Each
pass takes a ResNet-50 backbone's four levels, C2 (4, 256, 128, 128), C3 (4, 512, 64, 64), C4
(4, 1024, 32, 32), C5 (4, 2048, 16, 16), as inputs. The top-down path, as torchvision's:
``Conv2d(c, 128, 1)`` laterals; from C5 down, the coarser result upsampled to the next level's
size (``F.interpolate(mode="nearest")``) and added to its lateral (P5 .. P2, 128 channels).
The semantic fusion, as Panoptic FPN's without its 3x3 stages: P3, P4 and P5 upsampled
bilinearly (``align_corners=False``) to P2's 128 x 128 (x2, x4, x8) and summed with P2 (each
128-channel map at 128 x 128 is 33.5 MB), a ``Conv2d(128, 19, 1)`` classifier (Cityscapes'
19 classes) and the logits upsampled bilinearly x4 to 512 x 512 (80 MB), as Panoptic FPN
scales its semantic logits to the image. Side stream 1, the image's features; side stream 2,
the mirrored image's (its backbone features, the image's mirrored along the width at build),
through the same decoder. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). After the join, on the current
stream: the mirror's logits flipped back (``flip(-1)``) and averaged with the image's, as
flip TTA does. fp32 throughout, as detectron2's inference runs (the 1x1 convolutions may use
TF32, PyTorch's default for cuDNN), eval mode, no gradients. Inputs (two input sets): the
image's four levels and the mirror's four levels, eight tensors. Returns the averaged logits
(4, 19, 512, 512).

    traceinspect profile fpn_upsample_flip_tta_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

IN_CHANNELS, WIDTH, CLASSES, STRIDE = (256, 512, 1024, 2048), 128, 19, 4


class LightFPNDecoder(nn.Module):
    def __init__(self, in_channels: tuple[int, ...], width: int) -> None:
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in in_channels)
        self.classifier = nn.Conv2d(width, CLASSES, 1)

    def forward(self, *feats: Tensor) -> Tensor:  # feats: C2 .. C5, finest first
        last = self.lateral[-1](feats[-1])
        levels = [last]
        for i in range(len(feats) - 2, -1, -1):  # torchvision's top-down, no 3x3 layer blocks
            lateral = self.lateral[i](feats[i])
            last = lateral + F.interpolate(last, size=lateral.shape[-2:], mode="nearest")
            levels.insert(0, last)
        size = levels[0].shape[-2:]
        fused = levels[0]
        for p in levels[1:]:  # Panoptic FPN's fusion, without its 3x3 stages
            fused = fused + F.interpolate(p, size=size, mode="bilinear", align_corners=False)
        logits = self.classifier(fused)
        image = (size[0] * STRIDE, size[1] * STRIDE)
        return F.interpolate(logits, size=image, mode="bilinear", align_corners=False)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, in_channels, width = 2, 32, (8, 16, 32, 64), 8
    else:
        batch, size, in_channels, width = 4, 512, IN_CHANNELS, WIDTH
    model = LightFPNDecoder(in_channels, width).to(device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(*feats: Tensor) -> Tensor:
        image, mirror = feats[: len(in_channels)], feats[len(in_channels) :]
        a, b = fork_join(device, streams, [lambda: model(*image), lambda: model(*mirror)])
        return (a + b.flip(-1)) / 2

    def make() -> tuple[Tensor, ...]:
        image = [
            torch.randn(batch, c, size // (STRIDE << i), size // (STRIDE << i), device=device)
            for i, c in enumerate(in_channels)
        ]
        return (*image, *(f.flip(-1) for f in image))

    inputs = [make() for _ in range(2)]
    description = (
        f"light FPN seg decoder (1x1 laterals -> {width}, nearest top-down, bilinear fusion, "
        f"{CLASSES} classes, x{STRIDE} bilinear) x 2 for flip TTA on 2 side streams, fp32, "
        f"b{batch} at {size}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
