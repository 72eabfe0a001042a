"""An audio front end, log-mel features of 8 utterances of 1 s at 16 kHz, fp32 (sixteenth
hold-out), inference, as a speech recognizer's feature extractor computes them: ``torch.stft``
(n_fft 512, hop 160, a periodic Hann window of 512 made at build, ``center=True`` with
reflect padding, ``return_complex=True``: 8 x 257 x 101 complex, through cuFFT on a GPU), the
power spectrum |X|^2 (``abs`` and ``pow``), a fixed 80-band mel filterbank (HTK mel scale,
0 to 8 kHz, triangular filters without area normalization, as torchaudio's
``melscale_fbanks`` makes them; an 80 x 257 matrix made at build) applied as one batched
matmul (80 x 257 by 8 x 257 x 101), log(x + 1e-6), then per-utterance mean and variance
normalization of each mel band over the utterance's 101 frames (mean and ``var`` over the
frames, (x - mean) / sqrt(var + 1e-5)). Some 15 kernels (the reflect padding, the
windowing, one cuFFT r2c kernel, the power, the matmul, the log, the statistics), over at
most 8 x 257 x 101 values each: launch-bound. Input: the waveforms (8 x 16000). Returns the
normalized log-mel features (8 x 80 x 101).

    traceinspect profile stft_melspec_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor

SAMPLE_RATE, N_FFT, HOP, N_MELS = 16_000, 512, 160, 80


def hz_to_mel(f: Tensor) -> Tensor:
    return 2595.0 * torch.log10(1.0 + f / 700.0)


def mel_to_hz(m: Tensor) -> Tensor:
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def mel_filterbank(n_freqs: int, n_mels: int, sample_rate: int) -> Tensor:
    """(n_mels, n_freqs) triangular filters on the HTK mel scale, 0 Hz to Nyquist."""
    freqs = torch.linspace(0, sample_rate / 2, n_freqs, dtype=torch.float64)
    top = hz_to_mel(torch.tensor(sample_rate / 2, dtype=torch.float64))
    f_pts = mel_to_hz(torch.linspace(0, float(top), n_mels + 2, dtype=torch.float64))
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - freqs[:, None]  # (n_freqs, n_mels + 2)
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.clamp(torch.minimum(down, up), min=0).t().float()


def build(device: torch.device, smoke: bool) -> Built:
    batch, seconds = (2, 0.1) if smoke else (8, 1.0)
    samples = int(SAMPLE_RATE * seconds)
    window = torch.hann_window(N_FFT, device=device)
    fbank = mel_filterbank(N_FFT // 2 + 1, N_MELS, SAMPLE_RATE).to(device)

    @torch.no_grad()
    def step(wave: Tensor) -> Tensor:
        spec = torch.stft(
            wave, N_FFT, hop_length=HOP, window=window, center=True, pad_mode="reflect",
            return_complex=True,
        )  # fmt: skip
        power = spec.abs().pow(2)  # (B, 257, frames)
        logmel = torch.log(torch.matmul(fbank, power) + 1e-6)  # (B, 80, frames)
        mean = logmel.mean(dim=-1, keepdim=True)
        var = logmel.var(dim=-1, keepdim=True)
        return (logmel - mean) * torch.rsqrt(var + 1e-5)

    # speech-like test signals: a few harmonics with a random pitch, plus noise
    t = torch.arange(samples, device=device) / SAMPLE_RATE

    def make() -> tuple[Tensor]:
        f0 = 100 + 150 * torch.rand(batch, 1, device=device)
        wave = sum(torch.sin(2 * math.pi * h * f0 * t) / h for h in range(1, 6))
        return (0.1 * wave + 0.01 * torch.randn(batch, samples, device=device),)

    inputs = [make() for _ in range(2)]
    frames = samples // HOP + 1
    description = (
        f"log-mel front end, stft n_fft {N_FFT} hop {HOP} + {N_MELS}-band mel matmul + log + "
        f"per-utterance CMVN, batch {batch} x {samples} samples ({frames} frames)"
    )
    return Built(step, inputs, description, [window, fbank])


if __name__ == "__main__":
    main(build, __doc__)
