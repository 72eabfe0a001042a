"""Masked-autoencoder encoder step (He et al., 2022) (twenty-sixth hold-out): 16 images as
196 patch tokens of 384 channels, bf16 on a GPU. Per step a random score per token, an
argsort and a gather keep 49 of the 196 (75 % masked); two pre-norm transformer blocks
(6 heads of 64, scaled-dot-product attention, MLP 384 -> 1,536 -> 384 with GELU) run on the
kept tokens, then a LayerNorm. The random keep set differs every step; the shapes do not.
One stream.

    traceinspect profile mae_masked_encoder_b16.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, HEADS, KEEP = 2, 6, 0.25


def build(device: torch.device, smoke: bool) -> Built:
    batch, tokens, d = (2, 16, 24) if smoke else (16, 196, 384)
    heads = 2 if smoke else HEADS
    dtype = low_precision(device)
    layer = lambda: nn.TransformerEncoderLayer(  # noqa: E731 - one line per block
        d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    encoder = nn.Sequential(*[layer() for _ in range(BLOCKS)], nn.LayerNorm(d))
    encoder = encoder.to(device, dtype).eval()
    kept = max(1, int(tokens * KEEP))

    @torch.no_grad()
    def step(x: Tensor) -> Tensor:
        score = torch.rand(x.shape[0], x.shape[1], device=x.device)
        keep = score.argsort(dim=1)[:, :kept]
        visible = torch.gather(x, 1, keep.unsqueeze(-1).expand(-1, -1, x.shape[2]))
        return encoder(visible)

    inputs = [(torch.randn(batch, tokens, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"MAE encoder, {BLOCKS} blocks d{d} on {kept}/{tokens} tokens, b{batch}",
        [encoder],
    )


if __name__ == "__main__":
    main(build, __doc__)
