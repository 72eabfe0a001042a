"""MetricGAN+ (Fu et al., 2021) speech enhancement in one forward pass of its training step on 8
noisy utterances of 1.5 s at 16 kHz: the STFT log-magnitudes, then the mask-estimating generator (a
2-layer bidirectional LSTM) enhancing the noisy spectrogram on one side stream, beside the metric
discriminator (a spectrally normalised CNN predicting PESQ) scoring the clean-clean and the
noisy-clean pairs on the other, then, after the join, the discriminator on the enhanced-clean pair
and the generator's and discriminator's losses (sixtieth hold-out: fp16 networks, fp32 STFTs and
losses: on the current stream two cuFFT STFTs of 512 points (94 frames, 257 bins) and the
log-magnitudes; on side stream 1 ``nn.LSTM(257, 256, num_layers 2, bidirectional)`` over the 94
frames, which cuDNN runs as one call, each layer's two directions on streams of its own and the
layers in turn, some 400 small GEMM and cell kernels in a serial chain of 2 x 94 steps, then two
GEMMs, a leaky ReLU and the learnable sigmoid mask; on side stream 2 twice a BatchNorm and four
cuDNN 5 x 5 convolutions of 15 channels over (2, 94, 257) maps with leaky ReLUs, the mean over time
and frequency and three small GEMMs, each weight spectrally normalised at each call (a GEMV and a
dot); then the discriminator once more and four MSE losses; some 1 to 2 ms of GPU time in all, most
of it the recurrence). Laid out as speechbrain's ``lobes/models/MetricGAN.py`` and its VoiceBank
``enhance/MetricGAN`` recipe: ``EnhancementGenerator`` (``LSTM(257, hidden, 2 layers,
bidirectional, batch first)``, ``Linear(2 hidden, 300)``, ``LeakyReLU(0.3)``, ``Linear(300,
257)``, ``Learnable_sigmoid`` 1.2 x sigmoid(slope x), slope a 257-vector of ones; hidden 200 in the
recipe, 256 here), ``MetricDiscriminator`` (``BatchNorm2d(2, momentum 0.01)``, four
``Conv2d(c, 15, (5, 5))`` without padding, ``LeakyReLU(0.3)`` after each, the mean over the last
two dimensions, ``Linear(15, 50)``, ``Linear(50, 10)``, ``Linear(10, 1)``, the convolutions and
linears spectrally normalised, here ``torch.nn.utils.parametrizations.spectral_norm``, whose eval
forward uses the stored singular vectors), the features log1p of the STFT magnitude (n_fft 512,
window 512 Hamming, hop 256, centred), the estimate the mask times the noisy features, each
discriminator input the estimate and the clean features stacked as 2 channels (time before
frequency). The losses as the recipe trains them: the discriminator's MSE of D(clean, clean) to 1,
of D(enhanced, clean) and D(noisy, clean) to their normalised PESQ scores (computed off the GPU,
here inputs), the generator's MSE of D(enhanced, clean) to 1. Every utterance at full length (the
recipe's packing by length left out). Fork and join are the project's ``fork_join``
(``wait_stream``, and ``record_stream`` on the branch outputs outside capture). fp16 weights and
activations of both networks on a GPU (fp32 on a CPU), eval, no gradients, random weights (torch's
defaults; the BatchNorm's running mean Gaussian x 0.1 and variance uniform in [0.5, 1.5], set at
build). Inputs (two input sets), batch first: the noisy waveforms (8, 24000), the clean waveform
plus Gaussian noise x 0.1, the clean waveforms (8, 24000), Gaussian x 0.3, fp32, and the normalised
PESQ scores of the enhanced and noisy utterances (8, 2), uniform in [0, 1], fp32. Returns the four
losses and their total (5,), fp32.

    traceinspect profile metricgan_plus_bilstm_beside_metric_disc_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn
from torch.nn.utils.parametrizations import spectral_norm

SAMPLE_RATE, N_FFT, HOP, SAMPLES, HIDDEN, LIN_DIM = 16000, 512, 256, 24000, 256, 300
BASE_CHANNELS, KERNEL = 15, (5, 5)


class LearnableSigmoid(nn.Module):
    def __init__(self, in_features: int, beta: float = 1.2) -> None:
        super().__init__()
        self.beta = beta
        self.slope = nn.Parameter(torch.ones(in_features))

    def forward(self, x: Tensor) -> Tensor:
        return self.beta * torch.sigmoid(self.slope * x)


class EnhancementGenerator(nn.Module):
    def __init__(self, bins: int, hidden: int, lin_dim: int) -> None:
        super().__init__()
        self.blstm = nn.LSTM(bins, hidden, 2, batch_first=True, bidirectional=True)
        self.linear1 = nn.Linear(2 * hidden, lin_dim)
        self.activation = nn.LeakyReLU(0.3)
        self.linear2 = nn.Linear(lin_dim, bins)
        self.learnable_sigmoid = LearnableSigmoid(bins)

    def forward(self, x: Tensor) -> Tensor:
        out, _ = self.blstm(x)
        out = self.activation(self.linear1(out))
        return self.learnable_sigmoid(self.linear2(out))


class MetricDiscriminator(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(2, momentum=0.01)
        self.convs = nn.ModuleList(
            spectral_norm(nn.Conv2d(2 if i == 0 else channels, channels, KERNEL)) for i in range(4)
        )
        self.linear1 = spectral_norm(nn.Linear(channels, 50))
        self.linear2 = spectral_norm(nn.Linear(50, 10))
        self.linear3 = spectral_norm(nn.Linear(10, 1))
        self.activation = nn.LeakyReLU(0.3)

    def forward(self, est: Tensor, target: Tensor) -> Tensor:
        out = self.bn(torch.stack((est, target), dim=1))  # (b, 2, t, f)
        for conv in self.convs:
            out = self.activation(conv(out))
        out = out.mean(dim=(2, 3))
        out = self.activation(self.linear1(out))
        out = self.activation(self.linear2(out))
        return self.linear3(out).squeeze(1)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, n_fft, hop, samples, hidden, lin_dim, channels = 2, 32, 16, 320, 8, 12, 3
    else:
        batch, n_fft, hop, samples, hidden = 8, N_FFT, HOP, SAMPLES, HIDDEN
        lin_dim, channels = LIN_DIM, BASE_CHANNELS
    bins = n_fft // 2 + 1
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    generator = EnhancementGenerator(bins, hidden, lin_dim).to(device, dtype).eval()
    discriminator = MetricDiscriminator(channels)
    discriminator.bn.running_mean.normal_(0, 0.1)
    discriminator.bn.running_var.uniform_(0.5, 1.5)
    discriminator = discriminator.to(device, dtype).eval()
    window = torch.hamming_window(n_fft, device=device)
    streams = side_streams(device, 2)

    def features(wav: Tensor) -> Tensor:
        spec = torch.stft(wav, n_fft, hop, n_fft, window, center=True, return_complex=True)
        return torch.log1p(spec.abs()).transpose(1, 2).to(dtype)  # (b, t, f)

    def enhance(noisy_spec: Tensor) -> Tensor:
        return generator(noisy_spec) * noisy_spec

    def judge_references(noisy_spec: Tensor, clean_spec: Tensor) -> tuple[Tensor, Tensor]:
        return discriminator(clean_spec, clean_spec), discriminator(noisy_spec, clean_spec)

    @torch.no_grad()
    def step(noisy: Tensor, clean: Tensor, pesq: Tensor) -> Tensor:
        noisy_spec, clean_spec = features(noisy), features(clean)
        est_spec, (d_clean, d_noisy) = fork_join(
            device,
            streams,
            [lambda: enhance(noisy_spec), lambda: judge_references(noisy_spec, clean_spec)],
        )
        d_est = discriminator(est_spec, clean_spec).float()
        ones = torch.ones_like(d_est)
        losses = torch.stack(
            (
                F.mse_loss(d_clean.float(), ones),
                F.mse_loss(d_est, pesq[:, 0]),
                F.mse_loss(d_noisy.float(), pesq[:, 1]),
                F.mse_loss(d_est, ones),  # the generator's adversarial loss
            )
        )
        return torch.cat((losses, losses.sum().view(1)))

    def make() -> tuple[Tensor, Tensor, Tensor]:
        clean = 0.3 * torch.randn(batch, samples, device=device)
        noisy = clean + 0.1 * torch.randn_like(clean)
        return noisy, clean, torch.rand(batch, 2, device=device)

    inputs = [make() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    frames = samples // hop + 1
    description = (
        f"MetricGAN+: STFT, BiLSTM {hidden} x2 mask generator ({frames} frames) beside the "
        f"metric discriminator (clean/noisy pairs) on 2 side streams, D(enhanced) + losses, "
        f"{precision}, b{batch}"
    )
    return Built(step, inputs, description, [generator, discriminator, window])


if __name__ == "__main__":
    main(build, __doc__)
