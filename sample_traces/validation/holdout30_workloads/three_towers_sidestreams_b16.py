"""Three encoders of different sizes, each on its own side stream, their pooled outputs
returned as they are (thirtieth hold-out): 16 samples, fp16 on a GPU. An image tower (a
patchify convolution 3 -> 384, 16 x 16 patches of 224 x 224 images, then 2 Transformer
encoder layers of 384 channels), a text tower (an embedding of 30,000 words, 64 tokens,
2 Transformer encoder layers of 512 channels) and a tabular tower (an MLP 128 -> 1,024 ->
1,024 -> 256 with ReLU), each forked from the current stream with ``wait_stream``, each
mean-pooled; the current stream joins them and launches nothing after.

    traceinspect profile three_towers_sidestreams_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def encoder(d: int, heads: int, layers: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, patch, di, dt, words, tokens = (
        (2, 32, 16, 16, 16, 100, 8) if smoke else (16, 224, 16, 384, 512, 30000, 64)
    )
    heads = 2 if smoke else 8
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    patchify = nn.Conv2d(3, di, patch, stride=patch)
    image_enc, text_enc = encoder(di, heads, 2), encoder(dt, heads, 2)
    vocab = nn.Embedding(words, dt)
    tabular = nn.Sequential(
        nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 256)
    )
    model = nn.ModuleList([patchify, image_enc, text_enc, vocab, tabular]).to(device, dtype)
    model.eval()
    streams = side_streams(device, 3)

    def image_tower(img: Tensor) -> Tensor:
        return image_enc(patchify(img).flatten(2).transpose(1, 2)).mean(dim=1)

    @torch.no_grad()
    def step(img: Tensor, text: Tensor, table: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        a, b, c = fork_join(
            device,
            streams,
            [
                lambda: image_tower(img),
                lambda: text_enc(vocab(text)).mean(dim=1),
                lambda: tabular(table),
            ],
        )
        return a, b, c

    inputs = [
        (
            torch.randn(batch, 3, image, image, device=device, dtype=dtype),
            torch.randint(0, words, (batch, tokens), device=device),
            torch.randn(batch, 128, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step, inputs, f"image, text and tabular towers on 3 side streams, b{batch}", [model]
    )


if __name__ == "__main__":
    main(build, __doc__)
