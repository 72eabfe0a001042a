"""A three-modality classifier on 16 samples fed three inputs of different sizes, bf16
(seventeenth hold-out), inference. The inputs: image patch features (16 x 49 x 256, a 7 x 7
grid), text token embeddings (16 x 32 x 256) and an audio clip vector (16 x 128). Per
modality: the image and the text each mean-pooled over their patches or tokens and projected
by a Linear 256->256, the audio projected by a Linear 128->256. A small cross-attention, one
head, the text over the image, written with ``torch.matmul`` and ``torch.softmax``: Q from
the text tokens, K and V from the image patches (three Linear 256->256), the 16 x 32 x 49
scores Q K^T / sqrt(256), their softmax over the patches, times V (16 x 32 x 256), mean-pooled
over the tokens and projected (Linear 256->256). The four 256-wide vectors are concatenated
(16 x 1024) and fed to a head, Linear 1024->512, GELU, Linear 512->10. About 20 kernels (two
means, ten GEMMs with their bias, two batched matmuls, the scaling, the softmax, the last
mean, the concatenation, the GELU), none over more than 16 x 49 x 256 values: launch-bound.
Inputs: the image features, the text embeddings and the audio vector. Returns the logits
(16 x 10, bf16).

    traceinspect profile multimodal_3in_b16.py
"""

from __future__ import annotations

import math

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

CLASSES = 10


class Fusion(nn.Module):
    def __init__(self, d: int, d_audio: int, hidden: int) -> None:
        super().__init__()
        self.image_proj = nn.Linear(d, d)
        self.text_proj = nn.Linear(d, d)
        self.audio_proj = nn.Linear(d_audio, d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.scale = 1 / math.sqrt(d)
        self.head = nn.Sequential(nn.Linear(4 * d, hidden), nn.GELU(), nn.Linear(hidden, CLASSES))

    def forward(self, image: Tensor, text: Tensor, audio: Tensor) -> Tensor:
        pooled_image = self.image_proj(image.mean(1))
        pooled_text = self.text_proj(text.mean(1))
        pooled_audio = self.audio_proj(audio)
        q, k, v = self.q(text), self.k(image), self.v(image)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale  # (B, tokens, patches)
        attended = torch.matmul(torch.softmax(scores, dim=-1), v)  # (B, tokens, d)
        cross = self.o(attended.mean(1))
        return self.head(torch.cat((pooled_image, pooled_text, pooled_audio, cross), dim=1))


def build(device: torch.device, smoke: bool) -> Built:
    sizes = (2, 9, 8, 32, 16, 64) if smoke else (16, 49, 32, 256, 128, 512)
    batch, patches, tokens, d, d_audio, hidden = sizes
    dtype = low_precision(device)
    model = Fusion(d, d_audio, hidden).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(image: Tensor, text: Tensor, audio: Tensor) -> Tensor:
        return model(image, text, audio)

    inputs = [
        (
            torch.randn(batch, patches, d, device=device, dtype=dtype),
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
            torch.randn(batch, d_audio, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = (
        f"multimodal fusion, image {patches} x {d} + text {tokens} x {d} + audio {d_audio} "
        f"(3 inputs), pooled projections + 1-head text-over-image cross-attention, head "
        f"{4 * d}-{hidden}-{CLASSES}, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
