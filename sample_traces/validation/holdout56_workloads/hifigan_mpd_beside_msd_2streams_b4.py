"""HiFi-GAN's two discriminators (Kong et al., 2020) judging 4 real and 4 generated audio segments
of 8192 samples and the generator's adversarial and feature-matching losses from them, the
multi-period discriminator on one side stream and the multi-scale discriminator on the other
(fifty-sixth hold-out: two concurrent chains of some 350 to 450 kernels each under fp16 autocast:
per convolution the weight recomputed from its weight-norm (or spectral-norm) parametrization and
cast to fp16, cuDNN convolutions, (5, 1) kernels over reshaped waveforms on one side, grouped 1-D
convolutions of 41 taps on the other, the largest some 4 to 5.5 GFLOP, leaky ReLUs over fp16 feature
maps of up to 8 MB, then some 60 small L1 and squared-error reductions for the losses: GEMM-like
convolutions and many small memory-bound kernels on both sides, of unequal weight). Laid out as
jik876/hifi-gan's ``models.py``: ``MultiPeriodDiscriminator``, five ``DiscriminatorP`` of periods 2,
3, 5, 7 and 11, each the waveform (b, 1, 8192) reflect-padded to a multiple of the period and viewed
(b, 1, T / p, p), ``Conv2d`` 1 -> 32 -> 128 -> 512 -> 1024 with (5, 1) kernels, stride (3, 1),
padding (2, 0), then ``Conv2d(1024, 1024, (5, 1), padding (2, 0))``, each followed by
``leaky_relu(0.1)`` and kept as a feature map, and ``conv_post`` ``Conv2d(1024, 1, (3, 1), padding
(1, 0))``, flattened; ``MultiScaleDiscriminator``, three ``DiscriminatorS`` on the waveform, on it
average-pooled once and twice (``AvgPool1d(4, 2, padding 2)``), each ``Conv1d`` 1 -> 128 (15 taps),
128 -> 128 (41, stride 2, groups 4), 128 -> 256 (41, stride 2, groups 16), 256 -> 512 (41, stride 4,
groups 16), 512 -> 1024 (41, stride 4, groups 16), 1024 -> 1024 (41, groups 16), 1024 -> 1024 (5),
the same leaky ReLUs and feature maps, and ``conv_post`` 1024 -> 1 (3). Every convolution
weight-normed (``torch.nn.utils.parametrizations.weight_norm``), those of the first scale
discriminator spectral-normed instead (``parametrizations.spectral_norm``, in eval mode no power
iteration: the weight divided by u^T W v); each parametrized weight is recomputed at each call. Each
discriminator runs on the real segments and on the generated ones, two calls, as the generator's
training step does (``mpd(y, y_g_hat)``, ``msd(y, y_g_hat)``), and its branch then computes
``feature_loss`` (2 x the sum over the feature maps of mean |real - generated|) and
``generator_loss`` (the sum over the sub-discriminators of mean (1 - D(G(x)))^2). Side stream 1, the
MPD and its two losses; side stream 2, the MSD and its two. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture); after
the join, on the current stream, the four losses stacked and their sum. fp32 weights under
``torch.autocast(dtype=torch.float16)`` on a GPU, as mixed-precision HiFi-GAN recipes train it (each
convolution casts its weight and runs in fp16; plain fp32 on a CPU), eval, no gradients (the
backward is not part of the step), random weights (torch's defaults). Inputs (two input sets): the
real segments y (4, 1, 8192), Gaussian x 0.3, and the generated y_g_hat, y plus Gaussian noise x
0.05. Returns the MPD's feature-matching and adversarial losses, the MSD's, and their total (5,),
fp32.

    traceinspect profile hifigan_mpd_beside_msd_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

LRELU_SLOPE, SEGMENT, PERIODS = 0.1, 8192, (2, 3, 5, 7, 11)
# DiscriminatorS: (c_out, kernel, stride, groups, padding) after its 1-channel input
MSD_LAYERS = (
    (128, 15, 1, 1, 7),
    (128, 41, 2, 4, 20),
    (256, 41, 2, 16, 20),
    (512, 41, 4, 16, 20),
    (1024, 41, 4, 16, 20),
    (1024, 41, 1, 16, 20),
    (1024, 5, 1, 1, 2),
)
Maps = list[Tensor]


class DiscriminatorP(nn.Module):
    def __init__(self, period: int, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.period = period
        c_in, convs = 1, []
        for i, w in enumerate(widths):
            stride = (3, 1) if i < len(widths) - 1 else 1
            convs.append(weight_norm(nn.Conv2d(c_in, w, (5, 1), stride, padding=(2, 0))))
            c_in = w
        self.convs = nn.ModuleList(convs)
        self.conv_post = weight_norm(nn.Conv2d(c_in, 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, x: Tensor) -> tuple[Tensor, Maps]:
        fmap = []
        b, c, t = x.shape
        if t % self.period != 0:
            n_pad = self.period - (t % self.period)
            x = F.pad(x, (0, n_pad), "reflect")
            t = t + n_pad
        x = x.view(b, c, t // self.period, self.period)
        for conv in self.convs:
            x = F.leaky_relu(conv(x), LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        return torch.flatten(x, 1, -1), fmap


class DiscriminatorS(nn.Module):
    def __init__(self, layers: tuple[tuple[int, ...], ...], spectral: bool) -> None:
        super().__init__()
        norm_f = spectral_norm if spectral else weight_norm
        c_in, convs = 1, []
        for c_out, kernel, stride, groups, padding in layers:
            convs.append(norm_f(nn.Conv1d(c_in, c_out, kernel, stride, padding, groups=groups)))
            c_in = c_out
        self.convs = nn.ModuleList(convs)
        self.conv_post = norm_f(nn.Conv1d(c_in, 1, 3, 1, padding=1))

    def forward(self, x: Tensor) -> tuple[Tensor, Maps]:
        fmap = []
        for conv in self.convs:
            x = F.leaky_relu(conv(x), LRELU_SLOPE)
            fmap.append(x)
        x = self.conv_post(x)
        fmap.append(x)
        return torch.flatten(x, 1, -1), fmap


class MultiPeriodDiscriminator(nn.Module):
    def __init__(self, widths: tuple[int, ...]) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(DiscriminatorP(p, widths) for p in PERIODS)

    def forward(self, y: Tensor, y_hat: Tensor) -> tuple[Maps, Maps, list[Maps], list[Maps]]:
        y_d_rs, y_d_gs, fmap_rs, fmap_gs = [], [], [], []
        for d in self.discriminators:
            y_d_r, fmap_r = d(y)
            y_d_g, fmap_g = d(y_hat)
            y_d_rs.append(y_d_r)
            fmap_rs.append(fmap_r)
            y_d_gs.append(y_d_g)
            fmap_gs.append(fmap_g)
        return y_d_rs, y_d_gs, fmap_rs, fmap_gs


class MultiScaleDiscriminator(nn.Module):
    def __init__(self, layers: tuple[tuple[int, ...], ...]) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(DiscriminatorS(layers, i == 0) for i in range(3))
        self.meanpools = nn.ModuleList(nn.AvgPool1d(4, 2, padding=2) for _ in range(2))

    def forward(self, y: Tensor, y_hat: Tensor) -> tuple[Maps, Maps, list[Maps], list[Maps]]:
        y_d_rs, y_d_gs, fmap_rs, fmap_gs = [], [], [], []
        for i, d in enumerate(self.discriminators):
            if i != 0:
                y = self.meanpools[i - 1](y)
                y_hat = self.meanpools[i - 1](y_hat)
            y_d_r, fmap_r = d(y)
            y_d_g, fmap_g = d(y_hat)
            y_d_rs.append(y_d_r)
            fmap_rs.append(fmap_r)
            y_d_gs.append(y_d_g)
            fmap_gs.append(fmap_g)
        return y_d_rs, y_d_gs, fmap_rs, fmap_gs


def feature_loss(fmap_r: list[Maps], fmap_g: list[Maps]) -> Tensor:
    loss = 0
    for dr, dg in zip(fmap_r, fmap_g, strict=True):
        for rl, gl in zip(dr, dg, strict=True):
            loss += torch.mean(torch.abs(rl - gl))
    return loss * 2


def generator_loss(disc_outputs: Maps) -> Tensor:
    loss = 0
    for dg in disc_outputs:
        loss += torch.mean((1 - dg) ** 2)
    return loss


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, segment, widths = 2, 1024, (4, 8, 16, 16, 16)
        layers = tuple((max(c // 32, 4) * 4, k, s, min(g, 4), p) for c, k, s, g, p in MSD_LAYERS)
    else:
        batch, segment, widths, layers = 4, SEGMENT, (32, 128, 512, 1024, 1024), MSD_LAYERS
    mpd = MultiPeriodDiscriminator(widths).to(device).eval()
    msd = MultiScaleDiscriminator(layers).to(device).eval()
    autocast = torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda")
    streams = side_streams(device, 2)

    def losses(disc: nn.Module, y: Tensor, y_hat: Tensor) -> Tensor:
        with autocast:
            _, y_d_gs, fmap_rs, fmap_gs = disc(y, y_hat)
            return torch.stack((feature_loss(fmap_rs, fmap_gs), generator_loss(y_d_gs))).float()

    @torch.no_grad()
    def step(y: Tensor, y_hat: Tensor) -> Tensor:
        loss_f, loss_s = fork_join(
            device, streams, [lambda: losses(mpd, y, y_hat), lambda: losses(msd, y, y_hat)]
        )
        parts = torch.cat((loss_f, loss_s))
        return torch.cat((parts, parts.sum().view(1)))

    def make() -> tuple[Tensor, Tensor]:
        y = 0.3 * torch.randn(batch, 1, segment, device=device)
        return y, y + 0.05 * torch.randn_like(y)

    inputs = [make() for _ in range(2)]
    precision = "fp16 autocast" if device.type == "cuda" else "fp32"
    description = (
        f"HiFi-GAN MPD (periods {'/'.join(map(str, PERIODS))}, (5,1) convs to {widths[-1]}) "
        f"beside MSD (3 scales, grouped Conv1d k41), weight-/spectral-norm, real + generated, "
        f"feature + adversarial losses, on 2 side streams, {precision}, b{batch} x {segment}"
    )
    return Built(step, inputs, description, [mpd, msd])


if __name__ == "__main__":
    main(build, __doc__)
