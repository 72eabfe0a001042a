"""Two Hyena long-convolution branches (Poli et al., 2023) over 4 sequences of 8,192 tokens of d
256, one on each of two side streams (fifty-first hold-out: implicit long filters applied as FFT
convolutions in fp32, the two branches of unequal length, one at full and one at half
resolution, joined on the current stream), after safari's ``HyenaOperator`` and ``HyenaFilter``.
Each branch: an input projection ``Linear(256, 768)``, transposed to channels first; a short
depthwise causal ``Conv1d(768, 768, 3, groups 768)`` (padding 2, the tail cropped to the
length); split into x0, x1 and v (256 channels each). The implicit long filters, recomputed
every step: the positional features of the branch's positions (t and 16 sin/cos bands, 33
values, made at build) through ``Linear(33, 64)``, sin(w x), ``Linear(64, 64)``, sin(w x),
``Linear(64, 256 N, bias=False)`` (the ``Sin`` activation with learned frequencies w; N the
branch's number of long filters), times an exponential decay exp(-t |delta_c|) per channel. The
long convolution ``fftconv``: the filter and the signal cast to fp32, ``torch.fft.rfft`` of both
zero-padded to twice the length (the filter's spectrum divided by that length), their product,
``torch.fft.irfft`` (``norm="forward"``), cropped to the length, plus the signal times a learned
per-channel bias D, cast back. Side stream 1, order 2 over the 8,192 positions (two long
filters, the paper's recurrence): z = x1 * fftconv(v, h1), y1 = x0 * fftconv(z, h2). Side stream
2, order 1 on the input down-sampled by 2 (``u[:, ::2]``, 4,096 positions; one long filter,
gated before and after as in safari's operator): y2 = x0 * fftconv(x1 * v, h). After the join,
on the current stream: y1 + y2 up-sampled back to 8,192 positions (``repeat_interleave(2)``),
transposed to tokens first, and an output projection ``Linear(256, 256)``. The FFTs in fp32
(over 4 x 256 x 16,384 values in branch 1, half that in branch 2), the rest bf16 on a GPU; no
gradients. Fork and join are the project's ``fork_join`` (``wait_stream``, and
``record_stream`` on the branch outputs outside capture). Input: u (4, 8192, 256). Returns
(4, 8192, 256).

    traceinspect profile hyena_fft_longconv_2streams_b4.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

BANDS, FILTER_WIDTH = 16, 64


def positional_features(seq: int) -> Tensor:
    """safari's PositionalEmbedding: t in [0, 1] and the cos/sin of 16 frequency bands."""
    t = torch.linspace(0, 1, seq)[:, None]
    t_rescaled = torch.linspace(0, seq - 1, seq)[:, None]
    f = torch.linspace(1e-4, BANDS - 1, BANDS)[None]
    w = 2 * math.pi * t_rescaled / seq
    return torch.cat((t, torch.cos(f * w), torch.sin(f * w)), dim=-1)  # (L, 33)


class Sin(nn.Module):
    def __init__(self, dim: int, w: float = 1.0) -> None:
        super().__init__()
        self.freq = nn.Parameter(w * torch.ones(1, dim))

    def forward(self, x: Tensor) -> Tensor:
        return torch.sin(self.freq * x)


class ImplicitFilter(nn.Module):
    """``filters`` long filters of ``seq`` taps for ``d`` channels, from an MLP over positions."""

    def __init__(self, d: int, seq: int, filters: int) -> None:
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(1 + 2 * BANDS, FILTER_WIDTH), Sin(FILTER_WIDTH),
            nn.Linear(FILTER_WIDTH, FILTER_WIDTH), Sin(FILTER_WIDTH),
            nn.Linear(FILTER_WIDTH, filters * d, bias=False),
        )  # fmt: skip
        self.deltas = nn.Parameter(torch.linspace(0.3, 1.5, filters * d)[None] * 10)
        self.register_buffer("z", positional_features(seq))
        self.register_buffer("t", torch.linspace(0, 1, seq)[:, None])

    def forward(self) -> Tensor:
        return self.mlp(self.z) * torch.exp(-self.t * self.deltas.abs())  # (L, filters d)


class HyenaBranch(nn.Module):
    def __init__(self, d: int, seq: int, order: int) -> None:
        super().__init__()
        self.d, self.order = d, order
        self.in_proj = nn.Linear(d, 3 * d)
        self.short = nn.Conv1d(3 * d, 3 * d, 3, padding=2, groups=3 * d)
        self.filter = ImplicitFilter(d, seq, order)
        self.bias = nn.Parameter(torch.randn(order, d))  # D, per long filter and channel

    def fftconv(self, v: Tensor, k_f: Tensor, bias: Tensor) -> Tensor:
        seq = v.shape[-1]
        vf = v.float()
        y = torch.fft.irfft(torch.fft.rfft(vf, n=2 * seq) * k_f, n=2 * seq, norm="forward")
        return (y[..., :seq] + vf * bias[:, None]).to(v.dtype)

    def forward(self, u: Tensor) -> Tensor:
        """u (b, L, d) -> y (b, d, L), channels first."""
        seq = u.shape[1]
        z = self.short(self.in_proj(u).transpose(1, 2))[..., :seq]
        x0, x1, v = z.split(self.d, dim=1)
        h = self.filter().float().transpose(0, 1)  # (order d, L)
        k_f = (torch.fft.rfft(h, n=2 * seq) / (2 * seq)).view(self.order, self.d, seq + 1)
        if self.order == 2:
            z = x1 * self.fftconv(v, k_f[0], self.bias[0])
            return x0 * self.fftconv(z, k_f[1], self.bias[1])
        return x0 * self.fftconv(x1 * v, k_f[0], self.bias[0])


class TwoBranchHyena(nn.Module):
    def __init__(self, d: int, seq: int) -> None:
        super().__init__()
        self.fine = HyenaBranch(d, seq, order=2)
        self.coarse = HyenaBranch(d, seq // 2, order=1)
        self.out_proj = nn.Linear(d, d)


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d = (2, 64, 16) if smoke else (4, 8192, 256)
    dtype = low_precision(device)
    model = TwoBranchHyena(d, seq).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(u: Tensor) -> Tensor:
        y1, y2 = fork_join(
            device,
            streams,
            [lambda: model.fine(u), lambda: model.coarse(u[:, ::2].contiguous())],
        )
        y = y1 + y2.repeat_interleave(2, dim=-1)  # (b, d, L)
        return model.out_proj(y.transpose(1, 2))

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"Hyena long conv: order-2 branch x {seq} and order-1 branch x {seq // 2} (FFT, fp32), "
        f"d{d}, b{batch}, 2 side streams"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
