"""FT-Transformer on 256 rows of tabular data, d 192, bf16 (ninth hold-out): 16 numeric
features, each embedded by its own linear map (weights 16 x 192 and biases 16 x 192, applied
as one ``einsum('bf,fd->bfd')``), and 8 categorical features with vocabularies of 100 each,
embedded by one table of 800 rows (each feature's codes shifted by its offset, made at
build) plus a bias per feature; a learned CLS token is put in front (25 tokens per row).
Then 3 transformer encoder layers (``_models.EncoderLayer``: pre-LayerNorm, fused qkv, 8
heads of 24, SDPA, GELU MLP 192->768->192) and a head on the CLS token: LayerNorm, ReLU,
Linear 192->1. Inputs: numeric features (256 x 16) and categorical codes (256 x 8, int64);
returns 256 x 1.

    traceinspect profile tabular_transformer_b256.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from _models import encoder
from torch import Tensor, nn


class Tokenizer(nn.Module):
    def __init__(self, numeric: int, categorical: int, vocab: int, d: int) -> None:
        super().__init__()
        self.num_weight = nn.Parameter(torch.randn(numeric, d) * d**-0.5)
        self.num_bias = nn.Parameter(torch.randn(numeric, d) * d**-0.5)
        self.cat_table = nn.Embedding(categorical * vocab, d)
        self.cat_bias = nn.Parameter(torch.randn(categorical, d) * d**-0.5)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * d**-0.5)
        self.register_buffer("offsets", torch.arange(categorical) * vocab)

    def forward(self, x_num: Tensor, x_cat: Tensor) -> Tensor:
        num = torch.einsum("bf,fd->bfd", x_num, self.num_weight) + self.num_bias
        cat = self.cat_table(x_cat + self.offsets) + self.cat_bias
        cls = self.cls.expand(x_num.shape[0], -1, -1)
        return torch.cat([cls, num, cat], dim=1)


def build(device: torch.device, smoke: bool) -> Built:
    numeric, categorical, vocab, d, heads, layers, batch = (
        (4, 3, 10, 32, 4, 3, 8) if smoke else (16, 8, 100, 192, 8, 3, 256)
    )
    dtype = low_precision(device)
    tokenizer = Tokenizer(numeric, categorical, vocab, d)
    blocks = encoder(layers, d, heads, torch.float32)
    head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, 1))
    model = nn.ModuleList([tokenizer, blocks, head]).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(x_num: Tensor, x_cat: Tensor) -> Tensor:
        h = blocks(tokenizer(x_num, x_cat))
        return head(h[:, 0])

    inputs = [
        (
            torch.randn(batch, numeric, device=device, dtype=dtype),
            torch.randint(0, vocab, (batch, categorical), device=device),
        )
        for _ in range(2)
    ]
    description = (
        f"FT-Transformer, {numeric} numeric + {categorical} categorical features, "
        f"{layers} layers x d{d}, batch {batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
