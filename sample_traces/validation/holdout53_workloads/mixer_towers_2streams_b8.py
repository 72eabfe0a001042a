"""An audio-visual event classifier of two MLP-Mixer towers (Tolstikhin et al., 2021) over 8
clips, an image tower on one side stream and an audio-spectrogram tower on the other
(fifty-third hold-out: two chains of mid-sized bf16 GEMMs, the token-mixing ones on transposed
activations, with the LayerNorms, GELUs, transposes and residual adds between them, of unequal
widths side by side, joined on the current stream), each tower laid out as
google-research/vision_transformer's ``models_mixer.py`` (``MlpBlock``, ``MixerBlock``,
``MlpMixer``) and timm's ``mlp_mixer.py`` build it. A Mixer block on x (b, tokens, channels):
y = LayerNorm(x), transposed to (b, channels, tokens), the token-mixing MLP ``Linear(tokens,
D_S)``, GELU, ``Linear(D_S, tokens)``, transposed back, x = x + y; then x + the channel-mixing
MLP ``Linear(C, D_C)``, GELU, ``Linear(D_C, C)`` of LayerNorm(x). Each tower: the per-patch
stem (``Conv2d`` with kernel and stride 16), flattened to tokens, 4 Mixer blocks, the pre-head
LayerNorm and the mean over the tokens. Side stream 1, the image tower, Mixer-S/16's widths: the
RGB frame (8, 3, 224, 224) in 196 patches, C 512, D_S 256, D_C 2048. Side stream 2, the audio
tower: a log-mel spectrogram (8, 1, 128, 512) (128 mels x 512 frames, about 5 s) cut into 16 x
16 patches as the Audio Spectrogram Transformer does without overlap, 8 x 32 = 256 tokens, C
384, D_S 192, D_C 1536. After the join (the project's ``fork_join``: ``wait_stream``, and
``record_stream`` on the branch outputs outside capture), on the current stream: the two pooled
embeddings concatenated (8, 896) and the head ``Linear(896, 309)`` (VGGSound's 309 classes).
The towers' activations 1.6 MB (image) and 1.6 MB (audio) a tensor at C, 6.4 and 6.3 MB at D_C.
bf16 on a GPU (fp32 on a CPU), eval mode, no gradients. Inputs (two input sets): the frames (8,
3, 224, 224) and the spectrograms (8, 1, 128, 512), random. Returns the logits (8, 309).

    traceinspect profile mixer_towers_2streams_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

BLOCKS, PATCH, CLASSES = 4, 16, 309


def mlp_block(dim: int, hidden: int) -> nn.Module:
    """models_mixer's MlpBlock: Dense, GELU, Dense."""
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))


class MixerBlock(nn.Module):
    def __init__(self, tokens: int, channels: int, tokens_mlp: int, channels_mlp: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(channels), nn.LayerNorm(channels)
        self.token_mixing = mlp_block(tokens, tokens_mlp)
        self.channel_mixing = mlp_block(channels, channels_mlp)

    def forward(self, x: Tensor) -> Tensor:  # x: (b, tokens, channels)
        y = self.token_mixing(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        x = x + y
        return x + self.channel_mixing(self.norm2(x))


class MixerTower(nn.Module):
    """MlpMixer without its head: patch stem, blocks, pre-head LayerNorm, mean over tokens."""

    def __init__(
        self, in_chans: int, tokens: int, channels: int, tokens_mlp: int, channels_mlp: int
    ) -> None:
        super().__init__()
        self.stem = nn.Conv2d(in_chans, channels, PATCH, stride=PATCH)
        self.blocks = nn.Sequential(
            *(MixerBlock(tokens, channels, tokens_mlp, channels_mlp) for _ in range(BLOCKS))
        )
        self.pre_head_norm = nn.LayerNorm(channels)

    def forward(self, x: Tensor) -> Tensor:
        x = self.stem(x).flatten(2).transpose(1, 2)  # (b, tokens, channels)
        return self.pre_head_norm(self.blocks(x)).mean(dim=1)


class AudioVisualMixer(nn.Module):
    def __init__(self, image: tuple[int, ...], audio: tuple[int, ...]) -> None:
        super().__init__()
        self.image = MixerTower(3, *image)
        self.audio = MixerTower(1, *audio)
        self.head = nn.Linear(image[1] + audio[1], CLASSES)


def build(device: torch.device, smoke: bool) -> Built:
    if smoke:
        batch, size, mels, frames = 2, 32, 32, 64
        image, audio = (4, 32, 16, 64), (8, 24, 16, 48)
    else:
        batch, size, mels, frames = 8, 224, 128, 512
        image, audio = (196, 512, 256, 2048), (256, 384, 192, 1536)
    dtype = low_precision(device)
    model = AudioVisualMixer(image, audio).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(frame: Tensor, spec: Tensor) -> Tensor:
        seen, heard = fork_join(
            device, streams, [lambda: model.image(frame), lambda: model.audio(spec)]
        )
        return model.head(torch.cat((seen, heard), dim=1))

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype),
            torch.randn(batch, 1, mels, frames, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"MLP-Mixer towers: {BLOCKS} blocks x {image[0]} tokens C{image[1]} (image) and "
        f"{BLOCKS} x {audio[0]} tokens C{audio[1]} (audio), head {CLASSES}, b{batch}, "
        f"2 side streams"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
