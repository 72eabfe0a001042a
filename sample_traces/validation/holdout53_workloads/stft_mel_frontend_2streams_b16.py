"""A Whisper-style speech recognizer's audio front end (Radford et al., 2022) for the two
microphone channels of 16 clips of 10 s at 16 kHz, each channel's log-mel spectrogram on its own
side stream (fifty-third hold-out: two chains of memory-bound spectral kernels, cuFFT r2c on
16,016 frames of 400 samples each and the elementwise and reduction kernels around it, side by
side, joined on the current stream by Whisper's encoder stem), after ``whisper/audio.py``'s
``log_mel_spectrogram`` with torchaudio's ``MelSpectrogram`` layout of the filterbank. Each
channel (16, 160000) fp32: pre-emphasis with coefficient 0.97 over the whole clip, the first
sample kept (``torch.cat`` of x[:, :1] and x[:, 1:] - 0.97 x[:, :-1], as NeMo's
``FilterbankFeatures`` applies it; Whisper itself has none); ``torch.stft`` (n_fft 400, hop 160,
a periodic Hann window of 400 made at build as a buffer, ``center=True`` with reflect padding,
``return_complex=True``: 16 x 201 x 1001 complex64, 26 MB), the last frame dropped and the power
spectrum |X|^2 (``abs() ** 2``, as Whisper); the 80-band mel filterbank, Whisper's (librosa's
Slaney mel scale and Slaney area normalization, 0 to 8 kHz) made at build as a (201, 80) matrix
buffer in torchaudio's ``melscale_fbanks`` layout and applied as torchaudio's ``MelScale`` does
(``matmul(spec.transpose(-1, -2), fb).transpose(-1, -2)``: (16, 80, 1000)); then
``clamp(min=1e-10).log10()``, Whisper's dynamic-range clamp per clip (``maximum(log_spec,
amax(log_spec) - 8)``, the maximum over each clip's mels and frames, as the batched feature
extractors take it, where Whisper's single clip takes the whole tensor's) and its scaling
(log_spec + 4) / 4. Side stream 1: the left channel; side stream 2: the right one. After the
join (the project's ``fork_join``: ``wait_stream``, and ``record_stream`` on the branch outputs
outside capture), on the current stream: the two channels' log-mels averaged and cast to the
stem's dtype, then Whisper-tiny's encoder stem: ``Conv1d(80, 384, 3, padding 1)``, GELU,
``Conv1d(384, 384, 3, stride 2, padding 1)``, GELU (1,000 frames -> 500), permuted to (b, t, d)
and the sinusoidal position table (500 x 384, a buffer made at build) added, as
``AudioEncoder.forward`` begins. The front end in fp32 throughout (as Whisper computes it), the
stem in bf16 on a GPU (fp32 on a CPU), eval mode, no gradients. Inputs (two input sets): the
left and right channels (16, 160000) fp32, speech-like harmonics with a random pitch plus noise,
the right channel the left one delayed by 7 samples, attenuated, with its own noise. Returns the
stem's output (16, 500, 384).

    traceinspect profile stft_mel_frontend_2streams_b16.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

SAMPLE_RATE, N_FFT, HOP, N_MELS, PREEMPH = 16_000, 400, 160, 80, 0.97


def hz_to_mel(f: Tensor) -> Tensor:
    """librosa's Slaney mel scale: linear below 1 kHz, logarithmic above."""
    f_sp, min_log_hz, logstep = 200.0 / 3, 1000.0, math.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return torch.where(
        f >= min_log_hz,
        min_log_mel + torch.log(f.clamp(min=min_log_hz) / min_log_hz) / logstep,
        f / f_sp,
    )


def mel_to_hz(m: Tensor) -> Tensor:
    f_sp, min_log_hz, logstep = 200.0 / 3, 1000.0, math.log(6.4) / 27.0
    min_log_mel = min_log_hz / f_sp
    return torch.where(
        m >= min_log_mel, min_log_hz * torch.exp(logstep * (m - min_log_mel)), f_sp * m
    )


def mel_filterbank(n_freqs: int, n_mels: int, sample_rate: int) -> Tensor:
    """Whisper's mel filters (librosa ``filters.mel``, Slaney scale and normalization) as
    torchaudio lays them out: (n_freqs, n_mels)."""
    freqs = torch.linspace(0, sample_rate / 2, n_freqs, dtype=torch.float64)
    edges = torch.tensor([0.0, sample_rate / 2], dtype=torch.float64)
    lo, hi = hz_to_mel(edges).tolist()
    mel_f = mel_to_hz(torch.linspace(lo, hi, n_mels + 2, dtype=torch.float64))
    fdiff = mel_f[1:] - mel_f[:-1]
    ramps = mel_f[:, None] - freqs[None, :]  # (n_mels + 2, n_freqs)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = torch.clamp(torch.minimum(lower, upper), min=0)
    weights *= (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]  # Slaney: equal area per band
    return weights.t().float().contiguous()


def sinusoids(length: int, channels: int) -> Tensor:
    """Whisper's position table: sines then cosines over geometric timescales."""
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2).float())
    t = torch.arange(length).float()[:, None] * inv[None]
    return torch.cat([t.sin(), t.cos()], dim=1)


class LogMel(nn.Module):
    """One channel's front end: pre-emphasis, STFT, power, mel matmul, Whisper's log scaling."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.register_buffer("fb", mel_filterbank(N_FFT // 2 + 1, N_MELS, SAMPLE_RATE))

    def forward(self, wave: Tensor) -> Tensor:  # wave: (b, samples) fp32
        wave = torch.cat((wave[:, :1], wave[:, 1:] - PREEMPH * wave[:, :-1]), dim=1)
        stft = torch.stft(
            wave, N_FFT, hop_length=HOP, window=self.window, center=True, pad_mode="reflect",
            return_complex=True,
        )  # fmt: skip
        power = stft[..., :-1].abs() ** 2  # (b, 201, frames)
        mel = torch.matmul(power.transpose(-1, -2), self.fb).transpose(-1, -2)  # (b, 80, frames)
        log_spec = torch.clamp(mel, min=1e-10).log10()
        log_spec = torch.maximum(log_spec, log_spec.amax(dim=(1, 2), keepdim=True) - 8.0)
        return (log_spec + 4.0) / 4.0


class Stem(nn.Module):
    """The start of Whisper's ``AudioEncoder``: two convolutions, GELU, the position table."""

    def __init__(self, frames: int, d: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(N_MELS, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(frames // 2, d))

    def forward(self, mel: Tensor) -> Tensor:  # mel: (b, 80, frames)
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel))))
        return x.permute(0, 2, 1) + self.positional_embedding


def build(device: torch.device, smoke: bool) -> Built:
    batch, seconds, d = (2, 0.2, 32) if smoke else (16, 10.0, 384)
    samples = int(SAMPLE_RATE * seconds)
    frames = samples // HOP  # Whisper drops the STFT's last frame
    dtype = low_precision(device)
    left_mel, right_mel = LogMel().to(device).eval(), LogMel().to(device).eval()
    stem = Stem(frames, d).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(left: Tensor, right: Tensor) -> Tensor:
        mel_l, mel_r = fork_join(
            device, streams, [lambda: left_mel(left), lambda: right_mel(right)]
        )
        return stem(((mel_l + mel_r) / 2).to(dtype))

    # speech-like test signals: a few harmonics with a random pitch, plus noise; the right
    # microphone hears the same source 7 samples later, attenuated, with its own noise
    t = torch.arange(samples, device=device) / SAMPLE_RATE

    def make() -> tuple[Tensor, Tensor]:
        f0 = 100 + 150 * torch.rand(batch, 1, device=device)
        source = 0.1 * sum(torch.sin(2 * math.pi * h * f0 * t) / h for h in range(1, 6))
        left = source + 0.01 * torch.randn(batch, samples, device=device)
        right = 0.8 * torch.roll(source, 7, dims=1) + 0.01 * torch.randn(
            batch, samples, device=device
        )
        return left, right

    inputs = [make() for _ in range(2)]
    description = (
        f"Whisper log-mel front end x 2 channels (pre-emphasis, stft n_fft {N_FFT} hop {HOP}, "
        f"{N_MELS}-mel matmul, log10 clamp) + conv stem {N_MELS}->{d}, b{batch} x {samples} "
        f"samples ({frames} frames), 2 side streams"
    )
    return Built(step, inputs, description, [left_mel, right_mel, stem])


if __name__ == "__main__":
    main(build, __doc__)
