"""SimCLR's two-view data augmentation (Chen et al., 2020) of a batch of 64 images 3 x 224 x 224 on
the GPU, each view's pipeline on its own side stream (fifty-second hold-out: two chains of some
40 image-sized memory-bound kernels each, elementwise, reductions, a gather-like ``grid_sample``
and depthwise convolutions, 38.5 MB an image batch in fp32, running side by side), the
augmentations of google-research/simclr's ``data_util.py`` (color-jitter strength 1.0) applied
batch-wise with per-sample parameters, as GPU augmentation libraries (kornia, DALI) do. Each
view's 13 per-sample parameters come with the batch (drawn uniform in [0, 1) on the device at
build, one tensor per view and input set, as a loader's sampler would hand them over, so that a
replay computes what the eager step does), then: a random resized crop to 224 x 224, area
0.08..1 of the image, aspect ratio 3/4..4/3 (log-uniform), width and height clamped to the image
(where torchvision would retry), a random center inside it, as a per-sample affine ``theta``,
``F.affine_grid`` and bilinear ``F.grid_sample``; a horizontal flip with probability 0.5
(``torch.where`` on a per-sample mask and the flipped batch); color jitter applied with
probability 0.8 (the factors of the samples left alone set to identity): brightness (x f, f in
0.2..1.8), contrast (blended with the image's mean gray level, factor 0.2..1.8), saturation
(blended with its grayscale, 0.2..1.8), each clamped to [0, 1] as torchvision's ``_blend``, and
hue (a rotation by up to +-0.2 turn of the chroma plane in YIQ space, one 3 x 3 matrix per
sample through ``einsum``, in place of the HSV round trip); grayscale with probability 0.2
(``torch.where``); a Gaussian blur with probability 0.5, kernel 23 taps (10 % of the size),
sigma 0.1..2.0 per sample (a delta kernel for the samples left alone), separable, as SimCLR's
depthwise blur: reflect padding, then a vertical and a horizontal depthwise ``F.conv2d`` over
the batch as one image of 192 channels (``groups=192``, one kernel per sample and channel); the
ImageNet normalization. Then, in the same branch, a small projection shared by the two views:
``adaptive_avg_pool2d`` to 7 x 7, flattened (147), ``Linear(147, 512)``, ReLU, ``Linear(512,
128)``, L2-normalized. Side stream 1: view 1; side stream 2: view 2 (the same pipeline, its own
parameters, on the same input batch). fp32 (the crop's sampling coordinates need it), eval mode,
no gradients. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Input: the images (64, 3, 224, 224) in
[0, 1] and each view's parameters (64, 13). Returns the two augmented views (64, 3, 224, 224)
each and their projections (64, 128) each.

    traceinspect profile simclr_two_view_augment_2streams_b64.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet
GRAY = (0.299, 0.587, 0.114)  # ITU-R 601 luma, as rgb_to_grayscale
YIQ = ((0.299, 0.587, 0.114), (0.596, -0.274, -0.322), (0.211, -0.523, 0.312))
STRENGTH = 1.0  # SimCLR's color-jitter strength
BRIGHTNESS = CONTRAST = SATURATION = 0.8 * STRENGTH
HUE = 0.2 * STRENGTH
P_JITTER, P_GRAY, P_BLUR, P_FLIP = 0.8, 0.2, 0.5, 0.5
POOL, HIDDEN, PROJ = 7, 512, 128


class SimCLRAugment(nn.Module):
    """One view of SimCLR's augmentation, batch-wise with per-sample parameters, and the
    shared projection of its pooled pixels."""

    def __init__(self, size: int, device: torch.device) -> None:
        super().__init__()
        self.size = size
        taps = size // 10 // 2 * 2 + 1  # 10 % of the image, odd
        offsets = torch.arange(taps, device=device, dtype=torch.float32) - taps // 2
        self.register_buffer("taps", offsets[None])  # (1, K)
        self.register_buffer("delta", (offsets == 0).float()[None])  # the identity kernel
        self.register_buffer("mean", torch.tensor(MEAN, device=device).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(STD, device=device).view(1, 3, 1, 1))
        self.register_buffer("gray_w", torch.tensor(GRAY, device=device).view(1, 3, 1, 1))
        yiq = torch.tensor(YIQ, device=device)
        self.register_buffer("yiq", yiq)
        self.register_buffer("yiq_inv", torch.linalg.inv(yiq))
        self.head = nn.Sequential(
            nn.Linear(3 * POOL * POOL, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, PROJ)
        ).to(device)

    def gray(self, x: Tensor) -> Tensor:
        return (x * self.gray_w).sum(1, keepdim=True)

    def crop(self, x: Tensor, u: Tensor) -> Tensor:
        """Random resized crop: u[:, 0..3] -> area, log aspect ratio, center x, center y."""
        b = x.shape[0]
        area = 0.08 + 0.92 * u[:, 0]
        log_lo, log_hi = math.log(3 / 4), math.log(4 / 3)
        ratio = torch.exp(log_lo + (log_hi - log_lo) * u[:, 1])
        w = torch.sqrt(area * ratio).clamp(max=1.0)  # half-extents in [-1, 1] coordinates
        h = torch.sqrt(area / ratio).clamp(max=1.0)
        cx = (2 * u[:, 2] - 1) * (1 - w)
        cy = (2 * u[:, 3] - 1) * (1 - h)
        zero = torch.zeros_like(w)
        theta = torch.stack((w, zero, cx, zero, h, cy), dim=1).view(b, 2, 3)
        grid = F.affine_grid(theta, [b, 3, self.size, self.size], align_corners=False)
        return F.grid_sample(
            x, grid, mode="bilinear", padding_mode="reflection", align_corners=False
        )

    def color_jitter(self, x: Tensor, u: Tensor) -> Tensor:
        """u[:, 5] -> applied or not; u[:, 6..9] -> brightness, contrast, saturation, hue."""
        on = u[:, 5] < P_JITTER

        def factor(col: int, strength: float) -> Tensor:
            f = 1 + strength * (2 * u[:, col] - 1)
            return torch.where(on, f, 1.0)[:, None, None, None]

        fb, fc, fs = factor(6, BRIGHTNESS), factor(7, CONTRAST), factor(8, SATURATION)
        x = (fb * x).clamp(0, 1)
        m = self.gray(x).mean((1, 2, 3), keepdim=True)
        x = (fc * x + (1 - fc) * m).clamp(0, 1)
        g = self.gray(x)
        x = (fs * x + (1 - fs) * g).clamp(0, 1)
        angle = torch.where(on, HUE * (2 * u[:, 9] - 1), 0.0) * (2 * math.pi)
        c, s = torch.cos(angle), torch.sin(angle)
        one, zero = torch.ones_like(c), torch.zeros_like(c)
        rot = torch.stack((one, zero, zero, zero, c, -s, zero, s, c), dim=1).view(-1, 3, 3)
        hue = self.yiq_inv @ rot @ self.yiq  # (b, 3, 3)
        return torch.einsum("bij,bjhw->bihw", hue, x).clamp(0, 1)

    def blur(self, x: Tensor, u: Tensor) -> Tensor:
        """u[:, 11] -> applied or not; u[:, 12] -> sigma. Separable depthwise convolution."""
        b, c, hgt, wid = x.shape
        sigma = 0.1 + 1.9 * u[:, 12:13]
        k = torch.exp(-self.taps.square() / (2 * sigma.square()))
        k = torch.where(u[:, 11:12] < P_BLUR, k / k.sum(1, keepdim=True), self.delta)
        k = k[:, None].expand(b, c, k.shape[1]).reshape(b * c, 1, -1)  # (b c, 1, K)
        r = k.shape[-1] // 2
        y = F.pad(x.reshape(1, b * c, hgt, wid), (r, r, r, r), mode="reflect")
        y = F.conv2d(y, k[..., None], groups=b * c)  # vertical
        y = F.conv2d(y, k[:, :, None], groups=b * c)  # horizontal
        return y.view(b, c, hgt, wid)

    def forward(self, images: Tensor, u: Tensor) -> tuple[Tensor, Tensor]:
        x = self.crop(images, u)
        flip = (u[:, 4] < P_FLIP)[:, None, None, None]
        x = torch.where(flip, x.flip(-1), x)
        x = self.color_jitter(x, u)
        x = torch.where((u[:, 10] < P_GRAY)[:, None, None, None], self.gray(x).expand_as(x), x)
        x = self.blur(x, u)
        x = (x - self.mean) / self.std
        z = self.head(F.adaptive_avg_pool2d(x, POOL).flatten(1))
        return x, F.normalize(z, dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size = (4, 32) if smoke else (64, 224)
    augment = SimCLRAugment(size, device).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor, u1: Tensor, u2: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        (v1, z1), (v2, z2) = fork_join(
            device, streams, [lambda: augment(images, u1), lambda: augment(images, u2)]
        )
        return v1, v2, z1, z2

    inputs = [
        (
            torch.rand(batch, 3, size, size, device=device),
            torch.rand(batch, 13, device=device),
            torch.rand(batch, 13, device=device),
        )
        for _ in range(2)
    ]
    taps = augment.taps.shape[1]
    description = (
        f"SimCLR two-view augmentation (resized crop via grid_sample, flip, color jitter, "
        f"grayscale, {taps}-tap depthwise blur, normalize, pooled projection), "
        f"{size}x{size} fp32, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [augment])


if __name__ == "__main__":
    main(build, __doc__)
