"""A spectrally normalized convolutional discriminator, as SNGAN and BigGAN score images
(thirty-first hold-out): 16 images of 3 x 32 x 32, fp32, six 3 x 3 / 4 x 4 convolutions
(64, 64, 128, 128, 256, 256 channels, three of stride 2) with LeakyReLU 0.1 and a Linear
to one logit, every weight under ``torch.nn.utils.parametrizations.spectral_norm``. In
training mode each forward runs one power iteration per weight (two matrix-vector
products, two normalizations, a dot product and the division of the weight by it) before
the layer uses it: seven small chains of tiny kernels beside seven convolutions. No
gradients (the discriminator scoring a batch, as between generator updates); the power
iteration's vectors update in place, which converges within the warm-up steps.

    traceinspect profile spectral_norm_disc_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn
from torch.nn.utils.parametrizations import spectral_norm


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, widths = (
        (2, 16, (8, 8, 8, 8, 16, 16)) if smoke else (16, 32, (64, 64, 128, 128, 256, 256))
    )
    layers: list[nn.Module] = []
    cin = 3
    for i, w in enumerate(widths):
        stride = 2 if i % 2 == 1 else 1
        kernel = 4 if stride == 2 else 3
        layers += [spectral_norm(nn.Conv2d(cin, w, kernel, stride, 1)), nn.LeakyReLU(0.1)]
        cin = w
    final = size // 8
    layers += [nn.Flatten(), spectral_norm(nn.Linear(cin * final * final, 1))]
    model = nn.Sequential(*layers).to(device)
    model.train()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device),) for _ in range(2)]
    return Built(
        step, inputs, f"spectral-norm conv discriminator {size}x{size}, 7 layers, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
