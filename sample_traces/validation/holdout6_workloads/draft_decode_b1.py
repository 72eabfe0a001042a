"""Speculative-decoding draft model: 4 sequential greedy decode steps inside one step through
a tiny Llama-style decoder (``_models.Decoder``: 2 layers, d 512, 8 heads, RMSNorm, fused qkv,
SwiGLU MLP 1344, vocabulary 8192), batch 1, bf16 (sixth hold-out). Each decode step embeds
the current token, writes its keys and values into a static KV cache of 256 positions with
``index_copy_`` at a position held in a device tensor (advanced on the GPU, ``pos + 1``),
attends over the slots up to that position, and picks the next token by argmax on the GPU;
that token feeds the next step's embedding lookup with no host readback. The step returns
the 4 drafted tokens (1 x 4, int64).

Both input sets start at the same position (192), so a step overwrites the 4 cache slots it
reads back (192-195) and otherwise reads only the cache as built: it depends only on its
input.

    traceinspect profile draft_decode_b1.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import Decoder
from torch import Tensor

BATCH, DRAFT = 1, 4


def build(device: torch.device, smoke: bool) -> Built:
    layers, d, heads, cache, vocab = (2, 32, 2, 16, 64) if smoke else (2, 512, 8, 256, 8192)
    dtype = low_precision(device)
    model = Decoder(layers, d, heads, BATCH, cache, vocab, dtype).to(device).eval()

    @torch.no_grad()
    def step(tokens: Tensor, pos: Tensor) -> Tensor:
        drafted = []
        for i in range(DRAFT):
            if i:
                pos = pos + 1
            tokens = model(tokens, pos)
            drafted.append(tokens)
        return torch.cat(drafted, dim=1)

    start = cache * 3 // 4
    inputs = [
        (torch.randint(0, vocab, (BATCH, 1), device=device), torch.tensor([start], device=device))
        for _ in range(2)
    ]
    description = f"draft decode, {DRAFT} greedy steps of {layers} x d{d}, vocab {vocab}"
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
