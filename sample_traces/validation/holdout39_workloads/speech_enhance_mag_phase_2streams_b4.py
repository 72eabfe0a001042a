"""A single-channel speech enhancement step in the decoupled magnitude / phase style (a
convolutional magnitude-mask branch and a recurrence-free phase-refinement branch, as in the
MP-SENet / PHASEN family, cut down) with the two branches on two side streams and the
resynthesis after the join (thirty-ninth hold-out): 4 noisy utterances of 2 s at 16 kHz,
bf16 on a GPU for the branches' layers (the STFT, the phase arithmetic and the resynthesis in
fp32), eval mode, no gradients. On the current stream: ``torch.stft`` (n_fft 512, hop 128, a
periodic Hann window of 512 made at build, ``center=True`` with reflect padding, complex
output) to (4, 257, 251) and its magnitude. Magnitude branch, on one side stream: the
``log1p`` of the magnitude as a (4, 1, 257, 251) image, ``Conv2d(1, 64, 5, padding 2,
bias=False)`` + BatchNorm + ReLU, four ``Conv2d(64, 64, 3, bias=False)`` dilated along time
by 1, 2, 4 and 8 (padding (1, d)) each + BatchNorm + ReLU (BatchNorms in eval mode, running
statistics set at build), ``Conv2d(64, 1, 1)`` and a sigmoid: the (4, 257, 251) mask;
convolutions over 64,507 time-frequency bins, compute-bound. Phase branch, on the other: the
unit phasors (real and imaginary parts divided by the magnitude + 1e-8), laid out per frame
as (4, 251, 514), a LayerNorm(514), ``Linear(514, 512)`` + GELU and ``Linear(512, 514)``, the
result added back onto the phasors and renormalized to unit modulus (divided by sqrt(re^2 +
im^2) + 1e-8): elementwise chains around two small GEMMs, memory-bound. Fork and join are the
project's ``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream, in fp32: the enhanced spectrum, mask x
magnitude x refined phasor as ``torch.complex``, per frame ``torch.fft.irfft`` (n 512), times
the Hann window, overlap-added with ``F.fold`` (kernel 512, stride 128) to 32,512 samples,
divided by the folded squared window (made at build), and trimmed by 256 at each end. On a
CPU the branches run in order. Input: the noisy waveforms (4, 32000) fp32. Returns the
enhanced waveforms (4, 32000) and the magnitude masks (4, 257, 251), fp32.

    traceinspect profile speech_enhance_mag_phase_2streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import random_batch_norm_stats
from _streams import fork_join, side_streams
from torch import Tensor, nn

DILATIONS, EPS = (1, 2, 4, 8), 1e-8


class MagnitudeMask(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(1, c, 5, padding=2, bias=False), nn.BatchNorm2d(c)]
        layers.append(nn.ReLU())
        for d in DILATIONS:
            layers += [
                nn.Conv2d(c, c, 3, padding=(1, d), dilation=(1, d), bias=False),
                nn.BatchNorm2d(c),
                nn.ReLU(),
            ]
        layers.append(nn.Conv2d(c, 1, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, log_mag: Tensor) -> Tensor:
        return self.net(log_mag[:, None]).sigmoid()[:, 0]


class PhaseRefine(nn.Module):
    def __init__(self, bins: int, hidden: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(2 * bins)
        self.up = nn.Linear(2 * bins, hidden)
        self.down = nn.Linear(hidden, 2 * bins)

    def forward(self, spec: Tensor, mag: Tensor) -> Tensor:
        """(b, f, t) complex and magnitude -> (b, t, f, 2) unit phasors, fp32."""
        b, f, t = mag.shape
        unit = torch.view_as_real(spec) / (mag[..., None] + EPS)  # (b, f, t, 2)
        x = unit.transpose(1, 2).reshape(b, t, 2 * f)
        dtype = self.up.weight.dtype
        x = x + self.down(F.gelu(self.up(self.norm(x.to(dtype))))).float()
        x = x.view(b, t, f, 2)
        return x / (x.square().sum(dim=-1, keepdim=True).sqrt() + EPS)


def build(device: torch.device, smoke: bool) -> Built:
    batch, samples, n_fft, hop, c, hidden = (
        (2, 4000, 128, 32, 8, 32) if smoke else (4, 32000, 512, 128, 64, 512)
    )
    bins = n_fft // 2 + 1
    dtype = low_precision(device)
    mag_net, phase_net = MagnitudeMask(c), PhaseRefine(bins, hidden)
    model = nn.ModuleList([mag_net, phase_net])
    random_batch_norm_stats(model)
    model.to(device, dtype).eval()
    window = torch.hann_window(n_fft, device=device)
    padded = samples + n_fft  # center=True pads n_fft / 2 at each end
    frames = 1 + samples // hop
    envelope = F.fold(
        window.square()[None, :, None].expand(1, n_fft, frames),
        (1, padded),
        (1, n_fft),
        stride=(1, hop),
    ).view(padded)
    envelope = envelope.clamp(min=1e-8)
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(wave: Tensor) -> tuple[Tensor, Tensor]:
        spec = torch.stft(
            wave, n_fft, hop, window=window, center=True, pad_mode="reflect", return_complex=True
        )  # (b, f, t)
        mag = spec.abs()
        mask, phase = fork_join(
            device,
            streams,
            [lambda: mag_net(mag.log1p().to(dtype)).float(), lambda: phase_net(spec, mag)],
        )
        b = wave.shape[0]
        em = (mask * mag).transpose(1, 2)  # (b, t, f)
        enhanced = torch.complex(em * phase[..., 0], em * phase[..., 1])
        frames_t = torch.fft.irfft(enhanced, n=n_fft, dim=-1) * window  # (b, t, n_fft)
        out = F.fold(frames_t.transpose(1, 2), (1, padded), (1, n_fft), stride=(1, hop))
        out = out.view(b, padded) / envelope
        return out[:, n_fft // 2 : n_fft // 2 + samples], mask

    inputs = [(torch.randn(batch, samples, device=device) * 0.1,) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"speech enhancement: STFT {n_fft}/{hop}, dilated-conv magnitude mask and MLP phase "
        f"refinement on 2 side streams + iSTFT overlap-add, b{batch} x {samples} samples",
        [model, window, envelope],
    )


if __name__ == "__main__":
    main(build, __doc__)
