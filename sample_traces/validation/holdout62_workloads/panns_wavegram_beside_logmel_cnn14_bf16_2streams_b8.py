"""PANNs' Wavegram-Logmel-CNN14 (Kong et al., 2020: large-scale pretrained audio neural networks;
a learned 1-D convolutional "Wavegram" of the waveform and the log-mel spectrogram, concatenated
along the channels and fed to the CNN14 trunk) tagging 8 clips of 5 s at 32 kHz with the 527
AudioSet classes, the Wavegram branch on one side stream beside the log-mel branch on the other
(sixty-second hold-out: bf16 autocast over fp32 weights, the log-mel front end in fp32: on side
stream 1 the strided ``Conv1d(1, 64, 11, stride 5)``, BatchNorm and ReLU, three 1-D blocks (two
convolutions of kernel 3, the second dilated by 2, with BatchNorm and ReLU, and a max pool of 4)
down to 128 channels at 100 frames a second, the reshape to 4 channels x 32 bins and a 2-D
convolutional block with a pool of 2 x 1, some 30 kernels; on side stream 2 torchlibrosa's STFT
as two ``Conv1d(1, 513, 1024, stride 320)`` of the Hann-windowed DFT's real and imaginary parts
after a reflect pad, the power, the 64-band mel projection and the log in fp32, the mel-wise
BatchNorm and the first 2-D convolutional block, some 20 kernels; after the join the concatenation
and CNN14's five further blocks (two 3 x 3 convolutions with BatchNorm and ReLU, then a 2 x 2
average pool) from 128 to 2048 channels, the mean over frequency, the max plus the mean over time,
``fc1`` with ReLU and ``fc_audioset`` with a sigmoid, some 50 kernels; some 1 to 3 ms of GPU time
in all). Laid out as qiuqiangkong/audioset_tagging_cnn's ``Wavegram_Logmel_Cnn14`` (``sample_rate
32000, window_size 1024, hop_size 320, mel_bins 64, fmin 50, fmax 14000, classes_num 527``:
``pre_conv0``, ``pre_bn0``, ``ConvPreWavBlock`` x 3 (64, 128, 128 channels), ``pre_block4 =
ConvBlock(4, 64)``; ``Spectrogram`` and ``LogmelFilterBank`` (``ref 1.0, amin 1e-10, top_db
None``), ``bn0`` over the mel bins, ``conv_block1 = ConvBlock(1, 64)``; then ``ConvBlock(128,
128)`` to ``ConvBlock(1024, 2048)``; dropout off in eval; the SpecAugmentation only in training),
its 10 s clips shortened to 5 s, the mel filterbank a triangular one on the HTK mel scale.
``torch.autocast(dtype=torch.bfloat16)`` on a GPU (the convolutions and linears in bf16; fp32 on
a CPU); the STFT, mel and log with autocast off in fp32 (TF32 as torch sets it: on for cuDNN, off
for cuBLAS); eval (BatchNorm on random running statistics), no gradients, random weights (torch's
defaults). Fork and join are the project's ``fork_join`` (``wait_stream``, and ``record_stream``
on the branch outputs outside capture). Input (two input sets): the waveforms (8, 160000),
Gaussian x 0.1, fp32. Returns the clip-wise probabilities (8, 527), fp32.

    traceinspect profile panns_wavegram_beside_logmel_cnn14_bf16_2streams_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

SAMPLE_RATE, CLIP_S, N_FFT, HOP, MEL_BINS, FMIN, FMAX, CLASSES = (
    32000,
    5,
    1024,
    320,
    64,
    50,
    14000,
    527,
)
WIDTHS = (64, 128, 256, 512, 1024, 2048)


def mel_filterbank(n_fft: int, sr: int, bins: int, fmin: float, fmax: float) -> Tensor:
    def mel(f: float) -> float:
        return 2595.0 * math.log10(1.0 + f / 700.0)

    freqs = torch.linspace(0, sr / 2, n_fft // 2 + 1, dtype=torch.float64)
    mels = 2595.0 * torch.log10(1.0 + freqs / 700.0)
    edges = torch.linspace(mel(fmin), mel(fmax), bins + 2, dtype=torch.float64)
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    up = (mels[:, None] - lower) / (centre - lower)
    down = (upper - mels[:, None]) / (upper - centre)
    return torch.clamp(torch.minimum(up, down), min=0).float()  # (n_fft / 2 + 1, bins)


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(cout), nn.BatchNorm2d(cout)

    def forward(self, x: Tensor, pool: tuple[int, int]) -> Tensor:
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        return F.avg_pool2d(x, pool) if pool != (1, 1) else x


class ConvPreWavBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(cin, cout, 3, padding=1, bias=False)
        self.conv2 = nn.Conv1d(cout, cout, 3, padding=2, dilation=2, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm1d(cout), nn.BatchNorm1d(cout)

    def forward(self, x: Tensor, pool: int) -> Tensor:
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        return F.max_pool1d(x, pool)


class WavegramLogmelCnn14(nn.Module):
    def __init__(self, widths: tuple[int, ...], classes: int) -> None:
        super().__init__()
        self.pre_conv0 = nn.Conv1d(1, 64, 11, stride=5, padding=5, bias=False)
        self.pre_bn0 = nn.BatchNorm1d(64)
        self.pre_blocks = nn.ModuleList(
            [ConvPreWavBlock(64, 64), ConvPreWavBlock(64, 128), ConvPreWavBlock(128, 128)]
        )
        self.pre_block4 = ConvBlock(4, widths[0])
        window = torch.hann_window(N_FFT, periodic=True, dtype=torch.float64)
        n = torch.arange(N_FFT, dtype=torch.float64)
        k = torch.arange(N_FFT // 2 + 1, dtype=torch.float64)[:, None]
        angle = 2 * math.pi * k * n / N_FFT
        self.register_buffer("dft_real", (torch.cos(angle) * window)[:, None].float())
        self.register_buffer("dft_imag", (-torch.sin(angle) * window)[:, None].float())
        self.register_buffer("melW", mel_filterbank(N_FFT, SAMPLE_RATE, MEL_BINS, FMIN, FMAX))
        self.bn0 = nn.BatchNorm2d(MEL_BINS)
        self.conv_block1 = ConvBlock(1, widths[0])
        cins = (2 * widths[0], *widths[1:-1])
        self.conv_blocks = nn.ModuleList(
            ConvBlock(i, o) for i, o in zip(cins, widths[1:], strict=True)
        )
        self.fc1 = nn.Linear(widths[-1], widths[-1])
        self.fc_audioset = nn.Linear(widths[-1], classes)

    def wavegram(self, wave: Tensor) -> Tensor:
        a1 = F.relu_(self.pre_bn0(self.pre_conv0(wave[:, None, :])))
        for block in self.pre_blocks:
            a1 = block(a1, 4)
        a1 = a1.reshape(a1.shape[0], -1, 32, a1.shape[-1]).transpose(2, 3)  # (b, 4, t, 32)
        return self.pre_block4(a1, (2, 1))

    def logmel(self, wave: Tensor) -> Tensor:  # fp32: torchlibrosa's conv STFT, mel, log
        x = F.pad(wave[:, None, :], (N_FFT // 2, N_FFT // 2), mode="reflect")
        real = F.conv1d(x, self.dft_real, stride=HOP)
        imag = F.conv1d(x, self.dft_imag, stride=HOP)
        power = (real**2 + imag**2).transpose(1, 2)  # (b, frames, n_fft / 2 + 1)
        mel = torch.matmul(power, self.melW)
        return 10.0 * torch.log10(torch.clamp(mel, min=1e-10))  # ref 1.0, top_db None

    def mel_branch(self, logmel: Tensor) -> Tensor:
        x = self.bn0(logmel[:, None].transpose(1, 3)).transpose(1, 3)  # bn0 over the mel bins
        return self.conv_block1(x, (2, 2))

    def trunk(self, x: Tensor) -> Tensor:
        for i, block in enumerate(self.conv_blocks):
            x = block(x, (2, 2) if i < len(self.conv_blocks) - 1 else (1, 1))
        x = torch.mean(x, dim=3)
        x = torch.amax(x, dim=2) + torch.mean(x, dim=2)
        x = F.relu_(self.fc1(x))
        return torch.sigmoid(self.fc_audioset(x).float())


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, samples, widths = 2, 64 * HOP, (8, 8, 8, 8, 8, 16)
    else:
        batch, samples, widths = 8, CLIP_S * SAMPLE_RATE, WIDTHS
    model = WavegramLogmelCnn14(widths, CLASSES)
    random_batch_norm_stats(model)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    model = model.to(device).eval()
    on_gpu = device.type == "cuda"
    streams = side_streams(device, 2)

    def logmel_branch(wave: Tensor) -> Tensor:
        with torch.autocast(device.type, enabled=False):
            logmel = model.logmel(wave)
        return model.mel_branch(logmel)

    @torch.no_grad()
    def step(wave: Tensor) -> Tensor:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=on_gpu):
            a1, x = fork_join(
                device, streams, [lambda: model.wavegram(wave), lambda: logmel_branch(wave)]
            )
            return model.trunk(torch.cat((x, a1), dim=1))

    inputs = [(0.1 * torch.randn(batch, samples, device=device),) for _ in range(2)]
    precision = "bf16 autocast (log-mel fp32)" if on_gpu else "fp32"
    description = (
        f"PANNs Wavegram-Logmel-CNN14: wavegram beside STFT + log-mel on 2 side streams, CNN14 "
        f"to {widths[-1]} ch, {samples / SAMPLE_RATE:g} s at {SAMPLE_RATE} Hz, {precision}, "
        f"b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
