"""wav2vec 2.0's convolutional feature encoder and feature projection (Baevski et al., 2020)
on 2 clips of 1 s of 16 kHz audio, bf16 (nineteenth hold-out), inference: seven Conv1d
layers of 512 channels (kernel 10 stride 5, then 3/2 four times, then 2/2 twice: 16000
samples down to 49 frames), the first followed by GroupNorm(512 groups) and each by GELU;
then the feature projection: LayerNorm(512), Linear 512->768. About 20 kernels; the first
layers work on long sequences (3199 frames x 512 channels), the last on 49 frames. Input:
2 x 16000 waveform. Returns 2 x 49 x 768.

    traceinspect profile wav2vec_feature_encoder_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

LAYERS = [(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]


class FeatureEncoder(nn.Module):
    def __init__(self, c: int, d: int) -> None:
        super().__init__()
        self.convs = nn.ModuleList(
            nn.Conv1d(1 if i == 0 else c, c, k, stride=s, bias=False)
            for i, (k, s) in enumerate(LAYERS)
        )
        self.group_norm = nn.GroupNorm(c, c)
        self.norm = nn.LayerNorm(c)
        self.project = nn.Linear(c, d)

    def forward(self, wave: Tensor) -> Tensor:
        h = wave.unsqueeze(1)
        for i, conv in enumerate(self.convs):
            h = conv(h)
            if i == 0:
                h = self.group_norm(h)
            h = F.gelu(h)
        return self.project(self.norm(h.transpose(1, 2)))


def build(device: torch.device, smoke: bool) -> Built:
    c, d, samples, batch = (16, 24, 800, 1) if smoke else (512, 768, 16000, 2)
    dtype = low_precision(device)
    model = FeatureEncoder(c, d).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(wave: Tensor) -> Tensor:
        return model(wave)

    inputs = [(torch.randn(batch, samples, device=device, dtype=dtype),) for _ in range(2)]
    description = f"wav2vec 2.0 feature encoder (7 Conv1d of {c}) + projection to {d}, b{batch}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
