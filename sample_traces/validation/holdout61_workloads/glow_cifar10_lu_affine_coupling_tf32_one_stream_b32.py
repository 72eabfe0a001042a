"""Glow (Kingma and Dhariwal, 2018) scoring 32 dequantised CIFAR-10 images: each image's negative
log-likelihood in bits per dimension through a multi-scale flow of 3 levels of 8 steps (sixty-first
hold-out: one stream, fp32 with TF32 on for cuBLAS and cuDNN: each flow step an ActNorm, the
invertible 1 x 1 convolution in its LU-decomposed form, its weight rebuilt on every call from P, L,
U and s (two masks, an exp, a diagonal, two 12 x 12 to 48 x 48 GEMMs, then a 1 x 1 cuDNN
convolution), and an affine coupling whose network is a 3 x 3 convolution to 512 channels, ActNorm,
ReLU, a 1 x 1 convolution 512 -> 512, ActNorm, ReLU and a zero-style 3 x 3 convolution back, then
the sigmoid scale, the shift and each image's log-determinant; a squeeze before each level, a split
after the first two whose dropped halves are scored under a Gaussian predicted by a 3 x 3
convolution of the kept half, and the learned top prior; some 1,050 kernels, 99 of them convolutions
(the 512 x 512 1 x 1 ones at 8,192 pixels the heaviest), the rest small elementwise, reduction and
tiny-GEMM kernels, many of them on tensors of a few hundred kilobytes or less; some 1.5 to 3 ms of
GPU time). Laid out as y0ast/Glow-PyTorch's ``Glow`` (the port of openai/glow) with
``flow_permutation="invconv"`` and ``LU_decomposed=True``, ``flow_coupling="affine"``,
``learn_top=True``, ``y_condition=False``, ``hidden_channels=512`` (the paper's CIFAR-10 width),
``L=3``, but ``K=8`` steps a level instead of the paper's 32 (this set's choice): ``ActNorm2d`` ((x
+ bias) * exp(logs), log-determinant h w sum(logs)); ``InvertibleConv1x1`` (W = P (L * l_mask + I)
(U * l_mask^T + diag(sign_s exp(log_s))), log-determinant h w sum(log_s)); the coupling's block
``Conv2d(c/2, 512, 3)`` (no bias, ActNorm), ReLU, ``Conv2d(512, 512, 1)`` (ActNorm), ReLU,
``Conv2dZeros(512, c, 3)`` (bias, then * exp(3 logs)); shift and scale the "cross" halves (channels
0::2 and 1::2), scale = sigmoid(raw + 2), z2 = (z2 + shift) * scale, log-determinant sum(log scale);
``Split2d`` (the kept half through ``Conv2dZeros(c/2, c)``, "cross" halves mean and logs, the
dropped half's Gaussian log-likelihood); the top prior ``Conv2dZeros(96, 96)`` over zeros; the
objective -log(256) * 3072 plus the log-determinants and the log-likelihoods, in bits per dimension.
Random weights: the convolutions torch's defaults, the Conv2dZeros and ActNorm parameters drawn
small (std 0.05, as a trained flow moves them off the reference's zeros), the 1 x 1 convolutions
from the LU factors of a random rotation. fp32 weights and activations with
``torch.backends.cuda.matmul.allow_tf32`` and ``torch.backends.cudnn.allow_tf32`` on (set at build),
eval, no gradients. Input (two input sets): the images (32, 3, 32, 32), fp32, already dequantised (k
/ 256 plus uniform noise in [0, 1 / 256), minus 0.5). Returns the bits per dimension (32,), fp32.

    traceinspect profile glow_cifar10_lu_affine_coupling_tf32_one_stream_b32.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LEVELS, STEPS, HIDDEN, N_BINS = 3, 8, 512, 256
LOG_2PI = math.log(2 * math.pi)


def small(*shape: int) -> nn.Parameter:
    return nn.Parameter(torch.randn(*shape) * 0.05)


class ActNorm(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.bias = small(1, channels, 1, 1)
        self.logs = small(1, channels, 1, 1)

    def forward(self, x: Tensor, logdet: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        x = (x + self.bias) * torch.exp(self.logs)
        if logdet is not None:
            logdet = logdet + self.logs.sum() * (x.shape[2] * x.shape[3])
        return x, logdet


class ConvActNorm(nn.Module):  # Glow-PyTorch's Conv2d: no bias, ActNorm after
    def __init__(self, cin: int, cout: int, kernel: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False)
        self.actnorm = ActNorm(cout)

    def forward(self, x: Tensor) -> Tensor:
        return self.actnorm(self.conv(x))[0]


class Conv2dZeros(nn.Module):
    def __init__(self, cin: int, cout: int, logscale_factor: float = 3.0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        nn.init.normal_(self.conv.weight, std=0.05)
        nn.init.normal_(self.conv.bias, std=0.05)
        self.logs = small(1, cout, 1, 1)
        self.logscale_factor = logscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(x) * torch.exp(self.logs * self.logscale_factor)


class InvConvLU(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        w_init = torch.linalg.qr(torch.randn(channels, channels))[0]
        p, lower, upper = torch.linalg.lu(w_init)
        s = torch.diag(upper)
        self.register_buffer("p", p)
        self.register_buffer("sign_s", torch.sign(s))
        self.register_buffer("l_mask", torch.tril(torch.ones(channels, channels), -1))
        self.register_buffer("eye", torch.eye(channels))
        self.lower = nn.Parameter(lower)
        self.log_s = nn.Parameter(torch.log(torch.abs(s)))
        self.upper = nn.Parameter(torch.triu(upper, 1))

    def forward(self, x: Tensor, logdet: Tensor) -> tuple[Tensor, Tensor]:
        c = x.shape[1]
        lower = self.lower * self.l_mask + self.eye
        u = self.upper * self.l_mask.transpose(0, 1).contiguous()
        u = u + torch.diag(self.sign_s * torch.exp(self.log_s))
        weight = torch.matmul(self.p, torch.matmul(lower, u))
        logdet = logdet + self.log_s.sum() * (x.shape[2] * x.shape[3])
        return F.conv2d(x, weight.view(c, c, 1, 1)), logdet


class FlowStep(nn.Module):
    def __init__(self, channels: int, hidden: int) -> None:
        super().__init__()
        self.actnorm = ActNorm(channels)
        self.invconv = InvConvLU(channels)
        self.block = nn.Sequential(
            ConvActNorm(channels // 2, hidden, 3),
            nn.ReLU(),
            ConvActNorm(hidden, hidden, 1),
            nn.ReLU(),
            Conv2dZeros(hidden, channels),
        )

    def forward(self, z: Tensor, logdet: Tensor) -> tuple[Tensor, Tensor]:
        z, logdet = self.actnorm(z, logdet)
        assert logdet is not None
        z, logdet = self.invconv(z, logdet)
        half = z.shape[1] // 2
        z1, z2 = z[:, :half], z[:, half:]
        h = self.block(z1)
        shift, scale = h[:, 0::2], torch.sigmoid(h[:, 1::2] + 2.0)
        z2 = (z2 + shift) * scale
        logdet = logdet + torch.log(scale).sum(dim=[1, 2, 3])
        return torch.cat((z1, z2), dim=1), logdet


def squeeze2d(x: Tensor) -> Tensor:
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(b, c * 4, h // 2, w // 2)


def gaussian_loglik(mean: Tensor, logs: Tensor, x: Tensor) -> Tensor:
    ll = -0.5 * (LOG_2PI + 2.0 * logs + (x - mean) ** 2 / torch.exp(2.0 * logs))
    return ll.sum(dim=[1, 2, 3])


class Split2d(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = Conv2dZeros(channels // 2, channels)

    def forward(self, z: Tensor, logdet: Tensor) -> tuple[Tensor, Tensor]:
        half = z.shape[1] // 2
        z1, z2 = z[:, :half], z[:, half:]
        h = self.conv(z1)
        return z1, logdet + gaussian_loglik(h[:, 0::2], h[:, 1::2], z2)


class Glow(nn.Module):
    def __init__(self, image: int, levels: int, steps: int, hidden: int) -> None:
        super().__init__()
        c, size = 3, image
        self.levels = nn.ModuleList()
        for i in range(levels):
            c, size = c * 4, size // 2
            layers: list[nn.Module] = [FlowStep(c, hidden) for _ in range(steps)]
            if i < levels - 1:
                layers.append(Split2d(c))
                c //= 2
            self.levels.append(nn.ModuleList(layers))
        self.register_buffer("prior_h", torch.zeros(1, 2 * c, size, size))
        self.learn_top = Conv2dZeros(2 * c, 2 * c)
        self.pixels = 3 * image * image

    def forward(self, x: Tensor) -> Tensor:
        logdet = torch.full((x.shape[0],), -math.log(N_BINS) * self.pixels, device=x.device)
        z = x
        for level in self.levels:
            z = squeeze2d(z)
            for layer in level:
                z, logdet = layer(z, logdet)
        h = self.learn_top(self.prior_h).expand(x.shape[0], -1, -1, -1)
        objective = logdet + gaussian_loglik(h[:, 0::2], h[:, 1::2], z)
        return -objective / (math.log(2.0) * self.pixels)  # bits per dimension


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, image, levels, steps, hidden = 2, 8, 2, 2, 16
    else:
        batch, image, levels, steps, hidden = 32, 32, LEVELS, STEPS, HIDDEN
    torch.backends.cuda.matmul.allow_tf32 = True  # TF32 GEMMs
    torch.backends.cudnn.allow_tf32 = True  # and TF32 convolutions (torch's default)
    model = Glow(image, levels, steps, hidden).to(device).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    def make() -> tuple[Tensor]:
        pixels = torch.randint(0, N_BINS, (batch, 3, image, image), device=device).float()
        noise = torch.rand(batch, 3, image, image, device=device)
        return ((pixels + noise) / N_BINS - 0.5,)

    inputs = [make() for _ in range(2)]
    description = (
        f"Glow: {levels} levels x {steps} steps (ActNorm, LU 1x1 conv, affine coupling "
        f"{hidden} ch) on {image}x{image} images, bits/dim, fp32 TF32 on, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
