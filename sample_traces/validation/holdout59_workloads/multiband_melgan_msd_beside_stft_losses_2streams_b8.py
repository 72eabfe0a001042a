"""Multi-band MelGAN (Yang et al., 2021) in one forward pass of its generator's training step on 8
segments of 8192 samples: the generator turning 80-band mel spectrograms into 4 sub-bands and the
PQMF synthesis into audio on the current stream, then its multi-scale discriminator judging the
generated audio on one side stream beside the full-band and sub-band multi-resolution STFT losses on
the other, and the generator's loss after the join (fifty-ninth hold-out: in fp16 for the networks,
fp32 for the STFT losses: first the generator's some 40 weight-normed convolutions (a 7-tap 80 ->
384 input convolution, transposed-convolution upsamplings by 8, 4 and 2 to 192, 96 and 48 channels,
each followed by four dilated residual stacks of 3-tap and 1 x 1 convolutions, some 0.5 GFLOP a
stage, over fp16 maps of up to 1.5 MB), then two concurrent chains of unequal make: on side stream 1
three sub-discriminators of six convolutions each, three of them cuDNN grouped 1-D convolutions of
41 taps with groups 4, 16 and 64 (4 input channels a group), which cuDNN splits over eight streams
of its own, forked and joined inside ``aten::cudnn_convolution``, and a dense 5-tap 512 -> 512 one,
then the adversarial loss, some 350 kernels; on side stream 2 the PQMF analysis of the real segments
and twelve cuFFT STFTs (three resolutions, generated and real, full band and sub band) with their
magnitudes, Frobenius norms, logs and L1 means over fp32 spectrograms of up to 3 MB, some 150
kernels; some 0.5 to 1.5 ms of GPU time in all). Laid out as kan-bayashi/ ParallelWaveGAN's
``MelGANGenerator``, ``MelGANMultiScaleDiscriminator``, ``PQMF`` and ``MultiResolutionSTFTLoss``
with its LJ Speech Multi-band MelGAN settings: the generator (80 mel bands in, 4 out, 384 channels,
kernel 7, ``upsample_scales`` (8, 4, 2), ``stacks`` 4, ``stack_kernel_size`` 3, weight norm, final
tanh): ``ReflectionPad1d(3)``, ``Conv1d(80, 384, 7)``, per scale r ``LeakyReLU(0.2)``,
``ConvTranspose1d(c, c / 2, 2r, stride r, padding r // 2 + r % 2, output_padding r % 2)`` and four
``ResidualStack``s of dilations 1, 3, 9 and 27 (``LeakyReLU(0.2)``, ``ReflectionPad1d(d)``,
``Conv1d(c, c, 3, dilation d)``, ``LeakyReLU(0.2)``, ``Conv1d(c, c, 1)``, plus the skip ``Conv1d(c,
c, 1)``), then ``LeakyReLU(0.2)``, ``ReflectionPad1d(3)``, ``Conv1d(48, 4, 7)``, ``Tanh``; ``PQMF(4
subbands, 62 taps, cutoff_ratio 0.142, beta 9)``: the Kaiser-windowed prototype sin(pi 0.142 m) /
(pi m), the analysis and synthesis filters 2 h cos((2k + 1) pi / 8 (n - 31) +- (-1)^k pi / 4),
``analysis`` a zero pad of 31 and a stride-4 ``conv1d``, ``synthesis`` a stride-4
``conv_transpose1d`` with the 4 x 4 x 4 up-sampling filter x 4, the zero pad and the ``conv1d``; the
discriminator (3 scales, ``AvgPool1d(4, 2, padding 1, count_include_pad False)`` between them, after
the last too as the reference pools, kernel sizes (5, 3), 16 channels, ``max_downsample_channels``
512, ``downsample_scales`` (4, 4, 4), weight norm): ``ReflectionPad1d(7)``, ``Conv1d(1, 16, 15)``,
then ``Conv1d`` 16 -> 64 -> 256 -> 512 of 41 taps, stride 4, padding 20, groups c_in / 4, then
``Conv1d(512, 512, 5, padding 2)``, each followed by ``LeakyReLU(0.2)``, and ``Conv1d(512, 1, 3,
padding 1)``; the full-band STFT loss at FFT sizes 1024, 2048 and 512, hops 120, 240 and 50, Hann
windows of 600, 1200 and 240, the sub-band one (the 4 sub-bands as 32 signals) at 384, 683 and 171,
hops 30, 60 and 10, windows 150, 300 and 60, each ``torch.stft`` (centered, reflect-padded), the
magnitude sqrt(max(re^2 + im^2, 1e-7)), the spectral convergence ||Y - X||_F / ||Y||_F and the L1
distance of the log magnitudes, averaged over the resolutions. Every convolution weight-normed
(``torch.nn.utils.parametrizations.weight_norm``, the weight recomputed at each call). The step, as
the reference's ``train.py`` computes the generator's loss: on the current stream y_mb_ = G(mel) and
y_ = pqmf.synthesis(y_mb_); side stream 1, p_ = D(y_) and ``GeneratorAdversarialLoss`` (the mean
over the scales of mse(p_[-1], 1)); side stream 2, the full-band loss on (y_, y) and, after
``pqmf.analysis(y)``, the sub-band loss on (y_mb_, y_mb). Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture); after
the join, on the current stream, the generator's loss 0.5 (sc + mag) + 0.5 (sub sc + sub mag) + 2.5
adv. fp16 weights and activations for the generator and the discriminator on a GPU, the weight norms
and the PQMF synthesis in fp16 too, the PQMF analysis and the STFT losses in fp32 (fp32 throughout
on a CPU), eval, no gradients (the backward is not part of the step), random weights (torch's
defaults). Inputs (two input sets), batch first: the log-mel spectrograms (8, 80, 32) in fp16,
Gaussian, and the real segments y (8, 1, 8192) in fp32, Gaussian x 0.3. Returns the full-band
spectral-convergence and log-magnitude losses, the sub-band ones, the adversarial loss and the
generator's loss (6,), fp32.

    traceinspect profile multiband_melgan_msd_beside_stft_losses_2streams_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import weight_norm

N_MELS, HOP, SEGMENT, SUBBANDS = 80, 256, 8192, 4
UPSAMPLE, STACKS, LAMBDA_ADV = (8, 4, 2), 4, 2.5
PQMF_TAPS, PQMF_CUTOFF, PQMF_BETA = 62, 0.142, 9.0
FULL_STFT = ((1024, 120, 600), (2048, 240, 1200), (512, 50, 240))  # (fft, hop, window)
SUB_STFT = ((384, 30, 150), (683, 60, 300), (171, 10, 60))
Maps = list[Tensor]


def wn(module: nn.Module) -> nn.Module:
    return weight_norm(module)


class ResidualStack(nn.Module):
    def __init__(self, channels: int, dilation: int) -> None:
        super().__init__()
        self.stack = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ReflectionPad1d(dilation),
            wn(nn.Conv1d(channels, channels, 3, dilation=dilation)),
            nn.LeakyReLU(0.2),
            wn(nn.Conv1d(channels, channels, 1)),
        )
        self.skip_layer = wn(nn.Conv1d(channels, channels, 1))

    def forward(self, c: Tensor) -> Tensor:
        return self.stack(c) + self.skip_layer(c)


class MelGANGenerator(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.ReflectionPad1d(3), wn(nn.Conv1d(N_MELS, channels, 7))]
        for i, r in enumerate(UPSAMPLE):
            c_in, c_out = channels // 2**i, channels // 2 ** (i + 1)
            layers += [
                nn.LeakyReLU(0.2),
                wn(nn.ConvTranspose1d(c_in, c_out, r * 2, r, r // 2 + r % 2, r % 2)),
            ]
            layers += [ResidualStack(c_out, 3**j) for j in range(STACKS)]
        layers += [
            nn.LeakyReLU(0.2),
            nn.ReflectionPad1d(3),
            wn(nn.Conv1d(channels // 2 ** len(UPSAMPLE), SUBBANDS, 7)),
            nn.Tanh(),
        ]
        self.melgan = nn.Sequential(*layers)

    def forward(self, c: Tensor) -> Tensor:
        return self.melgan(c)


class PQMF(nn.Module):
    def __init__(self, subbands: int, taps: int, cutoff_ratio: float, beta: float) -> None:
        super().__init__()
        m = torch.arange(taps + 1, dtype=torch.float64) - 0.5 * taps
        proto = cutoff_ratio * torch.sinc(cutoff_ratio * m)  # sin(pi fc m) / (pi m)
        proto = proto * torch.kaiser_window(
            taps + 1, periodic=False, beta=beta, dtype=torch.float64
        )
        k = torch.arange(subbands, dtype=torch.float64)[:, None]
        arg = (2 * k + 1) * (math.pi / (2 * subbands)) * m
        phase = (-1.0) ** k * math.pi / 4
        analysis = 2 * proto * torch.cos(arg + phase)
        synthesis = 2 * proto * torch.cos(arg - phase)
        updown = torch.zeros(subbands, subbands, subbands)
        for i in range(subbands):
            updown[i, i, 0] = 1.0
        self.subbands, self.pad = subbands, taps // 2
        self.register_buffer("analysis_filter", analysis.float().unsqueeze(1))
        self.register_buffer("synthesis_filter", synthesis.float().unsqueeze(0))
        self.register_buffer("updown_filter", updown)

    def analysis(self, x: Tensor) -> Tensor:
        x = F.pad(x, (self.pad, self.pad))
        return F.conv1d(x, self.analysis_filter, stride=self.subbands)

    def synthesis(self, x: Tensor) -> Tensor:
        x = F.conv_transpose1d(x, self.updown_filter * self.subbands, stride=self.subbands)
        return F.conv1d(F.pad(x, (self.pad, self.pad)), self.synthesis_filter)


class MelGANDiscriminator(nn.Module):
    def __init__(self, channels: int, max_channels: int) -> None:
        super().__init__()
        layers = [
            nn.Sequential(nn.ReflectionPad1d(7), wn(nn.Conv1d(1, channels, 15)), nn.LeakyReLU(0.2))
        ]
        in_chs = channels
        for s in (4, 4, 4):
            out_chs = min(in_chs * s, max_channels)
            conv = nn.Conv1d(in_chs, out_chs, s * 10 + 1, s, s * 5, groups=in_chs // 4)
            layers.append(nn.Sequential(wn(conv), nn.LeakyReLU(0.2)))
            in_chs = out_chs
        out_chs = min(in_chs * 2, max_channels)
        layers.append(
            nn.Sequential(wn(nn.Conv1d(in_chs, out_chs, 5, padding=2)), nn.LeakyReLU(0.2))
        )
        layers.append(wn(nn.Conv1d(out_chs, 1, 3, padding=1)))
        self.layers = nn.ModuleList(layers)

    def forward(self, x: Tensor) -> Maps:
        outs = []
        for f in self.layers:
            x = f(x)
            outs.append(x)
        return outs


class MelGANMultiScaleDiscriminator(nn.Module):
    def __init__(self, channels: int, max_channels: int, scales: int = 3) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(
            MelGANDiscriminator(channels, max_channels) for _ in range(scales)
        )
        self.pooling = nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False)

    def forward(self, x: Tensor) -> list[Maps]:
        outs = []
        for f in self.discriminators:
            outs.append(f(x))
            x = self.pooling(x)
        return outs


def stft_magnitude(x: Tensor, fft: int, hop: int, window: Tensor) -> Tensor:
    x_stft = torch.stft(x, fft, hop, window.numel(), window, return_complex=True)
    power = x_stft.real**2 + x_stft.imag**2
    return torch.sqrt(torch.clamp(power, min=1e-7)).transpose(2, 1)


def multi_resolution_stft_loss(
    x: Tensor, y: Tensor, resolutions: tuple, windows: list[Tensor]
) -> tuple[Tensor, Tensor]:
    x, y = x.reshape(-1, x.size(-1)), y.reshape(-1, y.size(-1))
    sc_loss, mag_loss = 0.0, 0.0
    for (fft, hop, _), window in zip(resolutions, windows, strict=True):
        x_mag, y_mag = stft_magnitude(x, fft, hop, window), stft_magnitude(y, fft, hop, window)
        sc_loss = sc_loss + torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")
        mag_loss = mag_loss + F.l1_loss(torch.log(y_mag), torch.log(x_mag))
    return sc_loss / len(resolutions), mag_loss / len(resolutions)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, segment, g_channels, d_channels, d_max = 2, 2048, 24, 4, 64
    else:
        batch, segment, g_channels, d_channels, d_max = 8, SEGMENT, 384, 16, 512
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    gen = MelGANGenerator(g_channels).to(device=device, dtype=dtype).eval()
    disc = MelGANMultiScaleDiscriminator(d_channels, d_max).to(device=device, dtype=dtype).eval()
    pqmf = PQMF(SUBBANDS, PQMF_TAPS, PQMF_CUTOFF, PQMF_BETA).to(device)  # analysis, fp32
    pqmf_g = PQMF(SUBBANDS, PQMF_TAPS, PQMF_CUTOFF, PQMF_BETA).to(device, dtype)  # synthesis
    full_windows = [torch.hann_window(w, device=device) for _, _, w in FULL_STFT]
    sub_windows = [torch.hann_window(w, device=device) for _, _, w in SUB_STFT]
    streams = side_streams(device, 2)

    def adversarial(y_: Tensor) -> Tensor:
        p_ = disc(y_)
        return sum(
            F.mse_loss(p[-1].float(), torch.ones_like(p[-1], dtype=torch.float32)) for p in p_
        ) / len(p_)

    def spectral(y_mb_: Tensor, y_: Tensor, y: Tensor) -> Tensor:
        sc, mag = multi_resolution_stft_loss(y_, y, FULL_STFT, full_windows)
        y_mb = pqmf.analysis(y)
        sub_sc, sub_mag = multi_resolution_stft_loss(y_mb_, y_mb, SUB_STFT, sub_windows)
        return torch.stack((sc, mag, sub_sc, sub_mag))

    @torch.no_grad()
    def step(mel: Tensor, y: Tensor) -> Tensor:
        y_mb_ = gen(mel)
        y_ = pqmf_g.synthesis(y_mb_)
        adv, stft = fork_join(
            device,
            streams,
            [lambda: adversarial(y_), lambda: spectral(y_mb_.float(), y_.float(), y)],
        )
        gen_loss = 0.5 * (stft[0] + stft[1]) + 0.5 * (stft[2] + stft[3]) + LAMBDA_ADV * adv
        return torch.cat((stft, adv.view(1), gen_loss.view(1)))

    def make() -> tuple[Tensor, Tensor]:
        mel = torch.randn(batch, N_MELS, segment // HOP, device=device, dtype=dtype)
        return mel, 0.3 * torch.randn(batch, 1, segment, device=device)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"Multi-band MelGAN generator ({g_channels}ch, x8x4x2, 4 bands + PQMF), then its 3-scale "
        f"discriminator (grouped Conv1d k41, groups to {d_max // 4 // 2}) beside full-/sub-band "
        f"multi-resolution STFT losses on 2 side streams, {precision} nets, b{batch} x {segment}"
    )
    return Built(step, inputs, description, [gen, disc, pqmf, pqmf_g])


if __name__ == "__main__":
    main(build, __doc__)
