"""A Transformer decoder with cross-attention, as an encoder-decoder model runs its decoder
over a whole target at once (thirty-second hold-out): an ``nn.TransformerDecoder`` of 4
pre-norm ``nn.TransformerDecoderLayer`` (d_model 512, 8 heads, feed-forward 2048, no
dropout) and a final LayerNorm, bf16 on a GPU, eval mode, no gradients. Batch 2: causal
self-attention over 64 target tokens (the additive causal mask made once in ``build``,
passed with ``tgt_is_causal=True`` so no mask is inspected on the host) and cross-attention
to 196 memory tokens. Inputs: target (2, 64, 512), memory (2, 196, 512). Returns the
decoder output (2, 64, 512).

    traceinspect profile transformer_decoder_xattn_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, d, heads, ff, target, memory = (
        (2, 16, 2, 32, 8, 12) if smoke else (2, 512, 8, 2048, 64, 196)
    )
    dtype = low_precision(device)
    layer = nn.TransformerDecoderLayer(d, heads, ff, dropout=0.0, batch_first=True, norm_first=True)
    decoder = nn.TransformerDecoder(layer, 4, norm=nn.LayerNorm(d))
    decoder.to(device, dtype).eval()
    causal = torch.full((target, target), float("-inf"), device=device, dtype=dtype).triu(1)

    @torch.no_grad()
    def step(tgt: Tensor, mem: Tensor) -> Tensor:
        return decoder(tgt, mem, tgt_mask=causal, tgt_is_causal=True)

    inputs = [
        (
            torch.randn(batch, target, d, device=device, dtype=dtype),
            torch.randn(batch, memory, d, device=device, dtype=dtype),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"4 pre-norm decoder layers d{d}, causal self-attn over {target} + cross-attn to "
        f"{memory} tokens, b{batch}",
        [decoder, causal],
    )


if __name__ == "__main__":
    main(build, __doc__)
