"""The encoder of a Hybrid-Demucs-style music source separator (Défossez, 2021) on 4 stereo
clips of 262,144 samples (5.9 s at 44.1 kHz), its waveform branch and its spectrogram branch on
two side streams (forty-ninth hold-out: music source separation, 1-D convolutions over long
signals beside an STFT and 2-D convolutions along frequency, joined at a shared bottleneck).
Every encoder layer is Demucs's: a strided convolution + GELU, then a 1 x 1 convolution to twice
the channels + GLU over the channels (no normalization, no residual DConv branch). Side stream
1, the waveform branch: the clip normalized by its own mean and standard deviation (over
channels and time, + 1e-5), then 5 layers of ``Conv1d(cin, cout, 8, stride 4, padding 2)``,
channels 2 -> 48 -> 96 -> 192 -> 384 -> 768, lengths 262,144 -> 65,536 -> 16,384 -> 4,096 ->
1,024 -> 256 (some 16 GMAC in all). Side stream 2, the spectrogram branch, as HDemucs computes
its spectrogram: the clip reflect-padded by 1,536 samples a side, ``torch.stft`` in fp32 (n_fft
4,096, hop 1,024, a Hann window, centred, normalized, complex output) over the 8 channel
signals, the last frequency bin dropped and the 256 frames 2..257 kept, (4, 2, 2,048, 256)
complex; the real and imaginary parts as channels (complex-as-channels, 4 channels), normalized
per clip like the waveform; then 4 layers of ``Conv2d(cin, cout, (8, 1), stride (4, 1), padding
(2, 0))`` along frequency, channels 4 -> 48 -> 96 -> 192 -> 384, frequencies 2,048 -> 512 -> 128
-> 32 -> 8, and a fifth, ``Conv2d(384, 768, (8, 1))`` without padding, to one frequency (some 28
GMAC in all). After the join, on the current stream: the two bottlenecks summed, (4, 768, 256),
and one shared layer, ``Conv1d(768, 1536, 3, padding 1)`` + GLU. bf16 on a GPU but the STFT and
the normalizations (fp32), eval mode, no gradients. Fork and join are the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside capture).
Input: the mixtures (4, 2, 262,144) fp32. Returns the bottleneck (4, 768, 256).

    traceinspect profile hybrid_demucs_time_spec_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

STRIDE, KERNEL, EPS = 4, 8, 1e-5


class EncLayer(nn.Module):
    """Demucs's encoder layer: strided conv + GELU, 1x1 conv to 2 cout + GLU."""

    def __init__(self, cin: int, cout: int, spectral: bool, last: bool = False) -> None:
        super().__init__()
        if spectral:
            stride, pad = ((1, 1), (0, 0)) if last else ((STRIDE, 1), (KERNEL // 2 - 2, 0))
            self.conv: nn.Module = nn.Conv2d(cin, cout, (KERNEL, 1), stride, pad)
            self.rewrite: nn.Module = nn.Conv2d(cout, 2 * cout, 1)
        else:
            self.conv = nn.Conv1d(cin, cout, KERNEL, STRIDE, KERNEL // 2 - 2)
            self.rewrite = nn.Conv1d(cout, 2 * cout, 1)

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(self.rewrite(F.gelu(self.conv(x))), dim=1)


def normalize(x: Tensor) -> Tensor:
    flat = x.flatten(1)
    mean = flat.mean(dim=1).view(-1, *[1] * (x.dim() - 1))
    std = flat.std(dim=1).view(-1, *[1] * (x.dim() - 1))
    return (x - mean) / (std + EPS)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, length, n_fft, chans = 1, 16_384, 4096, (2, 4, 8, 8, 8, 16)
    else:
        batch, length, n_fft, chans = 4, 262_144, 4096, (2, 48, 96, 192, 384, 768)
    hop, dtype = STRIDE ** (len(chans) - 1), low_precision(device)  # the waveform's total stride
    frames = length // hop
    depth = len(chans) - 1
    wave = nn.Sequential(*(EncLayer(chans[i], chans[i + 1], False) for i in range(depth)))
    spec_chans = (4, *chans[1:])
    spec = nn.Sequential(
        *(EncLayer(spec_chans[i], spec_chans[i + 1], True, i == depth - 1) for i in range(depth))
    )
    shared = nn.Conv1d(chans[-1], 2 * chans[-1], 3, padding=1)
    model = nn.ModuleList([wave, spec, shared]).to(device, dtype).eval()
    window = torch.hann_window(n_fft, device=device)
    streams = side_streams(device, 2)

    def waveform_branch(mix: Tensor) -> Tensor:
        return wave(normalize(mix).to(dtype))

    def spectrogram_branch(mix: Tensor) -> Tensor:
        padded = F.pad(mix, (3 * hop // 2, 3 * hop // 2), mode="reflect")
        z = torch.stft(
            padded.reshape(batch * 2, -1),
            n_fft,
            hop,
            window=window,
            normalized=True,
            return_complex=True,
        )
        z = z[:, :-1, 2 : 2 + frames]  # (b * 2, n_fft / 2, frames)
        cac = torch.view_as_real(z).view(batch, 2, n_fft // 2, frames, 2)
        cac = cac.permute(0, 1, 4, 2, 3).reshape(batch, 4, n_fft // 2, frames)
        return spec(normalize(cac).to(dtype)).squeeze(2)

    @torch.no_grad()
    def step(mix: Tensor) -> Tensor:
        t, s = fork_join(
            device, streams, [lambda: waveform_branch(mix), lambda: spectrogram_branch(mix)]
        )
        return F.glu(shared(t + s), dim=1)

    inputs = [(torch.randn(batch, 2, length, device=device) * 0.1,) for _ in range(2)]
    description = (
        f"Hybrid Demucs encoder, waveform {depth} x Conv1d + STFT n_fft {n_fft} {depth} x "
        f"Conv2d, channels {chans[1]}..{chans[-1]}, {length} samples, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model, window])


if __name__ == "__main__":
    main(build, __doc__)
