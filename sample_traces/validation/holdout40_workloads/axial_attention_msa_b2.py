"""MSA axial attention (the row-wise and column-wise gated self-attention of AlphaFold 2's
Evoformer, Jumper et al., 2021, without the pair bias; the axial layout of the MSA Transformer,
Rao et al., 2021, untied) in 2 blocks over 2 multiple sequence alignments of 32 sequences x 128
residues with 256 channels (fortieth hold-out): bf16 on a GPU, eval mode (dropout off), no
gradients. Each block, pre-norm with residual adds: row attention, the LayerNorm(256)'d MSA
viewed as 2 x 32 = 64 sequences of 128 residues, queries, keys and values from ``Linear(256,
256, bias=False)`` each, 8 heads of 32, ``F.scaled_dot_product_attention`` over the 128
residues, the output gated by the sigmoid of ``Linear(256, 256)`` of the normed input and
projected by ``Linear(256, 256)``; column attention, the same layout on the MSA transposed to 2
x 128 = 256 columns of 32 sequences (a transposed view: a contiguous copy for the LayerNorm, a
strided residual add after), attending over the 32 sequences; the transition, LayerNorm,
``Linear(256, 1024)``, ReLU, ``Linear(1024, 256)``. 8,192 positions of 256 channels: GEMMs of
8,192 rows, attention over short axes (128 and 32 long) with many batch-heads (512 and 2,048),
elementwise gating and normalization passes. Input: the MSA representation (2, 32, 128, 256).
Returns the updated (2, 32, 128, 256) representation (bf16 on a GPU).

    traceinspect profile axial_attention_msa_b2.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
import torch.nn.functional as F  # noqa: N812 - the usual name
from _common import Built, low_precision, main
from torch import Tensor, nn

BLOCKS, TRANSITION = 2, 4


class GatedAttention(nn.Module):
    """Gated self-attention along dim -2 of (..., n, d)."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(d)
        self.q, self.k, self.v = (nn.Linear(d, d, bias=False) for _ in range(3))
        self.gate, self.out = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x: Tensor) -> Tensor:
        *lead, n, d = x.shape
        x = self.norm(x).reshape(-1, n, d)
        q, k, v = (
            proj(x).view(-1, n, self.heads, d // self.heads).transpose(1, 2)
            for proj in (self.q, self.k, self.v)
        )
        att = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(-1, n, d)
        return self.out(torch.sigmoid(self.gate(x)) * att).view(*lead, n, d)


class AxialBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.row, self.col = GatedAttention(d, heads), GatedAttention(d, heads)
        self.transition = nn.Sequential(
            nn.LayerNorm(d), nn.Linear(d, TRANSITION * d), nn.ReLU(), nn.Linear(TRANSITION * d, d)
        )

    def forward(self, msa: Tensor) -> Tensor:
        msa = msa + self.row(msa)  # over residues: (b, seqs, res, d)
        msa = msa + self.col(msa.transpose(1, 2)).transpose(1, 2)  # over sequences
        return msa + self.transition(msa)


def build(device: torch.device, smoke: bool) -> Built:
    batch, seqs, res, d, heads = (1, 4, 8, 32, 4) if smoke else (2, 32, 128, 256, 8)
    dtype = low_precision(device)
    model = nn.Sequential(*(AxialBlock(d, heads) for _ in range(BLOCKS))).to(device, dtype).eval()

    @torch.no_grad()
    def step(msa: Tensor) -> Tensor:
        return model(msa)

    inputs = [(torch.randn(batch, seqs, res, d, device=device, dtype=dtype),) for _ in range(2)]
    return Built(
        step,
        inputs,
        f"MSA axial attention: {BLOCKS} blocks of gated row + column attention ({heads} heads) "
        f"+ transition over {seqs} sequences x {res} residues x {d}, b{batch}",
        [model],
    )


if __name__ == "__main__":
    main(build, __doc__)
