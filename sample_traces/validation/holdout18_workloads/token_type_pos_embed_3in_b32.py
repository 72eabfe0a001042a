"""A BERT-style embedding layer (Devlin et al., 2019) and one encoder layer on 32 sequences of
128 tokens fed three int64 inputs, bf16 (eighteenth hold-out), inference. Three
``nn.Embedding`` lookups, the word ids in a 30522 x 256 table (15.6 MB), the token type ids
in a 2 x 256 table and the position ids in a 512 x 256 table, summed (two adds),
LayerNorm (dropout 0.1 in eval mode: no kernel); then one ``nn.TransformerEncoderLayer``
(d_model 256, 4 heads of 64, FFN 1024 with ReLU, post-norm, dropout 0.1, batch_first). In
eval mode under ``torch.no_grad()`` the layer takes PyTorch's fused fast path
(``torch._transformer_encoder_layer_fwd``: the QKV GEMM, the bias-and-rescale kernel, the
fused attention, the output GEMM, two residual adds with their LayerNorms, the FFN's two
GEMMs with the ReLU in the first one's epilogue). About 20 kernels (three gathers, two adds,
a LayerNorm; some 14 in the layer), the largest the FFN GEMMs over the 4096 tokens (2.1
GFLOP each): launch-bound. Inputs: the word ids (32 x 128, in the vocabulary), the token
type ids (32 x 128: 0 up to a per-sequence split point, 1 after it) and the position ids (32
x 128: 0 to 127 in the first input set, a per-sequence offset of 0 to 384 plus 0 to 127 in
the second, as for a window into a longer document). Returns the layer's output (32 x 128 x
256, bf16).

    traceinspect profile token_type_pos_embed_3in_b32.py
"""

from __future__ import annotations

import _path  # noqa: F401 - ../workloads on sys.path
import torch
from _common import Built, low_precision, main
from torch import Tensor, nn

VOCAB, TYPES, MAX_POSITIONS, HEADS, DROPOUT = 30522, 2, 512, 4, 0.1


class Embeddings(nn.Module):
    def __init__(self, vocab: int, d: int) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.token_type = nn.Embedding(TYPES, d)
        self.position = nn.Embedding(MAX_POSITIONS, d)
        for table in (self.word, self.token_type, self.position):
            nn.init.normal_(table.weight, std=0.02)
        self.norm = nn.LayerNorm(d)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, ids: Tensor, token_types: Tensor, positions: Tensor) -> Tensor:
        x = self.word(ids) + self.token_type(token_types) + self.position(positions)
        return self.dropout(self.norm(x))


def build(device: torch.device, smoke: bool) -> Built:
    batch, length, d, ffn, vocab = (2, 16, 32, 64, 100) if smoke else (32, 128, 256, 1024, VOCAB)
    dtype = low_precision(device)
    embed = Embeddings(vocab, d)
    layer = nn.TransformerEncoderLayer(d, HEADS, ffn, dropout=DROPOUT, batch_first=True)
    model = nn.Sequential(embed, layer).to(device=device, dtype=dtype).eval()

    @torch.no_grad()
    def step(ids: Tensor, token_types: Tensor, positions: Tensor) -> Tensor:
        return layer(embed(ids, token_types, positions))

    def make(max_offset: int) -> tuple[Tensor, ...]:
        ids = torch.randint(0, vocab, (batch, length), device=device)
        split = torch.randint(1, length, (batch, 1), device=device)
        arange = torch.arange(length, device=device)
        token_types = (arange >= split).long()
        offsets = torch.randint(0, max_offset + 1, (batch, 1), device=device)
        return ids, token_types, arange + offsets

    inputs = [make(0), make(MAX_POSITIONS - length)]
    description = (
        f"BERT embeddings (word {vocab} + type {TYPES} + position {MAX_POSITIONS}, summed, "
        f"LayerNorm, 3 int64 inputs) + TransformerEncoderLayer d{d} {HEADS} heads FFN {ffn}, "
        f"batch {batch} x {length}"
    )
    return Built(step, inputs, description, [model])


if __name__ == "__main__":
    main(build, __doc__)
