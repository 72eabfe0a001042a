"""An ESM-2 protein language model forward at the 35M configuration (Lin et al., 2023: a pre-norm
BERT-style encoder over amino-acid tokens with rotary position embeddings, no learned positions,
and a RoBERTa-style masked-LM head), the per-residue token logits of a padded batch (forty-third
hold-out): 8 sequences padded to 512 tokens (lengths 512 down to 320, fixed per input set at
build; the padding token 1), 33 tokens, 12 layers of d 480, 20 heads of 24, MLP 1920, bf16 on a
GPU (the logits' log-softmax in fp32), eval mode, no gradients. ``Embedding(33, 480)`` of the
tokens (padding rows zeroed by ``padding_idx``); the key-padding mask, tokens != padding, a
boolean (8, 1, 1, 512) broadcast over heads and queries, made each step from the tokens. Each
layer: the shared ``_blocks.PreNormAttention``, x + attention(LayerNorm(x)) with one
``Linear(480, 1440)`` to q, k, v, the rotary embedding on q and k (rotate-half layout, base
10,000, the (512, 24) cos and sin tables made at build, ``_blocks.rotary_tables``),
``F.scaled_dot_product_attention`` with the padding mask and ``Linear(480, 480)``; then the
shared ``_blocks.ResidualMLP``, x + ``Linear(1920, 480)``(GELU(``Linear(480, 1920)``(
LayerNorm(x)))). After the 12 layers a final LayerNorm; the LM head ``Linear(480, 480)`` +
GELU + LayerNorm + ``Linear(480, 33)``; the log-softmax over the 33 tokens in fp32. About 320
GFLOP over the batch. Input: the tokens (8, 512) int64. Returns the log-probabilities (8, 512,
33), fp32.

    traceinspect profile esm2_rotary_encoder_b8.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _blocks import PreNormAttention, ResidualMLP, rotary_tables
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, PAD, LAYERS = 33, 1, 12


class ESM2(nn.Module):
    def __init__(self, d: int, heads: int, length: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.attn = nn.ModuleList(PreNormAttention(d, heads) for _ in range(LAYERS))
        self.mlp = nn.ModuleList(ResidualMLP(d, 4 * d, "gelu") for _ in range(LAYERS))
        self.final_norm = nn.LayerNorm(d)
        self.head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d), nn.Linear(d, VOCAB))
        cos, sin = rotary_tables(length, d // heads)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, tokens: Tensor) -> Tensor:
        keep = (tokens != PAD)[:, None, None, :]  # (b, 1, 1, keys)
        x = self.embed(tokens)
        rope = (self.cos, self.sin)
        for attn, mlp in zip(self.attn, self.mlp, strict=True):
            x = mlp(attn(x, attn_mask=keep, rope=rope))
        return self.head(self.final_norm(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, d, heads = (2, 16, 32, 4) if smoke else (8, 512, 480, 20)
    dtype = low_precision(device)
    model = ESM2(d, heads, length).to(device, dtype).eval()

    @torch.no_grad()
    def step(tokens: Tensor) -> Tensor:
        return F.log_softmax(model(tokens).float(), dim=-1)

    inputs = []
    for _ in range(2):
        tokens = torch.randint(4, 24, (batch, length))  # the 20 standard amino acids
        tokens[:, 0] = 0  # <cls>
        lengths = torch.linspace(length, length * 5 // 8, batch).long()
        for row, n in enumerate(lengths.tolist()):
            tokens[row, n - 1] = 2  # <eos>
            tokens[row, n:] = PAD
        inputs.append((tokens.to(device),))
    return Built(
        step,
        inputs,
        f"ESM-2 encoder: {LAYERS} pre-norm layers d{d}, {heads} heads, rotary q/k, key-padding "
        f"mask, GELU MLP {4 * d}, masked-LM head over {VOCAB} tokens, b{batch} x {length}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
