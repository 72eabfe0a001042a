"""SqueezeNet 1.1 inference on 64 images of 224 x 224 (forty-eighth hold-out: fire modules,
a 1x1 squeeze convolution feeding a 1x1 and a 3x3 expand convolution whose outputs are
concatenated on the channels, no batch norm): torchvision's SqueezeNet 1.1 layout written out,
``Conv2d(3, 64, 3, stride 2)`` + ReLU, ``MaxPool2d(3, 2, ceil_mode=True)``, fire modules
(squeeze, expand 1x1, expand 3x3 channels) (16, 64, 64) x 2 at 55 x 55, a max pool, (32, 128,
128) x 2 at 27 x 27, a max pool, (48, 192, 192) x 2 and (64, 256, 256) x 2 at 13 x 13, each
convolution with a bias and followed by ReLU, then the classifier ``Conv2d(512, 1000, 1)`` +
ReLU, ``AdaptiveAvgPool2d(1)`` and a flatten (dropout is a no-op in eval mode and left out).
Some 0.35 GMAC an image, 22 GMAC the batch. bf16 on a GPU, channels-last, eval mode, no
gradients, one stream. Input: (64, 3, 224, 224). Returns (64, 1000) logits.

    traceinspect profile squeezenet11_fire_b64.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

# (squeeze, expand) per fire module; a max pool after the 2nd and the 4th
FIRES = [(16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192), (64, 256), (64, 256)]
POOL_AFTER = {1, 3}


class Fire(nn.Module):
    def __init__(self, cin: int, squeeze: int, expand: int) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(cin, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand, 1)
        self.expand3 = nn.Conv2d(squeeze, expand, 3, padding=1)

    def forward(self, x: Tensor) -> Tensor:
        s = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.expand1(s)), F.relu(self.expand3(s))], dim=1)


def squeezenet11(classes: int) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(3, 64, 3, stride=2),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, ceil_mode=True),
    ]
    cin = 64
    for i, (squeeze, expand) in enumerate(FIRES):
        layers.append(Fire(cin, squeeze, expand))
        cin = 2 * expand
        if i in POOL_AFTER:
            layers.append(nn.MaxPool2d(3, 2, ceil_mode=True))
    layers += [nn.Conv2d(cin, classes, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers)


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, classes = (2, 64, 10) if smoke else (64, 224, 1000)
    dtype = low_precision(device)
    fmt = torch.channels_last
    net = squeezenet11(classes).to(device=device, dtype=dtype, memory_format=fmt).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return net(x)

    inputs = [
        (torch.randn(batch, 3, side, side, device=device, dtype=dtype).to(memory_format=fmt),)
        for _ in range(2)
    ]
    description = f"SqueezeNet 1.1, {len(FIRES)} fire modules, {side}x{side}, b{batch}"
    return Built(step, inputs, description, [net])


if __name__ == "__main__":
    main(build, __doc__)
