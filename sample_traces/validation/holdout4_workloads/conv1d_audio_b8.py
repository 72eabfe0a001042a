"""wav2vec2-style feature extractor: 7 Conv1d layers (512 channels, kernels 10,3,3,3,3,2,2,
strides 5,2,2,2,2,2,2) with GELU, GroupNorm on the first, then LayerNorm and a 512->768
projection, over 8 one-second 16 kHz clips, fp32 (fourth hold-out).

    traceinspect profile conv1d_audio_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn

LAYERS = [(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]  # (kernel, stride)


class FeatureExtractor(nn.Module):
    def __init__(self, channels: int, dim: int) -> None:
        super().__init__()
        convs: list[nn.Module] = []
        cin = 1
        for i, (kernel, stride) in enumerate(LAYERS):
            convs.append(nn.Conv1d(cin, channels, kernel, stride, bias=False))
            if i == 0:
                convs.append(nn.GroupNorm(channels, channels))
            convs.append(nn.GELU())
            cin = channels
        self.convs = nn.Sequential(*convs)
        self.norm = nn.LayerNorm(channels)
        self.proj = nn.Linear(channels, dim)

    def forward(self, audio: Tensor) -> Tensor:
        features = self.convs(audio.unsqueeze(1)).transpose(1, 2)
        return self.proj(self.norm(features))


def build(device: torch.device, smoke: bool) -> Built:
    channels, dim, samples, batch = (16, 24, 1600, 2) if smoke else (512, 768, 16_000, 8)
    model = FeatureExtractor(channels, dim).to(device).eval()

    @torch.no_grad()
    def step(audio: Tensor) -> Tensor:
        return model(audio)

    inputs = [(torch.randn(batch, samples, device=device),) for _ in range(2)]
    return Built(step, inputs, f"Conv1d feature extractor, batch {batch} x {samples}", [model])


if __name__ == "__main__":
    main(build, __doc__)
