"""EnCodec 24 kHz (Défossez et al., 2022) in part of one forward pass of its training step on 2
one-second segments: the SEANet encoder with its 2-layer LSTM on one side stream, the multi-scale
STFT discriminator judging the real segments and the previous reconstructions on the other, then,
after the join, the residual vector quantizer's 8 codebooks (6 kbps) on the encoder's 75 frames and
the losses (fifty-ninth hold-out: under fp16 autocast, two concurrent chains of unequal make: on
side stream 1 some 20 weight-normed convolutions over up to 32 x 24000 samples, ELUs and reflection
pads, then a cuDNN LSTM of 2 layers and 512 units over the 75 frames (cuDNN runs the layers'
recurrences on streams of its own, some 300 small GEMM and cell kernels), the skip add and the last
convolution, some 500 kernels; on side stream 2 three cuFFT STFTs per signal (FFT sizes 1024, 2048
and 512) and per resolution five weight-normed 2-D convolutions of 32 channels ((3, 9) kernels,
stride (1, 2) on frequency, dilations 1, 2 and 4 on time) of 0.3 to 2.5 GFLOP, leaky ReLUs and the
conv_post, twice, then the hinge and relative feature-matching losses, some 300 kernels; then the
quantizer's 8 rounds of distance GEMM, argmax, embedding gather and residual update; some 1 to 2.5
ms of GPU time in all). Laid out as facebookresearch/encodec's ``modules/seanet.py``,
``modules/conv.py``, ``modules/lstm.py``, ``msstftd.py`` and ``quantization/core_vq.py`` for
``encodec_model_24khz`` (causal, weight norm, 32 filters, ratios (8, 5, 4, 2), dimension 128,
1024-entry codebooks): ``SEANetEncoder``: ``SConv1d(1, 32, 7)``, then per ratio r of (2, 4, 5, 8) a
``SEANetResnetBlock`` (ELU, ``SConv1d(c, c / 2, 3)``, ELU, ``SConv1d(c / 2, c, 1)``, plus the
shortcut ``SConv1d(c, c, 1)``, ``true_skip`` off), ELU and ``SConv1d(c, 2c, 2r, stride r)``;
``SLSTM(512, 2 layers)`` (time first, ``nn.LSTM(512, 512, 2)``, the input added back); ELU and
``SConv1d(512, 128, 7)``. Each ``SConv1d`` pads causally (the whole (k - 1) d - (s - 1) on the left,
reflect, plus the extra right padding that completes the last frame) and runs a weight-normed
``Conv1d`` (``torch.nn.utils.parametrizations.weight_norm``, the weight recomputed at each call).
``MultiScaleSTFTDiscriminator(filters 32)``: three ``DiscriminatorSTFT``s of FFT sizes 1024, 2048
and 512, hops 256, 512 and 128, Hann windows of the FFT size, each the spectrogram (torchaudio's
``Spectrogram``, ``center`` off, ``normalized``, here ``torch.stft`` divided by the window's L2
norm), real and imaginary parts as 2 channels, time before frequency, ``NormConv2d(2, 32, (3, 9),
padding (1, 4))``, three ``NormConv2d(32, 32, (3, 9), stride (1, 2), dilation (d, 1), padding (d,
4))`` of d 1, 2 and 4, ``NormConv2d(32, 32, (3, 3), padding (1, 1))``, each followed by
``LeakyReLU(0.2)`` and kept as a feature map, and ``conv_post`` ``NormConv2d(32, 1, (3, 3), padding
(1, 1))``. Side stream 1: the encoder; side stream 2: the discriminator on the real segments and on
the reconstructions, the adversarial loss (the mean over the scales of mean relu(1 - D(x_hat))) and
the relative feature-matching loss (the mean over scales and layers of mean |f(x) - f(x_hat)| / mean
|f(x)|). Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream`` on
the branch outputs outside capture); after the join, on the current stream, the
``ResidualVectorQuantization`` of the latent (75 x 2 vectors of 128) by 8 ``EuclideanCodebook``s in
fp32 (the distance -(|x|^2 - 2 x e^T + |e|^2), the argmax, the embedding, the residual less it, the
commitment MSE), and the adversarial, feature-matching and commitment losses stacked with their
total. fp32 weights under ``torch.autocast(dtype= torch.float16)`` on a GPU, as EnCodec trains in
mixed precision (fp16 convolutions, the LSTM's weights held in fp16 so that cuDNN gets them flat,
the STFTs and the quantizer in fp32; plain fp32 on a CPU), eval, no gradients, random weights
(torch's defaults; the codebooks Gaussian). Inputs (two input sets), batch first: the real segments
x (2, 1, 24000), Gaussian x 0.3, and the reconstructions x_hat (2, 1, 24000), x plus Gaussian noise
x 0.05. Returns the adversarial, feature-matching and commitment losses and their total (4,), fp32.

    traceinspect profile encodec_seanet_lstm_beside_msstftd_2streams_b2.py
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

SAMPLE_RATE, RATIOS, DIMENSION, N_Q, BINS = 24000, (8, 5, 4, 2), 128, 8, 1024
STFT_SCALES = ((1024, 256), (2048, 512), (512, 128))  # (n_fft = window, hop)
DILATIONS = (1, 2, 4)
Maps = list[Tensor]


class SConv1d(nn.Module):
    """A causal, reflect-padded, weight-normed Conv1d (encodec.modules.conv.SConv1d)."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int = 1, dilation: int = 1):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c_in, c_out, kernel, stride, dilation=dilation))
        self.kernel, self.stride = (kernel - 1) * dilation + 1, stride

    def forward(self, x: Tensor) -> Tensor:
        padding_total = self.kernel - self.stride
        length = x.shape[-1]
        n_frames = (length - self.kernel + padding_total) / self.stride + 1
        ideal = (math.ceil(n_frames) - 1) * self.stride + (self.kernel - padding_total)
        x = F.pad(x, (padding_total, ideal - length), mode="reflect")
        return self.conv(x)


class SEANetResnetBlock(nn.Module):
    def __init__(self, dim: int, compress: int = 2) -> None:
        super().__init__()
        hidden = dim // compress
        self.block = nn.Sequential(
            nn.ELU(), SConv1d(dim, hidden, 3), nn.ELU(), SConv1d(hidden, dim, 1)
        )
        self.shortcut = SConv1d(dim, dim, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.shortcut(x) + self.block(x)


class SLSTM(nn.Module):
    def __init__(self, dimension: int, num_layers: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(dimension, dimension, num_layers)

    def forward(self, x: Tensor) -> Tensor:
        x = x.permute(2, 0, 1)
        y, _ = self.lstm(x)
        return (y + x).permute(1, 2, 0)


class SEANetEncoder(nn.Module):
    def __init__(self, n_filters: int, dimension: int) -> None:
        super().__init__()
        mult, layers = 1, [SConv1d(1, n_filters, 7)]
        for ratio in reversed(RATIOS):
            layers += [
                SEANetResnetBlock(mult * n_filters),
                nn.ELU(),
                SConv1d(mult * n_filters, mult * n_filters * 2, ratio * 2, stride=ratio),
            ]
            mult *= 2
        layers += [SLSTM(mult * n_filters, 2), nn.ELU(), SConv1d(mult * n_filters, dimension, 7)]
        self.model = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.model(x)


class DiscriminatorSTFT(nn.Module):
    def __init__(self, filters: int, n_fft: int, hop: int) -> None:
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        window = torch.hann_window(n_fft)
        self.register_buffer("window", window)
        self.scale = 1.0 / float(window.pow(2).sum().sqrt())  # torchaudio's normalized=True
        convs = [weight_norm(nn.Conv2d(2, filters, (3, 9), padding=(1, 4)))]
        for d in DILATIONS:
            conv = nn.Conv2d(filters, filters, (3, 9), (1, 2), dilation=(d, 1), padding=(d, 4))
            convs.append(weight_norm(conv))
        convs.append(weight_norm(nn.Conv2d(filters, filters, (3, 3), padding=(1, 1))))
        self.convs = nn.ModuleList(convs)
        self.conv_post = weight_norm(nn.Conv2d(filters, 1, (3, 3), padding=(1, 1)))

    def forward(self, x: Tensor) -> tuple[Tensor, Maps]:
        b = x.shape[0]
        z = torch.stft(
            x.reshape(b, -1).float(),
            self.n_fft,
            self.hop,
            self.n_fft,
            self.window,
            center=False,
            return_complex=True,
        )
        z = torch.view_as_real(z * self.scale)  # (b, freq, frames, 2)
        z = z.permute(0, 3, 2, 1)  # b c t w
        fmap = []
        for conv in self.convs:
            z = F.leaky_relu(conv(z), 0.2)
            fmap.append(z)
        return self.conv_post(z), fmap


class MultiScaleSTFTDiscriminator(nn.Module):
    def __init__(self, filters: int, scales: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        self.discriminators = nn.ModuleList(DiscriminatorSTFT(filters, n, h) for n, h in scales)

    def forward(self, x: Tensor) -> tuple[Maps, list[Maps]]:
        logits, fmaps = [], []
        for disc in self.discriminators:
            logit, fmap = disc(x)
            logits.append(logit)
            fmaps.append(fmap)
        return logits, fmaps


def residual_vq(x: Tensor, codebooks: Tensor) -> tuple[Tensor, Tensor]:
    """core_vq.ResidualVectorQuantization.forward in eval: x (b, d, n); the quantized latent and
    the summed commitment losses."""
    residual = x.transpose(1, 2).reshape(-1, x.shape[1]).float()
    quantized_out = torch.zeros_like(residual)
    commit = residual.new_zeros(())
    for embed in codebooks:  # (bins, d)
        dist = -(
            residual.pow(2).sum(1, keepdim=True)
            - 2 * residual @ embed.t()
            + embed.pow(2).sum(1, keepdim=True).t()
        )
        embed_ind = dist.max(dim=-1).indices
        quantize = F.embedding(embed_ind, embed)
        commit = commit + F.mse_loss(quantize, residual)
        residual = residual - quantize
        quantized_out = quantized_out + quantize
    return quantized_out, commit


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, samples, n_filters, disc_filters, n_q, bins = 1, 3200, 4, 4, 2, 16
        scales = ((256, 64), (512, 128), (128, 32))
    else:
        batch, samples, n_filters, disc_filters, n_q, bins = 2, SAMPLE_RATE, 32, 32, N_Q, BINS
        scales = STFT_SCALES
    dimension = DIMENSION if not smoke else 16
    encoder = SEANetEncoder(n_filters, dimension).to(device).eval()
    if device.type == "cuda":
        for module in encoder.modules():
            if isinstance(module, nn.LSTM):
                module.half()  # held flat in fp16, as autocast would run it
    msstftd = MultiScaleSTFTDiscriminator(disc_filters, scales).to(device).eval()
    codebooks = torch.randn(n_q, bins, dimension, device=device)
    autocast = torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda")
    streams = side_streams(device, 2)

    def encode(x: Tensor) -> Tensor:
        with autocast:
            return encoder(x).float()

    def judge(x: Tensor, x_hat: Tensor) -> Tensor:
        with autocast:
            logits_real, fmaps_real = msstftd(x)
            logits_fake, fmaps_fake = msstftd(x_hat)
            adv = sum(F.relu(1 - lf.float()).mean() for lf in logits_fake) / len(logits_fake)
            feat = [
                torch.mean(torch.abs(fr.float() - ff.float())) / torch.mean(torch.abs(fr.float()))
                for fs_r, fs_f in zip(fmaps_real, fmaps_fake, strict=True)
                for fr, ff in zip(fs_r, fs_f, strict=True)
            ]
            return torch.stack((adv, sum(feat) / len(feat)))

    @torch.no_grad()
    def step(x: Tensor, x_hat: Tensor) -> Tensor:
        latent, losses = fork_join(device, streams, [lambda: encode(x), lambda: judge(x, x_hat)])
        _, commit = residual_vq(latent, codebooks)
        parts = torch.cat((losses, commit.view(1)))
        return torch.cat((parts, parts.sum().view(1)))

    def make() -> tuple[Tensor, Tensor]:
        x = 0.3 * torch.randn(batch, 1, samples, device=device)
        return x, x + 0.05 * torch.randn_like(x)

    inputs = [make() for _ in range(2)]
    precision = "fp16 autocast" if device.type == "cuda" else "fp32"
    description = (
        f"EnCodec 24kHz SEANet encoder ({n_filters} filters, 2-layer LSTM) beside the MS-STFT "
        f"discriminator (3 scales, real + reconstructed) on 2 side streams, then RVQ x{n_q}, "
        f"{precision}, b{batch} x {samples}"
    )
    return Built(step, inputs, description, [encoder, msstftd, codebooks])


if __name__ == "__main__":
    main(build, __doc__)
