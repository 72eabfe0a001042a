"""The ResNet generator of CycleGAN (Zhu et al., 2017) translating 8 images of 256 x 256, as the
authors' ``ResnetGenerator`` lays it out with 9 residual blocks and instance normalization
(fiftieth hold-out: unpaired image-to-image translation, compute-bound on 3 x 3 convolutions of
256 channels at 64 x 64, with reflection padding and instance-norm kernels between them): a
``ReflectionPad2d(3)`` + ``Conv2d(3, 64, 7)`` + ``InstanceNorm2d`` + ReLU; two down-samplings,
``Conv2d(64, 128, 3, stride 2, padding 1)`` and ``Conv2d(128, 256, 3, stride 2, padding 1)``,
each + InstanceNorm + ReLU; 9 residual blocks at (256, 64, 64), each x + [ReflectionPad2d(1),
``Conv2d(256, 256, 3)``, InstanceNorm, ReLU, ReflectionPad2d(1), ``Conv2d(256, 256, 3)``,
InstanceNorm] (18 convolutions of 2.4 GMAC an image); two up-samplings,
``ConvTranspose2d(256, 128, 3, stride 2, padding 1, output_padding 1)`` and 128 -> 64 likewise,
each + InstanceNorm + ReLU; ``ReflectionPad2d(3)`` + ``Conv2d(64, 3, 7)`` + tanh. Some 50 GMAC
an image, 400 GMAC the batch. InstanceNorm2d without affine parameters or running statistics
(the default ``norm_layer`` of the authors' instance setting is affine=False), every convolution
with a bias (as with instance norm there). Dropout is off. bf16 on a GPU, eval mode, no
gradients, one stream. Input: the images (8, 3, 256, 256). Returns the translated images (8, 3,
256, 256).

    traceinspect profile cyclegan_resnet_generator_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS = 9


class ResnetBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(c, c, 3),
            nn.InstanceNorm2d(c),
            nn.ReLU(),
            nn.ReflectionPad2d(1),
            nn.Conv2d(c, c, 3),
            nn.InstanceNorm2d(c),
        )

    def forward(self, x: Tensor) -> Tensor:
        return x + self.body(x)


def resnet_generator(width: int, blocks: int) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.ReflectionPad2d(3),
        nn.Conv2d(3, width, 7),
        nn.InstanceNorm2d(width),
        nn.ReLU(),
    ]
    for mult in (1, 2):
        c = width * mult
        layers += [nn.Conv2d(c, 2 * c, 3, 2, 1), nn.InstanceNorm2d(2 * c), nn.ReLU()]
    layers += [ResnetBlock(4 * width) for _ in range(blocks)]
    for mult in (4, 2):
        c = width * mult
        layers += [
            nn.ConvTranspose2d(c, c // 2, 3, 2, 1, output_padding=1),
            nn.InstanceNorm2d(c // 2),
            nn.ReLU(),
        ]
    layers += [nn.ReflectionPad2d(3), nn.Conv2d(width, 3, 7), nn.Tanh()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, width, blocks = (1, 32, 8, 2) if smoke else (8, 256, 64, BLOCKS)
    dtype = low_precision(device)
    gen = resnet_generator(width, blocks).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(images: Tensor) -> Tensor:
        return gen(images)

    inputs = [
        (torch.rand(batch, 3, image, image, device=device, dtype=dtype) * 2 - 1,) for _ in range(2)
    ]
    description = (
        f"CycleGAN ResNet generator: {blocks} residual blocks at {4 * width} channels, "
        f"{image}x{image}, instance norm, b{batch}"
    )
    return Built(step, inputs, description, [gen])


if __name__ == "__main__":
    main(build, __doc__)
