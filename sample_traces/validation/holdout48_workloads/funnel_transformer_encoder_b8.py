"""A Funnel-Transformer encoder (Dai et al., 2020) classifying 8 sequences of 512 tokens
(forty-eighth hold-out: a transformer whose sequence is halved by mean-pooling the queries at
each block boundary, pooled queries attending over the unpooled keys and values): a 30,522-word
``nn.Embedding`` to d_model 768 plus learned absolute positions (512 x 768) and a LayerNorm
(the paper's relative positional attention and separate CLS are left out), then 3 blocks of 2
post-norm layers at 512, 256 and 128 tokens. Each layer: h = LayerNorm(q + Attention(q, x)),
then LayerNorm(h + MLP(h)); the attention is the project's ``_blocks.Attention`` in its
cross-attention form (``Linear(768, 768)`` to q from the queries, ``Linear(768, 1536)`` to k, v
from x, 12 heads of 64 through ``F.scaled_dot_product_attention``, ``Linear(768, 768)``), the
MLP ``_blocks.MLP`` (``Linear(768, 3072)``, GELU, ``Linear(3072, 768)``). In the first layer of
blocks 2 and 3 the queries are x mean-pooled with stride 2 along the sequence
(``F.avg_pool1d(x.transpose(1, 2), 2)``), so 256 queries attend over 512 keys and 128 over 256;
elsewhere q = x. Then a pooler ``Linear(768, 768)`` + tanh on the first token and
``Linear(768, 2)``. Some 230 GFLOP, about 80 kernels. bf16 on a GPU, eval mode, no gradients,
one stream. Input: token ids (8, 512) int64. Returns (8, 2) logits.

    traceinspect profile funnel_transformer_encoder_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import MLP, Attention
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, LAYERS_PER_BLOCK, CLASSES = 3, 2, 2


class FunnelLayer(nn.Module):
    def __init__(self, d: int, heads: int, ff: int, pool: bool) -> None:
        super().__init__()
        self.pool = pool
        self.attn = Attention(d, heads, cross=True)
        self.norm1 = nn.LayerNorm(d)
        self.mlp = MLP(d, ff, "gelu")
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x: Tensor) -> Tensor:
        q = F.avg_pool1d(x.transpose(1, 2), 2).transpose(1, 2) if self.pool else x
        h = self.norm1(q + self.attn(q, x))
        return self.norm2(h + self.mlp(h))


class Funnel(nn.Module):
    def __init__(self, vocab: int, seq: int, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq, d) * 0.02)
        self.norm = nn.LayerNorm(d)
        self.layers = nn.Sequential(
            *(
                FunnelLayer(d, heads, ff, pool=block > 0 and i == 0)
                for block in range(BLOCKS)
                for i in range(LAYERS_PER_BLOCK)
            )
        )
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, CLASSES)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.layers(self.norm(self.tokens(tokens) + self.pos))
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


def build(device: torch.device, smoke: bool) -> Built:
    batch, seq, vocab, d, heads, ff = (
        (2, 16, 100, 32, 2, 64) if smoke else (8, 512, 30522, 768, 12, 3072)
    )
    dtype = low_precision(device)
    model = Funnel(vocab, seq, d, heads, ff).to(device, dtype).eval()

    @torch.no_grad()
    def step(tokens: Tensor) -> Tensor:
        return model(tokens)

    inputs = [(torch.randint(0, vocab, (batch, seq), device=device),) for _ in range(2)]
    description = (
        f"Funnel-Transformer encoder, {BLOCKS} blocks x {LAYERS_PER_BLOCK} layers d{d}, "
        f"seq {seq} -> {seq >> (BLOCKS - 1)}, b{batch}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
