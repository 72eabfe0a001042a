"""FSRCNN super-resolution (Dong et al., 2016), x3, on the luma channel of one 640 x 360 frame
(forty-eighth hold-out: a thin-channel super-resolution net ending in a strided transposed
convolution, one image): d = 56, s = 12, m = 4, the layers ``Conv2d(1, 56, 5, padding 2)`` +
PReLU(56) (feature extraction), ``Conv2d(56, 12, 1)`` + PReLU(12) (shrinking), 4 x
``Conv2d(12, 12, 3, padding 1)`` + PReLU(12) (mapping), ``Conv2d(12, 56, 1)`` + PReLU(56)
(expanding), and ``ConvTranspose2d(56, 1, 9, stride 3, padding 4, output_padding 2)`` to the
1920 x 1080 output, clamped to [0, 1] in place. Every convolution has a bias; the PReLUs have one
slope per channel. About 3 GMAC, all the activations of 56 or 12 channels at 640 x 360: small
convolutions and per-channel elementwise kernels, some 17 kernels. bf16 on a GPU, channels-last,
eval mode, no gradients, one stream. Input: (1, 1, 360, 640) in [0, 1]. Returns (1, 1, 1080,
1920).

    traceinspect profile fsrcnn_x3_superres_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

D, S, M, SCALE = 56, 12, 4, 3


def fsrcnn() -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(1, D, 5, padding=2), nn.PReLU(D)]
    layers += [nn.Conv2d(D, S, 1), nn.PReLU(S)]
    for _ in range(M):
        layers += [nn.Conv2d(S, S, 3, padding=1), nn.PReLU(S)]
    layers += [nn.Conv2d(S, D, 1), nn.PReLU(D)]
    layers.append(nn.ConvTranspose2d(D, 1, 9, SCALE, 4, output_padding=SCALE - 1))
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, height, width = (1, 24, 32) if smoke else (1, 360, 640)
    dtype = low_precision(device)
    fmt = torch.channels_last
    net = fsrcnn().to(device=device, dtype=dtype, memory_format=fmt).eval()

    @torch.no_grad()
    def step(y: Tensor) -> Tensor:
        return net(y).clamp_(0.0, 1.0)

    inputs = [
        (torch.rand(batch, 1, height, width, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    description = (
        f"FSRCNN x{SCALE} (d{D} s{S} m{M}), {width}x{height} -> {SCALE * width}x"
        f"{SCALE * height}, b{batch}"
    )
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
