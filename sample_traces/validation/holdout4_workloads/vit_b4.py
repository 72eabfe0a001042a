"""ViT-style classifier: 16x16 patch embedding, class token, 6 nn.TransformerEncoderLayer
blocks (d 384, 6 heads, pre-norm) over 197 tokens at batch 4, 224x224, bf16 (fourth
hold-out).

    traceinspect profile vit_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import nn


class ViT(nn.Module):
    def __init__(self, size: int, patch: int, d: int, heads: int, layers: int) -> None:
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (size // patch) ** 2 + 1, d) * 0.02)
        layer = dict(dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.Sequential(
            *(nn.TransformerEncoderLayer(d, heads, 4 * d, **layer) for _ in range(layers))
        )
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1000)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


def build(device: torch.device, smoke: bool) -> Built:
    size, d, heads, layers, batch = (32, 32, 2, 1, 2) if smoke else (224, 384, 6, 6, 4)
    dtype = low_precision(device)
    model = ViT(size, 16, d, heads, layers).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x: torch.Tensor) -> torch.Tensor:
        return model(x)

    inputs = [(torch.randn(batch, 3, size, size, device=device, dtype=dtype),) for _ in range(2)]
    return Built(step, inputs, f"ViT {layers} x d{d}, batch {batch} at {size}", [model])


if __name__ == "__main__":
    main(build, __doc__)
