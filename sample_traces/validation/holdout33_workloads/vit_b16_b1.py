"""A ViT-Base/16 image classifier forward at batch 1 (thirty-third hold-out): a 3 x 224 x 224
image cut into 196 patches by ``Conv2d(3, 768, 16, stride=16)``, a class token prepended
and a learned position embedding (197 x 768) added, 12 pre-norm
``nn.TransformerEncoderLayer`` (d_model 768, 12 heads, feed-forward 3072, GELU, no
dropout), a final LayerNorm and the ``Linear(768, 1000)`` head on the class token; bf16 on a
GPU, eval mode, no gradients. Input: image (1, 3, 224, 224). Returns the logits (1, 1000).

    traceinspect profile vit_b16_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


class ViT(nn.Module):
    def __init__(
        self, image: int, patch: int, d: int, heads: int, ff: int, layers: int, classes: int
    ) -> None:
        super().__init__()
        self.patchify = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(
            d, heads, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(
            layer, layers, norm=nn.LayerNorm(d), enable_nested_tensor=False
        )
        self.head = nn.Linear(d, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.patchify(x).flatten(2).transpose(1, 2)  # (b, patches, d)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.encoder(x)[:, 0])


def build(device: torch.device, smoke: bool) -> Built:
    image, patch, d, heads, ff, layers, classes = (
        (32, 8, 32, 2, 64, 2, 10) if smoke else (224, 16, 768, 12, 3072, 12, 1000)
    )
    dtype = low_precision(device)
    model = ViT(image, patch, d, heads, ff, layers, classes).to(device, dtype).eval()

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        return model(x)

    inputs = [(torch.randn(1, 3, image, image, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"ViT/{patch}, {layers} x d{d}, {(image // patch) ** 2 + 1} tokens, b1",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
