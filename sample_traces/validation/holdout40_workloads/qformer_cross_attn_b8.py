"""A BLIP-2 Q-Former (Li et al., 2023: BERT-base sized, 32 learned queries reading a frozen
image encoder's tokens through cross-attention) cut to 4 layers, every layer with
cross-attention (BLIP-2's has it every other layer), for 8 images (fortieth hold-out): bf16 on a
GPU, eval mode (dropout off), no gradients. Inputs: the frozen ViT's output tokens (8, 257,
1024) (a CLS token and 16 x 16 patches of a ViT-L/14 at 224). On them BLIP-2's ``ln_vision``, a
LayerNorm(1024). The 32 learned query embeddings (32, 768) pass the Q-Former's embedding
LayerNorm(768) and are expanded over the batch. Each of the 4 post-norm BERT layers (d 768, 12
heads of 64): self-attention over the 32 queries (fused ``Linear(768, 2304)``,
``F.scaled_dot_product_attention``, ``Linear(768, 768)``, residual add, LayerNorm);
cross-attention to the 257 image tokens, the queries from ``Linear(768, 768)`` and the keys and
values projected from 1024 to 768 by a fused ``Linear(1024, 1536)`` (BLIP-2's ``encoder_width``
key / value projections), SDPA over the 257 tokens, ``Linear(768, 768)``, residual add,
LayerNorm; the query FFN ``Linear(768, 3072)``, GELU, ``Linear(3072, 768)``, residual add,
LayerNorm. The key / value projections of the 257 image tokens (8 x 257 rows of 1024 in each
layer) are the largest GEMMs; the queries' own work is on 256 rows. Then BLIP-2's language
projection ``Linear(768, 2560)`` (OPT-2.7B's width) to the soft visual prompts. Returns the
query outputs (8, 32, 768) and the prompts (8, 32, 2560), bf16 on a GPU.

    traceinspect profile qformer_cross_attn_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

QUERIES, IMAGE_TOKENS, LLM_WIDTH = 32, 257, 2560


class QFormerLayer(nn.Module):
    def __init__(self, d: int, heads: int, enc: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv, self.self_out, self.norm1 = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d)
        self.q, self.kv = nn.Linear(d, d), nn.Linear(enc, 2 * d)
        self.cross_out, self.norm2 = nn.Linear(d, d), nn.LayerNorm(d)
        self.up, self.down, self.norm3 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d)

    def split(self, t: Tensor) -> Tensor:
        b, s, d = t.shape
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def attend(self, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
        att = F.scaled_dot_product_attention(self.split(q), self.split(k), self.split(v))
        return att.transpose(1, 2).flatten(2)

    def forward(self, x: Tensor, image: Tensor) -> Tensor:
        x = self.norm1(x + self.self_out(self.attend(*self.qkv(x).chunk(3, dim=-1))))
        k, v = self.kv(image).chunk(2, dim=-1)
        x = self.norm2(x + self.cross_out(self.attend(self.q(x), k, v)))
        return self.norm3(x + self.down(F.gelu(self.up(x))))


class QFormer(nn.Module):
    def __init__(self, queries: int, d: int, heads: int, enc: int, layers: int, out: int) -> None:
        super().__init__()
        self.query_tokens = nn.Parameter(torch.randn(1, queries, d) * 0.02)
        self.ln_vision = nn.LayerNorm(enc)
        self.embed_norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(QFormerLayer(d, heads, enc) for _ in range(layers))
        self.language_proj = nn.Linear(d, out)

    def forward(self, image: Tensor) -> tuple[Tensor, Tensor]:
        image = self.ln_vision(image)
        x = self.embed_norm(self.query_tokens).expand(image.shape[0], -1, -1)
        for layer in self.layers:
            x = layer(x, image)
        return x, self.language_proj(x)


def build(device: torch.device, smoke: bool) -> Built:
    batch, queries, tokens, enc, d, heads, layers, out = (
        (2, 4, 9, 32, 32, 4, 2, 48)
        if smoke
        else (8, QUERIES, IMAGE_TOKENS, 1024, 768, 12, 4, LLM_WIDTH)
    )
    dtype = low_precision(device)
    model = QFormer(queries, d, heads, enc, layers, out).to(device, dtype).eval()

    @torch.no_grad()
    def step(image: Tensor) -> tuple[Tensor, Tensor]:
        return model(image)

    inputs = [(torch.randn(batch, tokens, enc, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"BLIP-2 Q-Former: {queries} queries, {layers} layers of self-attention + "
        f"cross-attention to {tokens} image tokens ({enc} -> {d}) + FFN, language projection to "
        f"{out}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
