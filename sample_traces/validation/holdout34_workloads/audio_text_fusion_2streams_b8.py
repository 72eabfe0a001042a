"""An audio encoder and a text encoder on two side streams, fused by cross-attention after
the join (thirty-fourth hold-out): batch 8, bf16 on a GPU, eval mode, no gradients. Audio
branch, on one side stream: a log-mel spectrogram (8, 80, 400) through three
``Conv1d(in, 256, 5, stride=2, padding=2)`` each followed by a GELU (80 -> 256 -> 256 -> 256
channels, 400 -> 200 -> 100 -> 50 frames), transposed to (8, 50, 256), then 2 pre-norm
``nn.TransformerEncoderLayer`` (d_model 256, 4 heads, feed-forward 1024, GELU, no dropout,
batch_first). Text branch, on the other: 8 x 64 token ids through ``nn.Embedding(8000,
256)`` plus a learned position embedding (64 x 256), then 2 encoder layers of the same
shape. Both streams are forked from the current stream and joined back with the project's
``fork_join`` (``wait_stream``, and ``record_stream`` on the branch outputs outside
capture). After the join, on the current stream: cross-attention of the 64 text queries
over the 50 audio keys / values (``nn.MultiheadAttention(256, 4, batch_first=True)``,
``need_weights=False``), a residual add onto the text states and a LayerNorm, the mean over
the 64 tokens and a ``Linear(256, 10)``. On a CPU the branches run in order. Inputs:
log-mel (8, 80, 400), tokens (8, 64) long. Returns the logits (8, 10).

    traceinspect profile audio_text_fusion_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS, CLASSES = 2, 10


def encoder(d: int, heads: int, ff: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(
        d, heads, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    return nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)


class AudioEncoder(nn.Module):
    def __init__(self, mels: int, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv1d(cin, d, 5, stride=2, padding=2) for cin in (mels, d, d)
        )
        self.encoder = encoder(d, heads, ff)

    def forward(self, mel: Tensor) -> Tensor:
        x = mel
        for conv in self.convs:
            x = F.gelu(conv(x))
        return self.encoder(x.transpose(1, 2))  # (b, frames / 8, d)


class TextEncoder(nn.Module):
    def __init__(self, vocab: int, tokens: int, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
        self.encoder = encoder(d, heads, ff)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.encoder(self.embed(tokens) + self.pos)


class Fusion(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.xattn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, CLASSES)

    def forward(self, text: Tensor, audio: Tensor) -> Tensor:
        fused, _ = self.xattn(text, audio, audio, need_weights=False)
        return self.head(self.norm(text + fused).mean(dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    batch, mels, frames, vocab, tokens, d, heads, ff = (
        (2, 8, 32, 100, 8, 32, 2, 64) if smoke else (8, 80, 400, 8000, 64, 256, 4, 1024)
    )
    dtype = low_precision(device)
    audio_enc = AudioEncoder(mels, d, heads, ff)
    text_enc = TextEncoder(vocab, tokens, d, heads, ff)
    fusion = Fusion(d, heads)
    model = nn.ModuleList([audio_enc, text_enc, fusion]).to(device, dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(mel: Tensor, text: Tensor) -> Tensor:
        audio, words = fork_join(device, streams, [lambda: audio_enc(mel), lambda: text_enc(text)])
        return fusion(words, audio)

    inputs = [
        (
            torch.randn(batch, mels, frames, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, tokens), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"audio conv + {LAYERS}-layer encoder beside text {LAYERS}-layer encoder, 2 side "
        f"streams, cross-attention fusion, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
