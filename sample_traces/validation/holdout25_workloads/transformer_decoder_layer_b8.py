"""One ``nn.TransformerDecoderLayer`` in eval mode (twenty-fifth hold-out): d 512, 8 heads
of 64, feed-forward 2048 (ReLU), post-norm, batch-first, fp32 — a target of 8 sequences of
128 tokens with a causal mask (a 128 x 128 float mask of 0 and -inf, made at build), and a
memory of 8 sequences of 256 tokens. Masked self-attention, cross-attention over the memory,
the feed-forward block, three residual adds and three LayerNorms: GEMMs of 1,024 and 2,048
rows, attention kernels and elementwise kernels; one stream.

    traceinspect profile transformer_decoder_layer_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, main
from torch import Tensor, nn


def build(device: torch.device, smoke: bool) -> Built:
    batch, n_tgt, n_mem, d, heads, ff = (
        (2, 4, 6, 8, 2, 16) if smoke else (8, 128, 256, 512, 8, 2048)
    )
    layer = nn.TransformerDecoderLayer(d_model=d, nhead=heads, dim_feedforward=ff, batch_first=True)
    layer = layer.to(device).eval()
    causal = nn.Transformer.generate_square_subsequent_mask(n_tgt, device=device)

    @torch.no_grad()
    def step(tgt: Tensor, memory: Tensor) -> Tensor:
        return layer(tgt, memory, tgt_mask=causal)

    inputs = [
        (
            torch.randn(batch, n_tgt, d, device=device),
            torch.randn(batch, n_mem, d, device=device),
        )
        for _ in range(2)
    ]
    return Built(
        step,
        inputs,
        f"TransformerDecoderLayer d{d} {heads} heads ff{ff}, causal, "
        f"b{batch}x{n_tgt} over memory {n_mem}",
        [layer, causal],
    )


if __name__ == "__main__":
    main(build, __doc__)
