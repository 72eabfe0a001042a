"""A Whisper-style audio encoder at batch 1 (thirty-third hold-out): a log-mel spectrogram
(1, 80, 3000) through ``Conv1d(80, 512, 3, padding=1)`` + GELU and
``Conv1d(512, 512, 3, stride=2, padding=1)`` + GELU (3,000 frames -> 1,500), a sinusoidal
position embedding (1500 x 512, a buffer made at build) added, 4 pre-norm transformer
encoder layers (d 512, 8 heads, fused QKV, SDPA, GELU MLP 2048) and a final LayerNorm;
bf16 on a GPU, eval mode, no gradients. Input: log-mel (1, 80, 3000). Returns the encoder
output (1, 1500, 512).

    traceinspect profile whisper_encoder_b1.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _models import encoder
from torch import Tensor, nn

LAYERS = 4


def sinusoids(length: int, channels: int) -> Tensor:
    """Whisper's position table: sines then cosines over geometric timescales."""
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2).float())
    t = torch.arange(length).float()[:, None] * inv[None]
    return torch.cat([t.sin(), t.cos()], dim=1)


class AudioEncoder(nn.Module):
    def __init__(self, mels: int, frames: int, d: int, heads: int, dtype: torch.dtype) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(mels, d, 3, padding=1, dtype=dtype)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1, dtype=dtype)
        self.register_buffer("pos", sinusoids(frames // 2, d).to(dtype))
        self.blocks = encoder(LAYERS, d, heads, dtype)
        self.ln_post = nn.LayerNorm(d, dtype=dtype)

    def forward(self, mel: Tensor) -> Tensor:
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel))))  # (b, d, frames / 2)
        x = x.transpose(1, 2) + self.pos
        return self.ln_post(self.blocks(x))


def build(device: torch.device, smoke: bool) -> Built:
    mels, frames, d, heads = (8, 64, 32, 2) if smoke else (80, 3000, 512, 8)
    dtype = low_precision(device)
    model = AudioEncoder(mels, frames, d, heads, dtype).to(device).eval()

    @torch.no_grad()
    def step(mel: Tensor) -> Tensor:
        return model(mel)

    inputs = [(torch.randn(1, mels, frames, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"Whisper-style encoder, 2 convs + {LAYERS} x d{d}, {frames // 2} frames, b1",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
