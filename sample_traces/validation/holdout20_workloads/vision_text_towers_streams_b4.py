"""A vision tower and a text tower on two side streams, joined by cross-attention, as
Flamingo-style fusion layers are fed (twentieth hold-out), 4 examples, bf16, inference, fed
two inputs: the image (4 x 3 x 224 x 224) and the token embeddings (4 x 64 x 512). On one
stream a patch embedding (Conv2d 16x16 stride 16 to 512 channels: 196 patches) and two
Transformer encoder layers over the patches; on the other two Transformer encoder layers
over the tokens (``nn.TransformerEncoderLayer``, d 512, 8 heads, FFN 2048, eval mode:
PyTorch's fused fast path); the current stream joins them and runs one cross-attention
(``nn.MultiheadAttention``, tokens attending to patches) and the residual add. About 50
kernels, the towers' GEMMs over 784 patch rows and 256 token rows side by side. Inputs: the
images and the tokens. Returns 4 x 64 x 512.

    traceinspect profile vision_text_towers_streams_b4.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _streams import fork_join, side_streams
from torch import Tensor, nn

LAYERS = 2


def encoder(d: int, heads: int) -> nn.Module:
    layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)


def build(device: torch.device, smoke: bool) -> Built:
    batch, size, patch, tokens, d, heads = (
        (1, 32, 16, 8, 32, 2) if smoke else (4, 224, 16, 64, 512, 8)
    )
    dtype = low_precision(device)
    patchify = nn.Conv2d(3, d, patch, stride=patch)
    vision, text = encoder(d, heads), encoder(d, heads)
    cross = nn.MultiheadAttention(d, heads, batch_first=True)
    model = nn.ModuleList([patchify, vision, text, cross]).to(device=device, dtype=dtype).eval()
    streams = side_streams(device, 2)

    @torch.no_grad()
    def step(images: Tensor, embedded: Tensor) -> Tensor:
        patches, words = fork_join(
            device,
            streams,
            [
                lambda: vision(patchify(images).flatten(2).transpose(1, 2)),
                lambda: text(embedded),
            ],
        )
        fused, _ = cross(words, patches, patches, need_weights=False)
        return words + fused

    inputs = [
        (
            torch.randn(batch, 3, size, size, device=device, dtype=dtype),
            torch.randn(batch, tokens, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    description = f"vision + text towers ({LAYERS} layers d{d}) on 2 streams, cross-attention"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
