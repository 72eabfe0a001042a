"""Two Hyena blocks (Poli et al., 2023) on 8 sequences of 2048 tokens of d 768, bf16 with the
long convolutions as FFTs in fp32 (thirteenth hold-out), inference, after safari's
``HyenaOperator`` of order 2. Block: x + Hyena(LayerNorm(x)), then x + MLP(LayerNorm(x))
(Linear 768->3072, GELU, Linear 3072->768). Hyena: a Linear 768->2304 projection,
transposed to channels first; a short depthwise causal conv1d of width 3 over the 2304
channels (padding 2, the tail sliced off); split into x0, x1, v. The implicit long filter
(``HyenaFilter``), recomputed every step as in training: the positional features of the
2048 positions (t and 16 sin/cos bands, 33 values, made at build) through Linear 33->64,
sin(w x), Linear 64->64, sin(w x), Linear 64->768 (the ``Sin`` activation with its learned
frequencies), times an exponential decay exp(-t |delta_c|) per channel: a 768 x 2048 fp32
filter. Then v = v x x1 and ``fftconv``: ``torch.fft.rfft`` of the filter and of v, both
zero-padded to 4096, the product, ``torch.fft.irfft`` with ``norm="forward"``, the first 2048
outputs, plus v x D (a learned per-channel bias); then y x x0, transposed back, and a Linear
768->768 output projection. The projections and the MLP (16,384 token rows) and the FFTs
over 8 x 768 x 4096 values make the step mostly GPU-bound; about 35 kernels per block. Input:
8 x 2048 x 768. Returns 8 x 2048 x 768.

    traceinspect profile hyena_fftconv_b8.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BANDS, FILTER_WIDTH = 16, 64


def positional_features(seq: int, device: torch.device) -> Tensor:
    """safari's PositionalEmbedding: t in [0, 1] and the cos/sin of 16 frequency bands."""
    t = torch.linspace(0, 1, seq, device=device)[:, None]
    t_rescaled = torch.linspace(0, seq - 1, seq, device=device)[:, None]
    f = torch.linspace(1e-4, BANDS - 1, BANDS, device=device)[None]
    w = 2 * math.pi * t_rescaled / seq
    return torch.cat((t, torch.cos(f * w), torch.sin(f * w)), dim=-1)  # (L, 33)


class Sin(nn.Module):
    def __init__(self, dim: int, w: float = 1.0) -> None:
        super().__init__()
        self.freq = nn.Parameter(w * torch.ones(1, dim))

    def forward(self, x: Tensor) -> Tensor:
        return torch.sin(self.freq * x)


class HyenaOperator(nn.Module):
    def __init__(self, d: int, seq: int, device: torch.device) -> None:
        super().__init__()
        self.d = d
        self.in_proj = nn.Linear(d, 3 * d)
        self.short = nn.Conv1d(3 * d, 3 * d, 3, padding=2, groups=3 * d)
        self.out_proj = nn.Linear(d, d)
        self.filter_mlp = nn.Sequential(
            nn.Linear(1 + 2 * BANDS, FILTER_WIDTH), Sin(FILTER_WIDTH),
            nn.Linear(FILTER_WIDTH, FILTER_WIDTH), Sin(FILTER_WIDTH),
            nn.Linear(FILTER_WIDTH, d, bias=False),
        )  # fmt: skip
        self.deltas = nn.Parameter(torch.linspace(0.3, 1.5, d)[None] * 10)  # decay rates
        self.bias = nn.Parameter(torch.randn(d))
        self.register_buffer("z", positional_features(seq, device))
        self.register_buffer("t", torch.linspace(0, 1, seq, device=device)[:, None])

    def filter(self) -> Tensor:
        h = self.filter_mlp(self.z) * torch.exp(-self.t * self.deltas.abs())  # (L, d)
        return h.transpose(0, 1)  # (d, L)

    def forward(self, u: Tensor) -> Tensor:
        seq = u.shape[1]
        z = self.in_proj(u).transpose(1, 2)  # (B, 3d, L)
        z = self.short(z)[..., :seq]
        x0, x1, v = z.split(self.d, dim=1)
        v = (v * x1).float()
        n = 2 * seq
        k_f = torch.fft.rfft(self.filter(), n=n) / n
        v_f = torch.fft.rfft(v, n=n)
        y = torch.fft.irfft(v_f * k_f, n=n, norm="forward")[..., :seq]
        y = (y + v * self.bias[:, None]).to(u.dtype) * x0
        return self.out_proj(y.transpose(1, 2))


class HyenaBlock(nn.Module):
    def __init__(self, d: int, seq: int, device: torch.device) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mixer = HyenaOperator(d, seq, device)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.mixer(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, d, depth = (2, 32, 16, 2) if smoke else (8, 2048, 768, 2)
    dtype = low_precision(device)
    model = nn.Sequential(*(HyenaBlock(d, seq, device) for _ in range(depth)))
    model = model.to(device).eval()
    for blk in model:  # low precision but for the filter, its decay and D (fp32, as the FFTs)
        m = blk.mixer
        for part in (blk.norm1, blk.norm2, blk.up, blk.down, m.in_proj, m.short, m.out_proj):
            part.to(dtype)

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(batch, seq, d, device=device, dtype=dtype),) for _ in range(2)]
    description = (
        f"{depth} Hyena blocks (order 2, FFT long conv) d{d}, batch {batch} x {seq} tokens"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
