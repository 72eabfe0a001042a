"""One reverse-diffusion step of DiffWave (Kong, Ping, Huang, Zhao and Catanzaro, ICLR 2021,
"DiffWave: A Versatile Diffusion Model for Audio Synthesis": a non-autoregressive WaveNet-like
network of dilated residual layers predicting the noise in a noisy waveform, conditioned on the
diffusion step and on a mel spectrogram) as the LJSpeech vocoder, on 4 clips of 62 mel frames
(15,872 samples, the training crop; about 16,000) (sixty-sixth hold-out: one stream, fp16: the
diffusion-step embedding (the 128-wide sinusoidal table's two rows around the (float) step, their
linear interpolation, ``Linear(128, 512)``, SiLU as ``x sigmoid(x)``, ``Linear(512, 512)``, SiLU);
the mel conditioner (80 bins x 62 frames upsampled 256 x along time by two ``ConvTranspose2d(1, 1,
[3, 32], stride [1, 16], padding [1, 8])`` each with a leaky ReLU of slope 0.4, to (4, 80, 15872));
the waveform's ``Conv1d(1, 64, 1)`` and ReLU; then 30 residual layers of 64 channels with dilations
1 to 512 cycling every 10 layers, each the step embedding's ``Linear(512, 64)`` added to the input,
the dilated ``Conv1d(64, 128, 3)``, the conditioner's ``Conv1d(80, 128, 1)`` added, the gate
sigmoid(a) tanh(b) of the two halves, ``Conv1d(64, 128, 1)``, the residual half added to the input
and scaled by 1 / sqrt(2), the skip half summed over the layers; the skip sum scaled by 1 /
sqrt(30), ``Conv1d(64, 64, 1)``, ReLU and ``Conv1d(64, 1, 1)``, the predicted noise; then the DDPM
update x_{t-1} = (x_t - beta_t / sqrt(1 - alpha-bar_t) eps) / sqrt(alpha_t) + sigma_t z and the
clamp to [-1, 1]; some 400 to 500 kernels: 93 1-D convolutions over 63,488 time steps (0.16 TFLOP in
all, each dilated one 3 GFLOP) beside elementwise passes over (4, 64..128, 15872) maps of 8 to 16
MB, some 2 to 5 ms of GPU time). Laid out as lmnt-com/diffwave's ``model.py`` (``DiffWave``,
``DiffusionEmbedding`` with its ``_build_embedding`` table ``steps x 10^(dims 4 / 63)``, sin and
cos, and ``_lerp_embedding`` for a fractional step, ``SpectrogramUpsampler``, ``ResidualBlock`` with
``dilated_conv``, ``diffusion_projection``, ``conditioner_projection``, ``output_projection`` and
``(x + residual) / sqrt(2.0), skip``; the ``Conv1d`` weights Kaiming-normal) with ``params.py``'s
LJSpeech ``AttrDict`` (``residual_layers 30, residual_channels 64, dilation_cycle_length 10, n_mels
80, hop_samples 256, crop_mel_frames 62, noise_schedule linspace(1e-4, 0.05, 50)``) and
``inference.py``'s ``predict`` loop body at step n = 25 of the 50-step schedule (fast sampling off:
the step handed to the model is ``T[n]``, from its ``talpha_cum`` / ``alpha_cum`` matching, 25.0 as
a float, so the embedding takes ``_lerp_embedding``'s path (floor, ceil, two row lookups, the lerp)
with equal rows; ``c1 = 1 / alpha[n]^0.5``, ``c2 = beta[n] / (1 - alpha_cum[n])^0.5``, ``sigma =
(beta[n] (1 - alpha_cum[n - 1]) / (1 - alpha_cum[n]))^0.5`` fixed at build), with the changes a
replayable step needs: the step tensor and the noise z (``torch.randn_like`` in ``predict``) are
inputs rather than made in the loop, the interpolated embedding (fp32 by type promotion against the
step) is cast to the model dtype before ``projection1``, and ``output_projection``'s weight,
zero-initialised in the reference, keeps torch's default so the predicted noise is not zero. The
network in fp16 on a GPU (fp32 on a CPU), the sampler's waveform and update in fp32, eval, no
gradients, random weights. Inputs (two input sets): the noisy waveform x_t (4, 15872) fp32,
Gaussian; the diffusion step (1,) fp32, T[25]; the log-mel spectrogram (4, 80, 62) in the model
dtype, uniform in [0, 1] as DiffWave's preprocessing normalises it; the noise z (4, 15872) fp32,
Gaussian. Returns x_{t-1} (4, 15872) fp32.

    traceinspect profile diffwave_ljspeech_30_residual_layers_denoise_step_fp16_one_stream_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

LAYERS, CHANNELS, CYCLE, MELS, HOP, FRAMES = 30, 64, 10, 80, 256, 62
SCHEDULE = [1e-4 + i * (0.05 - 1e-4) / 49 for i in range(50)]  # np.linspace(1e-4, 0.05, 50)
STEP_N = 25


def conv1d(*args: int, **kwargs: int) -> nn.Conv1d:
    layer = nn.Conv1d(*args, **kwargs)
    nn.init.kaiming_normal_(layer.weight)
    return layer


def silu(x: Tensor) -> Tensor:
    return x * torch.sigmoid(x)


class DiffusionEmbedding(nn.Module):
    def __init__(self, max_steps: int) -> None:
        super().__init__()
        self.register_buffer("embedding", self._build_embedding(max_steps), persistent=False)
        self.projection1 = nn.Linear(128, 512)
        self.projection2 = nn.Linear(512, 512)

    def forward(self, diffusion_step: Tensor) -> Tensor:
        x = self._lerp_embedding(diffusion_step).to(self.projection1.weight.dtype)
        x = silu(self.projection1(x))
        return silu(self.projection2(x))

    def _lerp_embedding(self, t: Tensor) -> Tensor:
        low_idx = torch.floor(t).long()
        high_idx = torch.ceil(t).long()
        low = self.embedding[low_idx]
        high = self.embedding[high_idx]
        return low + (high - low) * (t - low_idx)

    @staticmethod
    def _build_embedding(max_steps: int) -> Tensor:
        steps = torch.arange(max_steps).unsqueeze(1)  # (T, 1)
        dims = torch.arange(64).unsqueeze(0)  # (1, 64)
        table = steps * 10.0 ** (dims * 4.0 / 63.0)  # (T, 64)
        return torch.cat([torch.sin(table), torch.cos(table)], dim=1)


class SpectrogramUpsampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.ConvTranspose2d(1, 1, [3, 32], stride=[1, 16], padding=[1, 8])
        self.conv2 = nn.ConvTranspose2d(1, 1, [3, 32], stride=[1, 16], padding=[1, 8])

    def forward(self, x: Tensor) -> Tensor:
        x = torch.unsqueeze(x, 1)
        x = F.leaky_relu(self.conv1(x), 0.4)
        x = F.leaky_relu(self.conv2(x), 0.4)
        return torch.squeeze(x, 1)


class ResidualBlock(nn.Module):
    def __init__(self, n_mels: int, residual_channels: int, dilation: int) -> None:
        super().__init__()
        self.dilated_conv = conv1d(
            residual_channels, 2 * residual_channels, 3, padding=dilation, dilation=dilation
        )
        self.diffusion_projection = nn.Linear(512, residual_channels)
        self.conditioner_projection = conv1d(n_mels, 2 * residual_channels, 1)
        self.output_projection = conv1d(residual_channels, 2 * residual_channels, 1)

    def forward(self, x: Tensor, diffusion_step: Tensor, conditioner: Tensor) -> tuple[Tensor, ...]:
        diffusion_step = self.diffusion_projection(diffusion_step).unsqueeze(-1)
        y = x + diffusion_step
        conditioner = self.conditioner_projection(conditioner)
        y = self.dilated_conv(y) + conditioner
        gate, filter_ = torch.chunk(y, 2, dim=1)
        y = torch.sigmoid(gate) * torch.tanh(filter_)
        y = self.output_projection(y)
        residual, skip = torch.chunk(y, 2, dim=1)
        return (x + residual) / math.sqrt(2.0), skip


class DiffWave(nn.Module):
    def __init__(self, layers: int, channels: int, cycle: int, n_mels: int, steps: int) -> None:
        super().__init__()
        self.input_projection = conv1d(1, channels, 1)
        self.diffusion_embedding = DiffusionEmbedding(steps)
        self.spectrogram_upsampler = SpectrogramUpsampler()
        self.residual_layers = nn.ModuleList(
            ResidualBlock(n_mels, channels, 2 ** (i % cycle)) for i in range(layers)
        )
        self.skip_projection = conv1d(channels, channels, 1)
        self.output_projection = conv1d(channels, 1, 1)  # zero-initialised in the reference

    def forward(self, audio: Tensor, diffusion_step: Tensor, spectrogram: Tensor) -> Tensor:
        x = F.relu(self.input_projection(audio.unsqueeze(1)))
        diffusion_step = self.diffusion_embedding(diffusion_step)
        spectrogram = self.spectrogram_upsampler(spectrogram)
        skip = None
        for layer in self.residual_layers:
            x, skip_connection = layer(x, diffusion_step, spectrogram)
            skip = skip_connection if skip is None else skip_connection + skip
        assert skip is not None
        x = skip / math.sqrt(len(self.residual_layers))
        x = F.relu(self.skip_projection(x))
        return self.output_projection(x)


def schedule_constants(n: int) -> tuple[float, float, float, float]:
    """``predict``'s T[n], c1, c2 and sigma with fast sampling off (the training schedule)."""
    beta = SCHEDULE
    alpha = [1 - b for b in beta]
    alpha_cum = list(alpha)
    for i in range(1, len(alpha_cum)):
        alpha_cum[i] *= alpha_cum[i - 1]
    talpha_cum = alpha_cum  # the same schedule for training and inference
    t_n = float(n)
    for t in range(len(beta) - 1):
        if talpha_cum[t + 1] <= alpha_cum[n] <= talpha_cum[t]:
            twiddle = (talpha_cum[t] ** 0.5 - alpha_cum[n] ** 0.5) / (
                talpha_cum[t] ** 0.5 - talpha_cum[t + 1] ** 0.5
            )
            t_n = t + twiddle
            break
    c1 = 1 / alpha[n] ** 0.5
    c2 = beta[n] / (1 - alpha_cum[n]) ** 0.5
    sigma = ((1.0 - alpha_cum[n - 1]) / (1.0 - alpha_cum[n]) * beta[n]) ** 0.5
    return t_n, c1, c2, sigma


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, layers, channels, cycle, n_mels, frames = 2, 4, 8, 2, 8, 4
    else:
        batch, layers, channels, cycle, n_mels, frames = 4, LAYERS, CHANNELS, CYCLE, MELS, FRAMES
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    model = DiffWave(layers, channels, cycle, n_mels, len(SCHEDULE)).to(device, dtype).eval()
    t_n, c1, c2, sigma = schedule_constants(STEP_N)
    samples = HOP * frames

    @torch.no_grad()
    def step(audio: Tensor, diffusion_step: Tensor, spectrogram: Tensor, noise: Tensor) -> Tensor:
        eps = model(audio.to(dtype), diffusion_step, spectrogram).squeeze(1).float()
        audio = c1 * (audio - c2 * eps)
        audio += sigma * noise
        return torch.clamp(audio, -1.0, 1.0)

    def input_set() -> tuple[Tensor, ...]:
        return (
            torch.randn(batch, samples, device=device),
            torch.tensor([t_n], dtype=torch.float32, device=device),
            torch.rand(batch, n_mels, frames, device=device, dtype=dtype),
            torch.randn(batch, samples, device=device),
        )

    inputs = [input_set() for _ in range(2)]
    precision = str(dtype).removeprefix("torch.")
    description = (
        f"DiffWave LJSpeech reverse step n={STEP_N}: {layers} residual layers x {channels} ch, "
        f"dilation cycle {cycle}, {n_mels}-bin mel x {frames} frames -> {samples} samples, "
        f"{precision}, one stream, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
