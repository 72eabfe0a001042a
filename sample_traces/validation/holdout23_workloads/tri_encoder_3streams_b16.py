"""Three modality encoders on three side streams, fused (twenty-third hold-out): a text
encoder (embedding 8,000 x 256, two Transformer-style MLP blocks over 64 tokens, mean
pool), an image patch encoder (16 x 16 patches of a 3 x 128 x 128 image through a
strided convolution and an MLP, mean pool) and an audio encoder (three strided Conv1d
layers over 16,000 samples, mean pool) each forked onto its own stream with
``wait_stream`` and joined back, then a fusion MLP on the concatenated 768 features.
Batch 16, fp32. On a CPU all runs on one stream.

    traceinspect profile tri_encoder_3streams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, d: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(
            [
                nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                for _ in range(2)
            ]
        )

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = x + block(x)
        return x.mean(dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, n, vocab, side, samples = (
        (2, 8, 4, 50, 16, 256) if smoke else (16, 256, 64, 8000, 128, 16000)
    )
    patch = 16 if not smoke else 4
    text = TextEncoder(vocab, d)
    image = nn.Sequential(nn.Conv2d(3, d, patch, stride=patch), nn.Flatten(2), nn.GELU())
    image_mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU())
    audio = nn.Sequential(
        nn.Conv1d(1, 64, 10, stride=5),
        nn.GELU(),
        nn.Conv1d(64, 128, 8, stride=4),
        nn.GELU(),
        nn.Conv1d(128, d, 4, stride=2),
        nn.GELU(),
    )
    fusion = nn.Sequential(nn.Linear(3 * d, d), nn.GELU(), nn.Linear(d, 10))
    modules = nn.ModuleList([text, image, image_mlp, audio, fusion]).to(device).eval()
    streams = side_streams(device, 3)

    @torch.no_grad()
    def step(tokens: Tensor, pixels: Tensor, wave: Tensor) -> Tensor:
        branches = [
            lambda: text(tokens),
            lambda: image_mlp(image(pixels).transpose(1, 2)).mean(dim=1),
            lambda: audio(wave).mean(dim=2),
        ]
        feats = fork_join(device, streams, branches)
        return fusion(torch.cat(feats, dim=1))

    def make() -> tuple[Tensor, Tensor, Tensor]:
        return (
            torch.randint(0, vocab, (batch, n), device=device),
            torch.randn(batch, 3, side, side, device=device),
            torch.randn(batch, 1, samples, device=device),
        )

    return Built(
        step,
        [make() for _ in range(2)],
        f"text/image/audio encoders on 3 streams, b{batch}",
        [modules],
    )


if __name__ == "__main__":
    main(build, __doc__)
