"""Image augmentation on the GPU (twenty-third hold-out), as data pipelines run it before a
model: 32 images of 3 x 256 x 256 in uint8 — to float, a per-image crop to 224 x 224 at
given offsets (``take_along_dim`` with per-image row and column indices),
horizontal flips for a given half of the batch (``torch.where`` with the flipped copy),
per-image brightness and contrast jitter, and per-channel normalization. Elementwise and
gather kernels over 4.8 M values, no GEMM.

    traceinspect profile gpu_augment_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor


def build(device: torch.device, smoke: bool) -> Built:
    batch, side, crop = (2, 12, 8) if smoke else (32, 256, 224)
    mean = torch.tensor([0.485, 0.456, 0.406], device=device).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device=device).view(1, 3, 1, 1)
    span = torch.arange(crop, device=device)

    @torch.no_grad()
    def step(images: Tensor, offsets: Tensor, flip: Tensor, jitter: Tensor) -> Tensor:
        x = images.float() / 255
        rows = (offsets[:, 0:1] + span).view(batch, 1, crop, 1).expand(batch, 3, crop, side)
        x = torch.take_along_dim(x, rows, dim=2)
        cols = (offsets[:, 1:2] + span).view(batch, 1, 1, crop).expand(batch, 3, crop, crop)
        x = torch.take_along_dim(x, cols, dim=3)
        x = torch.where(flip.view(batch, 1, 1, 1), x.flip(3), x)
        brightness, contrast = jitter[:, 0].view(batch, 1, 1, 1), jitter[:, 1].view(batch, 1, 1, 1)
        gray = x.mean(dim=(1, 2, 3), keepdim=True)
        x = ((x * brightness - gray) * contrast + gray).clamp(0, 1)
        return (x - mean) / std

    def make() -> tuple[Tensor, Tensor, Tensor, Tensor]:
        return (
            torch.randint(0, 256, (batch, 3, side, side), device=device, dtype=torch.uint8),
            torch.randint(0, side - crop + 1, (batch, 2), device=device),
            torch.arange(batch, device=device) % 2 == 0,
            0.8 + 0.4 * torch.rand(batch, 2, device=device),
        )

    return Built(step, [make() for _ in range(2)], f"GPU augmentation b{batch} {side}->{crop}")


if __name__ == "__main__":
    main(build, __doc__)
