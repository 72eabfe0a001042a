"""Vocos (Siuzdak, 2023) turning 16 mel spectrograms of 256 frames (some 2.7 s at 24 kHz) into
waveforms: a ConvNeXt backbone and an inverse-STFT head (fifty-seventh hold-out: one stream of some
120 kernels, the backbone under fp16 autocast, 8 ConvNeXt blocks over 4096 frame rows of d 512, each
a depthwise ``Conv1d`` of 7 taps, a LayerNorm and the 512 -> 1536 -> 512 GEMMs of 6.4 GFLOP each
with a GELU, a layer scale and a residual over 4 to 12 MB fp16 tensors; then the head in fp32: a
``Linear(512, 1026)``, exp, clip, cos and sin over (16, 513, 256), the complex spectrum built
elementwise, cuFFT's ``irfft`` of 1024 points, the window, ``F.fold`` overlap-add to (16, 66304)
and the window envelope's fold and division: GEMM-bound blocks then a memory-bound tail). Laid out
as gemelo-ai/vocos's ``Vocos`` with the ``charactr/vocos-mel-24khz`` configuration (the mel
spectrogram given, as ``Vocos.decode`` takes it): ``VocosBackbone`` (``Conv1d(100, 512, 7,
padding 3)``, LayerNorm eps 1e-6, 8 ``ConvNeXtBlock``s (``Conv1d(512, 512, 7, padding 3, groups
512)``, LayerNorm, ``Linear(512, 1536)``, GELU, ``Linear(1536, 512)``, ``gamma`` initialized to 1/8,
the residual), the final LayerNorm); ``ISTFTHead`` (``Linear(512, 1026)``, the magnitude
``exp(mag).clip(max=100)`` and the phase's cos and sin into ``mag * (cos + 1j sin)``) and its
``ISTFT`` with ``padding="same"`` (n_fft 1024, hop 256, Hann window: ``irfft`` over the
frequencies, ``norm="backward"``, times the window, ``F.fold`` to the overlap-added signal with 384
samples cropped at each end, the squared window folded the same way into the envelope, the signal
divided by it); the envelope check ``assert (window_envelope > 1e-11).all()`` is left out (a host
synchronization a graph cannot hold; it holds for the Hann window). The backbone's fp32 weights
under ``torch.autocast(dtype=torch.float16)`` on a GPU (fp32 on a CPU), the head in fp32 (its
input cast back; cuFFT), eval, no gradients, random weights (torch's defaults, the ConvNeXt linears
truncated-normal std 0.02 as Vocos initializes them). Inputs (two input sets): the log-mel
spectrograms (16, 100, 256), Gaussian minus 4. Returns the waveforms (16, 65536), fp32.

    traceinspect profile vocos_mel_istft_vocoder_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from torch import Tensor, nn

MELS, N_FFT, HOP = 100, 1024, 256


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim: int, intermediate: int, layer_scale: float) -> None:
        super().__init__()
        self.dwconv = nn.Conv1d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.pwconv2 = nn.Linear(dim, intermediate), nn.Linear(intermediate, dim)
        self.gamma = nn.Parameter(layer_scale * torch.ones(dim))
        for lin in (self.pwconv1, self.pwconv2):
            nn.init.trunc_normal_(lin.weight, std=0.02)
            nn.init.zeros_(lin.bias)

    def forward(self, x: Tensor) -> Tensor:
        residual = x
        x = self.norm(self.dwconv(x).transpose(1, 2))
        x = self.gamma * self.pwconv2(F.gelu(self.pwconv1(x)))
        return residual + x.transpose(1, 2)


class VocosBackbone(nn.Module):
    def __init__(self, channels: int, dim: int, intermediate: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Conv1d(channels, dim, 7, padding=3)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.convnext = nn.ModuleList(
            ConvNeXtBlock(dim, intermediate, 1 / layers) for _ in range(layers)
        )
        self.final_layer_norm = nn.LayerNorm(dim, eps=1e-6)

    def forward(self, x: Tensor) -> Tensor:
        x = self.norm(self.embed(x).transpose(1, 2)).transpose(1, 2)
        for block in self.convnext:
            x = block(x)
        return self.final_layer_norm(x.transpose(1, 2))


class ISTFTHead(nn.Module):
    def __init__(self, dim: int, n_fft: int, hop: int) -> None:
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.out = nn.Linear(dim, n_fft + 2)
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)

    def istft(self, spec: Tensor) -> Tensor:
        pad = (self.n_fft - self.hop) // 2
        frames = spec.shape[-1]
        ifft = torch.fft.irfft(spec, self.n_fft, dim=1, norm="backward")
        ifft = ifft * self.window[None, :, None]
        size = (frames - 1) * self.hop + self.n_fft
        fold = {"output_size": (1, size), "kernel_size": (1, self.n_fft), "stride": (1, self.hop)}
        y = F.fold(ifft, **fold)[:, 0, 0, pad:-pad]
        window_sq = self.window.square().expand(1, frames, -1).transpose(1, 2)
        window_envelope = F.fold(window_sq, **fold).squeeze()[pad:-pad]
        return y / window_envelope

    def forward(self, x: Tensor) -> Tensor:
        x = self.out(x).transpose(1, 2)
        mag, p = x.chunk(2, dim=1)
        mag = torch.clip(torch.exp(mag), max=1e2)
        spec = mag * (torch.cos(p) + 1j * torch.sin(p))
        return self.istft(spec)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, frames, dim, intermediate, layers, n_fft, hop = 2, 16, 32, 96, 2, 64, 16
    else:
        batch, frames, dim, intermediate, layers, n_fft, hop = 16, 256, 512, 1536, 8, N_FFT, HOP
    backbone = VocosBackbone(MELS, dim, intermediate, layers).to(device).eval()
    head = ISTFTHead(dim, n_fft, hop).to(device).eval()
    autocast = torch.autocast(device.type, dtype=torch.float16, enabled=device.type == "cuda")

    @torch.no_grad()
    def step(mel: Tensor) -> Tensor:
        with autocast:
            x = backbone(mel)
        return head(x.float())

    inputs = [(torch.randn(batch, MELS, frames, device=device) - 4.0,) for _ in range(2)]
    precision = "fp16 autocast backbone, fp32 head" if device.type == "cuda" else "fp32"
    description = (
        f"Vocos vocoder: ConvNeXt backbone ({layers} blocks d{dim}/{intermediate}) + ISTFT head "
        f"(n_fft {n_fft}, hop {hop}, irfft + fold), {batch} x {frames} mel frames, {precision}"
    )
    return Built(step, inputs, description, [backbone, head])


if __name__ == "__main__":
    main(build, __doc__)
