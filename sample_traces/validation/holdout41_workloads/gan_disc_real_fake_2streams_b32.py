"""A GAN discriminator evaluation step: one DCGAN discriminator (Radford et al., 2016, the 64 x
64 layout, no spectral norm) scoring a real batch on one side stream and a fake batch on the
other, the same module and weights in both, and the hinge losses after the join (forty-first
hold-out): 32 real and 32 generated images of 3 x 64 x 64, bf16 on a GPU (the losses in fp32),
eval mode, no gradients; every BatchNorm in eval mode with running statistics set at build. The
discriminator, 5 convolutions of kernel 4 (``bias=False``): ``Conv2d(3, 64, 4, 2, 1)`` +
LeakyReLU(0.2) to 32 x 32; ``Conv2d(64, 128, 4, 2, 1)``, ``Conv2d(128, 256, 4, 2, 1)`` and
``Conv2d(256, 512, 4, 2, 1)``, each + BatchNorm + LeakyReLU(0.2), to 16 x 16, 8 x 8 and 4 x 4;
``Conv2d(512, 1, 4)`` (stride 1, no padding, DCGAN's last layer, no sigmoid) to one logit per
image. Side stream 1: the discriminator on the real batch; side stream 2: on the fake batch; each
branch returns its (32,) logits in fp32. Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). After the join,
on the current stream, in fp32: the hinge losses, the discriminator's mean(relu(1 - D(real))) +
mean(relu(1 + D(fake))) and the generator's -mean(D(fake)), and the fraction of real images the
discriminator scores above 0 (its accuracy on the real batch). On a CPU the branches run in
order. Inputs: real and fake images (32, 3, 64, 64), in [-1, 1]. Returns the discriminator loss,
the generator loss and the real accuracy (scalars), fp32.

    traceinspect profile gan_disc_real_fake_2streams_b32.py
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

SLOPE = 0.2


def discriminator(width: int) -> nn.Sequential:
    widths = (width, 2 * width, 4 * width, 8 * width)
    layers: list[nn.Module] = [nn.Conv2d(3, width, 4, 2, 1, bias=False), nn.LeakyReLU(SLOPE)]
    for cin, cout in pairwise(widths):
        layers += [nn.Conv2d(cin, cout, 4, 2, 1, bias=False), nn.BatchNorm2d(cout)]
        layers.append(nn.LeakyReLU(SLOPE))
    layers += [nn.Conv2d(widths[-1], 1, 4, bias=False), nn.Flatten()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, width = (2, 8) if smoke else (32, 64)
    dtype = low_precision(device)
    disc = discriminator(width)
    random_batch_norm_stats(disc)
    disc = disc.to(device, dtype).eval()
    streams = side_streams(device, 2)

    def score(images: Tensor) -> Tensor:
        return disc(images)[:, 0].float()

    @torch.no_grad()
    def step(real: Tensor, fake: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        d_real, d_fake = fork_join(device, streams, [lambda: score(real), lambda: score(fake)])
        d_loss = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
        g_loss = -d_fake.mean()
        accuracy = (d_real > 0).float().mean()
        return d_loss, g_loss, accuracy

    inputs = [
        tuple((torch.rand(batch, 3, 64, 64, device=device) * 2 - 1).to(dtype) for _ in range(2))
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"DCGAN discriminator ({width}-{8 * width} channels, 64 x 64) on a real and a fake batch "
        f"on 2 side streams, shared weights + hinge losses, b{batch} each",
        [disc],
    )


if __name__ == "__main__":
    main(build, __doc__)
