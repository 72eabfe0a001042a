"""A pix2pixHD-style multi-scale PatchGAN discriminator scoring 2 conditional image pairs of
512 x 512, one scale per side stream (forty-eighth hold-out: three discriminators with their own
weights on three resolutions of one input, branches of very unequal cost, joined by a loss): the
condition and the image, (2, 3, 512, 512) each, are concatenated to 6 channels on the current
stream and average-pooled twice (``AvgPool2d(3, stride 2, padding 1, count_include_pad=False)``)
to 256 x 256 and 128 x 128. Each scale's discriminator is pix2pixHD's ``NLayerDiscriminator``
with 3 layers and 64 base filters: ``Conv2d(6, 64, 4, stride 2, padding 2)`` + LeakyReLU(0.2);
``Conv2d(64, 128, 4, 2, 2)`` and ``Conv2d(128, 256, 4, 2, 2)``, each + InstanceNorm2d (no affine,
no running statistics) + LeakyReLU(0.2); ``Conv2d(256, 512, 4, 1, 2)`` + InstanceNorm2d +
LeakyReLU(0.2); ``Conv2d(512, 1, 4, 1, 2)``: a 67 x 67 patch map at 512, 35 x 35 at 256, 19 x 19
at 128 (about 27, 7 and 2 GMAC). After the join, each scale's LSGAN loss against the "real"
label, mean((D(x) - 1)^2) in fp32. bf16 on a GPU, channels-last, eval mode, no gradients. Fork
and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch
outputs outside capture). Inputs: the condition and the image, (2, 3, 512, 512) each. Returns
the three losses, (3,) fp32.

    traceinspect profile multiscale_patchgan_disc_3streams_b2.py
"""

from __future__ import annotations

from functools import partial

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

SCALES, NDF, LAYERS = 3, 64, 3


def patchgan(cin: int, ndf: int, layers: int) -> nn.Sequential:
    """pix2pixHD's NLayerDiscriminator (kernel 4, padding 2, instance norm)."""
    mods: list[nn.Module] = [nn.Conv2d(cin, ndf, 4, 2, 2), nn.LeakyReLU(0.2)]
    ch = ndf
    for i in range(1, layers + 1):
        out = min(ch * 2, 512)
        stride = 2 if i < layers else 1
        mods += [nn.Conv2d(ch, out, 4, stride, 2), nn.InstanceNorm2d(out), nn.LeakyReLU(0.2)]
        ch = out
    mods.append(nn.Conv2d(ch, 1, 4, 1, 2))
    return nn.Sequential(*mods)


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, ndf = (2, 64, 8) if smoke else (2, 512, NDF)
    dtype = low_precision(device)
    fmt = torch.channels_last
    discs = nn.ModuleList(patchgan(6, ndf, LAYERS) for _ in range(SCALES))
    discs = discs.to(device=device, dtype=dtype, memory_format=fmt).eval()
    down = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
    streams = side_streams(device, SCALES)

    @torch.no_grad()
    def step(condition: Tensor, image: Tensor) -> Tensor:
        x = torch.cat([condition, image], dim=1)
        pyramid = [x]
        for _ in range(SCALES - 1):
            pyramid.append(down(pyramid[-1]))
        maps = fork_join(
            device, streams, [partial(d, level) for d, level in zip(discs, pyramid, strict=True)]
        )
        return torch.stack([(m.float() - 1).square().mean() for m in maps])

    inputs = [
        tuple(
            torch.randn(batch, 3, side, side, device=device, dtype=dtype).to(memory_format=fmt)
            for _ in range(2)
        )
        for _ in range(2)
    ]
    description = (
        f"multi-scale PatchGAN discriminator, {SCALES} scales from {side}x{side}, ndf {ndf}, "
        f"{LAYERS} layers, instance norm, b{batch}, {SCALES} side streams"
    )
    return Built(step, inputs, description, [discs])


if __name__ == "__main__":
    main(build, __doc__)
