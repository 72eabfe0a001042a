"""CLIP's contrastive scoring with its two towers on two side streams (thirty-first
hold-out): 32 images of 224 x 224 and 32 captions of 77 tokens, fp16 on a GPU. The image
tower (a ViT: 32 x 32 patches by a strided convolution, a class token, 4 pre-norm
Transformer encoder layers of 512 channels, 8 heads, the class token projected to 512)
runs on one side stream, the text tower (an embedding of 49,408 tokens, 4 pre-norm layers
of 512 channels, the end-of-text token's state, found by ``argmax`` over the ids,
projected to 512) on the other, each forked from the current stream with ``wait_stream``;
the current stream joins both, normalizes the embeddings and computes the 32 x 32 logits
and the symmetric cross-entropy. No gradients.

    traceinspect profile clip_towers_2streams_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, main
from _streams import fork_join, side_streams
from torch import Tensor, nn


def encoder(d: int, heads: int, layers: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(
        d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def build(device: torch.device, smoke: bool) -> Built:
    batch, image, patch, d, words, tokens, heads = (
        (2, 32, 16, 16, 100, 8, 2) if smoke else (32, 224, 32, 512, 49408, 77, 8)
    )
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    grid = (image // patch) ** 2
    patchify = nn.Conv2d(3, d, patch, stride=patch, bias=False)
    cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
    image_pos = nn.Parameter(torch.randn(1, grid + 1, d) * 0.02)
    image_enc, text_enc = encoder(d, heads, 4), encoder(d, heads, 4)
    vocab = nn.Embedding(words, d)
    text_pos = nn.Parameter(torch.randn(1, tokens, d) * 0.02)
    image_proj, text_proj = nn.Linear(d, 512, bias=False), nn.Linear(d, 512, bias=False)
    model = nn.ModuleList([patchify, image_enc, text_enc, vocab, image_proj, text_proj])
    params = nn.ParameterList([cls, image_pos, text_pos])
    model.to(device, dtype).eval()
    params.to(device, dtype)
    cls_t, image_pos_t, text_pos_t = (p.detach() for p in params)
    streams = side_streams(device, 2)

    def image_tower(img: Tensor) -> Tensor:
        x = patchify(img).flatten(2).transpose(1, 2)
        x = torch.cat([cls_t.expand(x.shape[0], -1, -1), x], dim=1) + image_pos_t
        return image_proj(image_enc(x)[:, 0])

    def text_tower(text: Tensor) -> Tensor:
        x = text_enc(vocab(text) + text_pos_t)
        end = text.argmax(dim=-1)
        return text_proj(x[torch.arange(x.shape[0], device=x.device), end])

    @torch.no_grad()
    def step(img: Tensor, text: Tensor) -> Tensor:
        a, b = fork_join(device, streams, [lambda: image_tower(img), lambda: text_tower(text)])
        logits = 100.0 * F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).t()
        labels = torch.arange(logits.shape[0], device=logits.device)
        logits = logits.float()
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2

    inputs = [
        (
            torch.randn(batch, 3, image, image, device=device, dtype=dtype),
            torch.randint(0, words, (batch, tokens), device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step, inputs, f"CLIP towers ViT/{patch} and text, 2 side streams, b{batch}", [model, params]
    )


if __name__ == "__main__":
    main(build, __doc__)
